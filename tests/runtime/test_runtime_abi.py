"""The runtime library and the model descriptor: thin models, the ABI check, fused builds,
options in the cache key, and stage boundaries as values."""
import ctypes
import dataclasses
import json
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

from codegen import CacheError, GibbsAppellMethod, abi, examples as ex, generate, load
from codegen.abi import ABI_VERSION, METHODS, STATUS
from codegen.pipeline.compiler import compile_library
from codegen.abi import RUNTIME_DIR
from codegen.emit.render import cython_contract
from codegen.pipeline.files import sha256

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pend1(tmp_path_factory):
    model = ex.n_pendulum_on_cart(1)
    ga = GibbsAppellMethod(**model.kwargs)
    out = tmp_path_factory.mktemp("abi")
    return model, ga, out, generate(ga, "pend1", output_dir=out)


def test_the_model_file_holds_only_the_model(pend1):
    model, ga, out, mod = pend1
    text = (mod.source_dir / "pend1.c").read_text()
    # the model: eval, tree, inverse dynamics, its Jacobian and descriptor
    assert len(text.splitlines()) < 240
    for runtime_only in ("dopri5", "cholesky", "cg_svd", "cg_integrate_to"):
        assert runtime_only not in text.lower()
    assert "const cg_model *pend1_model(void)" in text


def test_the_contract_has_one_definition():
    """Status codes and methods come from cg_model.h: the compiled runtime agrees."""
    from codegen.runtime import _runtime
    assert _runtime.ABI_VERSION == ABI_VERSION
    assert _runtime.METHODS == METHODS == {"rk4": 0, "dopri5": 1, "rosenbrock": 2, "rosw": 3,
                                           "bdf": 4, "ali3p": 5}
    for code, text in STATUS.items():
        assert _runtime.status_message(code) == text


def test_python_reads_the_header_as_the_compiler_does(tmp_path):
    """codegen.abi's reading of cg_model.h's lists (texts joined from constants, macros
    expanded) is what a C program built on the header prints: a list Python could not
    parse, or parsed otherwise, fails here."""
    cc = shutil.which("gcc") or shutil.which("cc")
    subprocess.run([cc, "-std=c99", "-Wall", "-Werror", f"-I{RUNTIME_DIR}",
                    str(ROOT / "tests" / "support" / "c" / "contract_dump.c"), "-o", "dump"],
                   cwd=tmp_path, check=True)
    lines = subprocess.run(["./dump"], cwd=tmp_path, check=True, capture_output=True,
                           text=True).stdout.splitlines()
    bare = "".join                                           # whitespace is not the contract
    c = {}
    for line in lines:
        what, rest = line.split(" ", 1)
        c.setdefault(what, []).append(rest)
    assert c["status"] == [f"{s} {v} {abi.STATUS[v]}" for s, v in abi.STATUS_CODE.items()]
    assert c["flag"] == [f"{s} {v}" for s, v in abi.FLAGS.items()]
    assert c["property"] == [f"{s} {v}" for s, v in abi.PROPERTIES.items()]
    assert c["method"] == [f"{m.symbol} {m.id} {m.name} {sum(abi.PROPERTIES[p] for p in m.properties)}"
                           f" {sum(abi.FLAGS[f] for f in m.needs)}" for m in abi.METHOD_INFO.values()]
    assert [bare(f.split()) for f in c["function"]] == \
        [bare(f"{f.kind} ({f.signature})".split()) for f in abi.FUNCTIONS.values()]
    assert [bare(f.split()) for f in c["callback"]] == \
        [bare(f"{f.kind} ({f.signature})".split()) for f in abi.CALLBACKS.values()]
    assert [bare(e.split()) for e in c["entry"]] == \
        [bare(f"{e.type} {e.name} ({', '.join(p.type + ' ' + p.name for p in e.parameters)})"
              .split()) for e in abi.RUNTIME.values()]
    for line in c["constant"]:
        name, value = line.split()
        assert float(value) == abi.CONSTANTS[name], name


def test_the_cython_declarations_are_rendered_from_the_header():
    """_runtime.pyx declares the contract through codegen/_contract.pxi, the rendering
    of cg_model.h; after a change of the header, render it again (and rebuild):
        python -c "import codegen.emit.render as e; open('codegen/runtime/_contract.pxi', 'w').write(e.cython_contract())"
    """
    assert (ROOT / "codegen" / "runtime" / "_contract.pxi").read_text() == cython_contract()


def test_the_compiled_runtime_has_every_method_of_the_table():
    """The runtime's method table (cg_integrate.c) and lookups agree with the header's
    list for every method, and know no other."""
    from codegen.runtime import _runtime
    lib = ctypes.CDLL(_runtime.__file__)
    lib.cg_method_name.restype = ctypes.c_char_p
    for name, m in abi.METHOD_INFO.items():
        assert lib.cg_method_name(m.id).decode() == name
        assert lib.cg_method_properties(m.id) == sum(abi.PROPERTIES[p] for p in m.properties)
    assert lib.cg_method_name(len(METHODS)) is None and lib.cg_method_properties(-1) == -1


