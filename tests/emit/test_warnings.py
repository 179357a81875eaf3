"""A generated model with its Jacobian compiles with every warning an error: no definition
left unread (codegen.programs.program.make_program), no load of B's entries that a column
group's body does not read (codegen.emit.column_loops)."""
import os
import shutil
import subprocess

import pytest

from codegen import GibbsAppellMethod, Options
from codegen.pipeline.build import model_sources
from codegen.robots import from_urdf
from robot_oracle import shared

RUNTIME = os.path.join(os.path.dirname(__file__), "..", "..", "templates", "runtime")


def test_hyq_with_its_jacobian_compiles_without_a_warning(tmp_path):
    """HyQ's derivative program had 12 definitions whose reader was found equal to an
    earlier one, and its column solve loaded the entries of its four groups in the first
    body too: 72 unused variables under -Wall, each on its own an error here."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    model = from_urdf(shared("hyq"))
    _, src = model_sources(GibbsAppellMethod(**model.kwargs), "hyq_warn", model.constants,
                           model.specifieds, options=Options(jacobian=True))
    text = "".join(src.files[f] for f in src.c_files)
    assert "hyq_warn_columns(" in text and "_g4" in text     # the column groups' bodies
    for name, body in src.files.items():
        (tmp_path / name).write_text(body)
    for f in src.c_files:
        run = subprocess.run([cc, "-std=c99", "-fsyntax-only", "-Wall", "-Werror",
                              "-I", str(tmp_path), "-I", RUNTIME, str(tmp_path / f)],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[:2000]
