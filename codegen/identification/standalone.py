"""The regressor as standalone C: ``Regressor.export_c(name, output_dir)`` writes
``<name>_regressor.h`` (the layout, the sizes as macros, the name tables, the functions)
and ``<name>_regressor.c`` (the same kernels ``generate`` compiles, with the tables) and an
example program, from templates/export/regressor*.j2. All files are written or none
(codegen.pipeline.files.write_all)."""
from __future__ import annotations

import math
from pathlib import Path

from ..emit.render import render
from ..pipeline.files import prepare_dir, write_all
from .compiled import regressor_source

__all__ = ["export_regressor_c"]


def _string(text) -> str:
    """text as the inside of a C string literal (ASCII; quotes and backslashes escaped)."""
    out = str(text).replace("\\", "\\\\").replace('"', '\\"')
    return "".join(ch if 32 <= ord(ch) < 127 else "?" for ch in out)


def _number(v: float) -> str:
    """A double's C literal that reads back to the same double (repr is shortest exact)."""
    if not math.isfinite(float(v)):
        raise ValueError(f"a parameter's value {v} is not finite")
    return repr(float(v))


def export_regressor_c(reg, name: str, output_dir="generated", driver: bool = True) -> dict:
    """Write reg's regressor as C into output_dir/name/: {file name: Path}; driver: also
    ``<name>_regressor_driver.c``, a program that prints Y and Y_b at the x and u' of its
    command line."""
    if not name.isidentifier():
        raise ValueError(f"the export's name {name!r} must be a C identifier")
    names = [str(s) for s in reg.parameters]
    tables = {
        "strings": [("state_names", [_string(s) for s in reg.state_names]),
                    ("speed_names", [_string(s) for s in reg.speeds]),
                    ("parameter_names", [_string(s) for s in names]),
                    ("base_names", [_string(s) for s in reg.base_names]),
                    ("base_combinations", [_string(b) for b in reg.base])],
        "numbers": [("parameter_values", [_number(reg.values[s]) for s in reg.parameters]),
                    ("base_values", [_number(v) for v in reg.base_values])]}
    source = regressor_source(name, reg.model.name, reg.n, reg.nx, reg.programs(), tables)
    macro = name.upper()
    header = render("export/regressor.h.j2", name=name, model=reg.model.name, n=reg.n,
                    nx=reg.nx, p=len(names), nb=reg.rank, guard=f"{macro}_REGRESSOR_H",
                    macro=macro, constrained=reg.constrained)
    files = {f"{name}_regressor.h": header, f"{name}_regressor.c": source}
    if driver:
        files[f"{name}_regressor_driver.c"] = render("export/regressor_driver.c.j2", name=name)
    target = prepare_dir(output_dir, name)
    write_all(target, files)
    return {f: Path(target) / f for f in files}