def test_generated_functions_take_the_header_signatures(pend1):
    """function.j2 renders each kind's parameters from the table: the model's C names
    them as cg_model.h does (and the C compiler checks the descriptor's pointers)."""
    model, ga, out, mod = pend1
    text = (mod.source_dir / "pend1.c").read_text()
    for kind in ("eval", "tree"):
        assert f"pend1_{kind}({abi.FUNCTIONS[kind].signature})" in text


def _foreign_library(folder, abi: int, with_descriptor=True):
    """A library whose descriptor claims another ABI (or that has none)."""
    body = ("static void ev(double t, const double *x, const double *p, const double *r, "
            "double *qd, double *M, double *F, double *A, double *Bd, double *S) {}\n"
            "static const cg_model d = {%d, \"pend1\", 1, 1, 2, 0, 0, 0, 0, 1, 1, 1e-9, 0, 0, 0, 0,"
            " ev, 0, 0, 0, 0, 0};\nconst cg_model *pend1_model(void) { return &d; }\n" % abi)
    text = '#include "cg_model.h"\n' + (body if with_descriptor else "int unrelated;\n")
    return compile_library({"foreign.c": text}, ["foreign.c"], "foreign", ["-O0", "-w"], folder,
                           include_dirs=[RUNTIME_DIR])


def _swap_library(mod, built, name):
    """Put built in place of mod's library (under a new name: a process never loads a
    path twice), the manifest updated to match: a consistent cache of a foreign library."""
    folder = mod.source_dir
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["files"][manifest["extension"]]
    (folder / manifest["extension"]).unlink()
    target = folder / f"pend1_{name}.so"
    built.rename(target)
    manifest["extension"] = target.name
    manifest["files"][target.name] = sha256(target)
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_another_abi_is_refused_and_rebuilt(pend1, tmp_path):
    model, ga, out, mod = pend1
    again = generate(ga, "pend1", output_dir=tmp_path)
    _swap_library(again, _foreign_library(tmp_path, ABI_VERSION + 7), "abi")
    with pytest.raises(CacheError, match=f"built for runtime ABI {ABI_VERSION + 7}, this runtime "
                                         f"is ABI {ABI_VERSION}: regenerate"):
        load(again.source_dir)
    rebuilt = generate(ga, "pend1", output_dir=tmp_path)           # the cache rebuilds it
    x, p = np.array([0.1, 0.2, 0.3, 0.4]), np.ones(4)
    assert np.array_equal(rebuilt.rhs(0.0, x, p, [0.0]), mod.rhs(0.0, x, p, [0.0]))


def test_a_library_without_descriptor_is_named(pend1, tmp_path):
    model, ga, out, mod = pend1
    again = generate(ga, "pend1", output_dir=tmp_path)
    _swap_library(again, _foreign_library(tmp_path, ABI_VERSION, with_descriptor=False), "none")
    with pytest.raises(ImportError, match=r"pend1_none\.so has no descriptor pend1_model\(\)"):
        load(again.source_dir)


@pytest.mark.parametrize("name", ["pendulum3", "four_bar"])
def test_fused_build_equals_the_thin_one(tmp_path, name):
    """The runtime compiled into the model gives the same bits as the shared runtime."""
    model = ex.n_pendulum_on_cart(3) if name == "pendulum3" else ex.four_bar()
    ga = GibbsAppellMethod(**model.kwargs)
    thin = generate(ga, name, output_dir=tmp_path / "thin")
    fused = generate(ga, name, output_dir=tmp_path / "fused", fused=True)
    assert fused.dynamics.fused and not thin.dynamics.fused and fused.key != thin.key
    vals = dict(model.parameter_values, baumgarte_alpha=5.0, baumgarte_beta=5.0)
    p = np.array([vals[c] for c in thin.constants])
    x0 = np.array(model.initial_state, dtype=float)
    r = [0.2] if thin.specifieds else None
    if thin.nc:
        x0 = thin.project(x0, p)
        assert np.array_equal(fused.project(x0, p), thin.project(x0, p))
        assert np.array_equal(fused.constraint_forces(0.0, x0, p), thin.constraint_forces(0.0, x0, p))
    assert np.array_equal(fused.rhs(0.0, x0, p, r), thin.rhs(0.0, x0, p, r))
    for method in METHODS:
        if method == "ali3p" and not thin.nc:
            continue                    # holonomic constraints only (test_iftomm)
        a = thin.simulate((0, 1.0), x0, p, r, method=method, dt=1e-3)
        b = fused.simulate((0, 1.0), x0, p, r, method=method, dt=1e-3)
        assert a.success and b.success and a.nsteps == b.nsteps
        assert np.array_equal(a.x, b.x), method


def test_every_option_is_in_the_key(pend1, tmp_path):
    """A build with other options is another library, never the cached one."""
    model = ex.n_pendulum_on_cart(3)
    ga = GibbsAppellMethod(**model.kwargs)
    default = generate(ga, "opts", output_dir=tmp_path)
    keys = {default.key}
    for kw in (dict(recursive=False), dict(recursive=False, unrolled_limit=0), dict(fused=True), dict(jacobian=False),
               dict(rank_rtol=1e-7), dict(flags=("-O1",))):
        mod = generate(ga, "opts", output_dir=tmp_path, **kw)
        assert mod.key not in keys, kw
        keys.add(mod.key)
    assert generate(ga, "opts", output_dir=tmp_path, recursive=False).manifest["solver"] \
        .startswith("unrolled")
    assert default.manifest["solver"].startswith("articulated-body")


def test_options_hold_the_only_defaults():
    """generate, export_c and export_fmu take each option's default from Options."""
    import inspect
    from codegen import Options, export_c, export_fmu
    defaults = {f.name: f.default for f in dataclasses.fields(Options)}
    for entry in (generate, export_c, export_fmu):
        given = {n: p.default for n, p in inspect.signature(entry).parameters.items()
                 if n in defaults}
        assert given and given == {n: defaults[n] for n in given}, entry.__name__
    assert Options(flags=None) == Options()


def test_stages_are_values_without_cycles():
    """The neutral equations are frozen; the stages before the build never load the
    compiled runtime."""
    from codegen import equations_of
    eq = equations_of(GibbsAppellMethod(**ex.dumbbell().kwargs))
    with pytest.raises(dataclasses.FrozenInstanceError):
        eq.tree = None
    code = ("import sys, codegen.formulation.appell, codegen.equations.equations_of_motion, codegen.algorithms.plan, codegen.emit.sources, "
            "codegen.pipeline.build, codegen.pipeline.cache, codegen.pipeline.compiler, codegen.export.standalone, codegen.__main__\n"
            "assert 'codegen.runtime._runtime' not in sys.modules, 'the runtime was imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name", ["chain2", "four_bar"])
def test_functions_in_parts_equal_whole_ones(tmp_path, monkeypatch, name):
    """A large function is emitted in parts over a scratch array (compile time); forced
    on small models here, the results are bit for bit those of whole functions."""
    import codegen.emit.layout as emit
    model = ex.spatial_chain(2) if name == "chain2" else ex.four_bar()
    ga = GibbsAppellMethod(**model.kwargs)
    whole = generate(ga, name, output_dir=tmp_path / "whole")
    monkeypatch.setattr(emit, "PART_LIMIT", 10)
    monkeypatch.setattr(emit, "PART_STATEMENTS", 7)
    monkeypatch.setitem(emit.PART_OPERATIONS, "eval", 10)      # eval is parted by operations
    monkeypatch.setattr(emit, "OPERATION_PART_STATEMENTS", 7)
    monkeypatch.setattr(emit, "TU_STATEMENTS", 40)     # the parts in files of their own
    parted = generate(ga, name, output_dir=tmp_path / "parted")
    text = (parted.source_dir / f"{name}.c").read_text()
    assert f"{name}_eval_part3(" in text and "double w[" in text
    assert len(list(parted.source_dir.glob(f"{name}_part*.c"))) >= 2
    assert "_part" not in (whole.source_dir / f"{name}.c").read_text()
    vals = dict(model.parameter_values, baumgarte_alpha=5.0, baumgarte_beta=5.0)
    p = np.array([vals[c] for c in whole.constants])
    x = np.array(model.initial_state, dtype=float) + 0.05
    r = np.full(len(whole.specifieds), 0.3)
    if whole.nc:
        x, x_parted = whole.project(x, p), parted.project(x, p)
        assert np.array_equal(x_parted, x)
        assert np.array_equal(parted.residuals(0.0, x, p), whole.residuals(0.0, x, p))
    else:
        assert np.array_equal(parted.jacobian(0.0, x, p, r), whole.jacobian(0.0, x, p, r))
    assert np.array_equal(parted.rhs(0.0, x, p, r), whole.rhs(0.0, x, p, r))


def test_default_jacobian_only_while_small(tmp_path, monkeypatch):
    """jacobian=None (the default) skips a Jacobian whose program would be large, and
    says so; jacobian=True builds it whatever its size."""
    import codegen.algorithms.jacobian as jac
    model = ex.n_pendulum_on_cart(2)
    ga = GibbsAppellMethod(**model.kwargs)
    p = np.array([model.parameter_values[c] for c in sorted(model.parameter_values)])
    monkeypatch.setattr(jac, "AUTO_LIMIT", 5)
    monkeypatch.setattr(jac, "AUTO_RATIO", 0.01)
    skipped = generate(ga, "auto_jac", output_dir=tmp_path / "auto")
    forced = generate(ga, "auto_jac", output_dir=tmp_path / "forced", jacobian=True)
    assert skipped.manifest["jacobian"] is False and forced.manifest["jacobian"] is True
    p = skipped.parameters(model.parameter_values)
    x = np.array(model.initial_state, dtype=float)
    with pytest.raises(ValueError, match="regenerate it with jacobian=True"):
        skipped.jacobian(0.0, x, p, [0.0])
    assert forced.jacobian(0.0, x, p, [0.0]).shape == (6, 6)
    with pytest.raises(TypeError, match="jacobian must be None, True or False"):
        generate(ga, "auto_jac", output_dir=tmp_path, jacobian="yes")
