"""The fault campaign: inputs that used to give a silently wrong answer or a crash,
each now a right answer or a clear exception (one test per case)."""
import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from hypothesis import HealthCheck, given, settings, strategies as st

from codegen import (BuildError, CacheError, DynamicsError, GibbsAppellMethod, examples as ex,
                     export_c, export_fmu, generate, load)
from helpers import one_link_pendulum


X = np.array([0.1, 1.2, 0.3, 0.5, -0.4, 2.0])
P = np.array([1.0, 0.5, 9.81])          # the rolling disk's m, r, g


# -- 1. byte order ------------------------------------------------------------------
def test_big_endian_arrays_are_read_right(disk):
    big_x, big_p = X.astype(">f8"), P.astype(">f8")
    ref = disk.rhs(0.0, X, P)
    assert np.array_equal(disk.rhs(0.0, big_x, big_p), ref)
    assert np.array_equal(disk.mass_matrix(0.0, big_x, big_p), disk.mass_matrix(0.0, X, P))
    assert np.array_equal(disk.forcing(0.0, big_x, big_p), disk.forcing(0.0, X, P))
    a = disk.simulate((0, 1), big_x, big_p, t_eval=np.array([0.5, 1.0], dtype=">f8"))
    b = disk.simulate((0, 1), X, P, t_eval=[0.5, 1.0])
    assert a.success and np.array_equal(a.x, b.x)
    Xs = np.tile(X, (3, 1))
    assert np.array_equal(disk.rhs_batch(0.0, Xs.astype(">f8"), big_p), disk.rhs_batch(0.0, Xs, P))
    assert np.array_equal(disk.simulate_batch((0, 1), Xs.astype(">f8"), big_p)[1],
                          disk.simulate_batch((0, 1), Xs, P)[1])
    with pytest.raises(ValueError, match="native byte order"):
        disk.rhs(0.0, X, P, out=np.empty(6, dtype=">f8"))
    with pytest.raises(ValueError, match="native byte order"):
        disk.rhs_batch(0.0, Xs, P, out=np.empty((3, 6), dtype=">f8"))


# -- 4, 16. constants, specifieds, options ----------------------------------------------
def test_duplicate_constants_and_bad_options_are_refused(tmp_path):
    model = ex.n_pendulum_on_cart(1)
    ga = GibbsAppellMethod(**model.kwargs)
    g = sm.Symbol("g")
    consts = sorted(model.constants, key=str)
    with pytest.raises(ValueError, match="constants name g more than once"):
        generate(ga, "dup", constants=[g] + consts, output_dir=tmp_path)
    with pytest.raises(ValueError, match=r"rank_rtol must be a number in \(0, 1\), got -1"):
        generate(ga, "dup", output_dir=tmp_path, rank_rtol=-1)
    F, unused = me.dynamicsymbols("F w")
    with pytest.warns(UserWarning, match=r"specified input w\(t\) does not appear"):
        mod = generate(ga, "unused_input", specifieds=[F, unused], output_dir=tmp_path)
    assert mod.specifieds == ["F", "w"]
    assert not list(tmp_path.glob("dup"))


# -- 6, 16. the cache -------------------------------------------------------------------
def _damage(path, how):
    """Damage a cached file as a crash or a bad disk would, through a new inode: this
    process may have the library mapped, and truncating a mapped file in place would
    make the process itself die of SIGBUS when it next touches those pages."""
    data = path.read_bytes()
    path.unlink()
    path.write_bytes({"half": data[:len(data) // 2], "empty": b"", "short": data[:100],
                      "flipped": data[:-9] + bytes(b ^ 0xFF for b in data[-9:])}[how])


@pytest.mark.parametrize("how", ["half", "empty", "short", "flipped"])
def test_damaged_cache_files_are_rebuilt_or_named(tmp_path, how):
    """Each cached file damaged in turn: load names it (never hands a damaged library to
    the loader, which used to crash the interpreter), generate rebuilds it."""
    model = ex.n_pendulum_on_cart(1)
    ga = GibbsAppellMethod(**model.kwargs)
    good = generate(ga, "cached", output_dir=tmp_path)
    x, p = np.array([0.1, 0.2, 0.3, 0.4]), np.ones(4)
    ref = good.rhs(0.0, x, p, [0.5])
    folder = good.source_dir
    for fname in ["cached.c", "cached.h", good.manifest["extension"], "manifest.json"]:
        _damage(folder / fname, how)
        match = "manifest" if fname == "manifest.json" else fname
        with pytest.raises(CacheError, match=match):
            load(folder)
        again = generate(ga, "cached", output_dir=tmp_path)
        assert np.array_equal(again.rhs(0.0, x, p, [0.5]), ref)
        libraries = list(folder.glob("cached_*.so"))
        assert len(libraries) == 1              # earlier builds' libraries are cleaned


def test_damaged_library_in_a_subprocess_does_not_crash(tmp_path):
    """The old failure was a Bus error when the dynamic loader mapped a truncated library."""
    import subprocess
    import sys
    model = ex.n_pendulum_on_cart(1)
    good = generate(GibbsAppellMethod(**model.kwargs), "trunc", output_dir=tmp_path)
    _damage(good.source_dir / good.manifest["extension"], "half")
    code = (f"from codegen import load, CacheError\ntry:\n    load({str(good.source_dir)!r})\n"
            f"except CacheError as e:\n    print('named:', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and "named:" in out.stdout and "does not match" in out.stdout


# -- 7, 8. names --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["math", "stddef", "stdio", "limits"])
def test_model_names_like_system_headers_build(tmp_path, name):
    mod = generate(GibbsAppellMethod(**ex.n_pendulum_on_cart(1).kwargs), name, output_dir=tmp_path)
    assert mod.name == name


@pytest.mark.parametrize("name,message", [
    ("fmi2Functions", "taken by the files shipped beside a model"),
    ("cg_model", "taken by the files shipped beside a model"),
    ("a" * 230, "230 characters, more than 64"),
    ("int", "C/C\\+\\+ keyword"),
])
def test_model_names_that_cannot_work_are_refused(tmp_path, name, message):
    with pytest.raises(ValueError, match=message):
        generate(GibbsAppellMethod(**ex.n_pendulum_on_cart(1).kwargs), name, output_dir=tmp_path)
    assert not any(tmp_path.iterdir())


def _pendulum_with_constants(names):
    """A pendulum whose mass, length and gravity carry the given names."""
    kw, s = one_link_pendulum(names)
    return GibbsAppellMethod(**kw), [s.m, s.l, s.g]


@pytest.fixture(scope="module")
def reference_pendulum(tmp_path_factory):
    ga, consts = _pendulum_with_constants(["m", "l", "g"])
    return generate(ga, "ref_pend", constants=consts, output_dir=tmp_path_factory.mktemp("ref"))


_GENERATED = ["D", "A", "B", "Bd", "S", "f", "fq", "ud", "qd", "M", "F", "x", "p", "r", "dx",
              "z0", "z1", "cg_s0", "cg_c0", "a0", "e0", "u0", "main", "descriptor", "state_names",
              "NULL", "sin", "cos", "sqrt", "double", "x_q", "p_m"]


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_GENERATED), min_size=3, max_size=3, unique=True))
def test_user_names_never_clash_with_generated_names(reference_pendulum, tmp_path_factory, names):
    """Constants named like the generator's own identifiers (arrays, temporaries, C
    keywords, library functions) compile and compute the same as plain names."""
    ga, consts = _pendulum_with_constants(names)
    mod = generate(ga, "clash", constants=consts, output_dir=tmp_path_factory.mktemp("clash"))
    x, p = np.array([0.7, -0.3]), np.array([1.3, 0.8, 9.81])
    # names order SymPy's terms, and so the last bits
    assert np.allclose(mod.rhs(0.0, x, p), reference_pendulum.rhs(0.0, x, p), rtol=1e-14, atol=0)
    code = (mod.source_dir / "clash.c").read_text()
    for n in names:        # each appears in C only prefixed, or inside a comment or a string
        assert f"const double p_{n} = " in code


def test_a_constant_named_t_is_time_and_refused(tmp_path):
    ga, consts = _pendulum_with_constants(["m", "t", "g"])
    with pytest.raises(ValueError, match="constant t is SymPy's time symbol"):
        generate(ga, "named_t", constants=consts, output_dir=tmp_path)


# -- 9, 10, 11. the exporters ---------------------------------------------------------------
def test_failed_fmu_build_keeps_its_sources(tmp_path):
    ga = GibbsAppellMethod(**ex.n_pendulum_on_cart(1).kwargs)
    with pytest.raises(BuildError) as err:
        export_fmu(ga, "badflags", tmp_path, flags=("-fno-such-option-anywhere",))
    folder = tmp_path / "badflags.fmu-failed-build"
    assert str(folder) in str(err.value) and (folder / "badflags.c").is_file()
    assert not (tmp_path / "badflags.fmu").exists()


@pytest.mark.parametrize("value,message", [
    (float("nan"), "start value of 'q1' must be finite, got nan"),
    (float("inf"), "start value of 'q1' must be finite, got inf"),
    ("abc", "start value of 'q1' must be a number, got 'abc'"),
])
def test_fmu_start_values_are_checked(tmp_path, value, message):
    ga = GibbsAppellMethod(**ex.n_pendulum_on_cart(1).kwargs)
    with pytest.raises(ValueError, match=message):
        export_fmu(ga, "sv", tmp_path, start_values={"q1": value})
    assert not list(tmp_path.glob("*.fmu"))


def test_export_c_writes_all_files_or_none(tmp_path):
    ga = GibbsAppellMethod(**ex.n_pendulum_on_cart(1).kwargs)
    folder = export_c(ga, "allornone", tmp_path)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    (folder / "allornone_driver.c").unlink()
    (folder / "allornone_driver.c").mkdir()           # something in the way
    (folder / "allornone.c").write_text("/* an older export */\n")
    with pytest.raises(IsADirectoryError, match="allornone_driver.c"):
        export_c(GibbsAppellMethod(**ex.n_pendulum_on_cart(2).kwargs), "allornone", tmp_path)
    assert (folder / "allornone.c").read_text() == "/* an older export */\n"
    assert (folder / "allornone.h").read_bytes() == before["allornone.h"]
    assert not list(folder.glob(".*.tmp"))


def test_a_write_that_fails_midway_leaves_the_older_file(tmp_path):
    """One helper writes every file: a crash mid-write leaves the older file whole and
    no temporary behind."""
    from codegen.pipeline.files import atomic_path, write_atomic
    target = tmp_path / "manifest.json"
    write_atomic(target, "older\n")
    with pytest.raises(RuntimeError, match="crash"):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"half of a ne")
            raise RuntimeError("crash")
    assert target.read_text() == "older\n" and [p.name for p in tmp_path.iterdir()] == [target.name]


def test_an_fmu_whose_zip_fails_midway_leaves_the_older_fmu(tmp_path, monkeypatch):
    import codegen.export.standalone as export

    def no_compile(files, c_files, library, flags, target, **kw):   # the zip is under test
        (target / "lib.so").write_bytes(b"\x7fELF")
        return target / "lib.so"

    def crash():
        raise RuntimeError("crash while the binary is added")
    monkeypatch.setattr(export, "compile_library", no_compile)
    monkeypatch.setattr(export, "_platform", crash)
    (tmp_path / "zipped.fmu").write_bytes(b"an older FMU")
    with pytest.raises(RuntimeError, match="crash"):
        export_fmu(GibbsAppellMethod(**ex.n_pendulum_on_cart(1).kwargs), "zipped", tmp_path)
    assert (tmp_path / "zipped.fmu").read_bytes() == b"an older FMU"
    assert [p.name for p in tmp_path.iterdir()] == ["zipped.fmu"]


# -- 12. what failed, named -------------------------------------------------------------------
def test_overflow_and_singular_kinematics_are_told_apart(tmp_path):
    ga, consts = _pendulum_with_constants(["m", "l", "g"])
    mod = generate(ga, "overflow", constants=consts, output_dir=tmp_path)
    with pytest.raises(DynamicsError, match="non-finite result: the equations overflow"):
        mod.rhs(0.0, [0.3, 0.1], [1.0, 1e308, 9.81])
    q, u = me.dynamicsymbols("q u")
    m = sm.Symbol("m")
    N = me.ReferenceFrame("N")
    P = me.Point("P")
    P.set_vel(N, q.diff() * N.x)
    sing = GibbsAppellMethod(N, [q], [u], kd_eqs=[u - sm.sin(q) * q.diff()],
                             bodies=[me.Particle("p", P, m)])
    mod = generate(sing, "singular_kd", output_dir=tmp_path)
    assert np.isfinite(mod.rhs(0.0, [0.5, 1.0], [2.0])).all()
    with pytest.raises(DynamicsError, match="q' is not finite: the kinematic equations are singular"):
        mod.rhs(0.0, [0.0, 1.0], [2.0])


# -- 13. no compiler ----------------------------------------------------------------------------
def test_no_compiler_is_one_clear_message(tmp_path, monkeypatch):
    import codegen.pipeline.compiler as compiler
    monkeypatch.setattr(compiler, "c_compiler", lambda: "no-such-cc-anywhere")
    with pytest.raises(BuildError, match="no C compiler: looked for 'no-such-cc-anywhere'.*"
                                         "apt-get install build-essential"):
        generate(GibbsAppellMethod(**ex.n_pendulum_on_cart(1).kwargs), "nocc", output_dir=tmp_path,
                 force=True)


# -- the boundary, at random ---------------------------------------------------------------------
_KINDS = ["f8", "<f8", ">f8", "f4", "i8", "c16", "O", "strided", "readonly", "list"]


def _array(values, kind):
    v = np.asarray(values, dtype=float)
    if kind == "strided":
        wide = np.zeros(2 * len(v))
        wide[::2] = v
        return wide[::2]
    if kind == "readonly":
        v = v.copy()
        v.flags.writeable = False
        return v
    if kind == "list":
        return list(v)
    return v.astype(kind)


def _outcome(result):
    """A run's status and its states' bits (a failed run's status is its answer)."""
    return result.status, result.x.tobytes()


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind_x=st.sampled_from(_KINDS), kind_p=st.sampled_from(_KINDS),
       n_x=st.sampled_from([6, 5, 7]), poison=st.sampled_from([None, np.nan, np.inf, -np.inf]),
       where=st.integers(0, 5), fn=st.sampled_from(["rhs", "mass_matrix", "forcing", "rhs_batch",
                                                     "simulate", "jacobian",
                                                     "simulate_batch"]))
def test_boundary_gives_the_right_answer_or_an_exception(disk, kind_x, kind_p, n_x, poison,
                                                         where, fn):
    """Random dtypes, byte orders, strides, lengths, non-finite entries and read-only
    buffers: the result equals the native call, or a Python exception is raised."""
    x = np.resize(X, n_x).copy()
    if poison is not None:
        x[where % n_x] = poison
    try:
        xa, pa = _array(x, kind_x), _array(P, kind_p)
    except (TypeError, ValueError):
        return
    calls = {"rhs": lambda a, b: disk.rhs(0.0, a, b),
             "mass_matrix": lambda a, b: disk.mass_matrix(0.0, a, b),
             "forcing": lambda a, b: disk.forcing(0.0, a, b),
             "rhs_batch": lambda a, b: disk.rhs_batch(0.0, np.asarray(a)[None, :], b)[0],
             "simulate": lambda a, b: _outcome(disk.simulate((0, 0.2), a, b, t_eval=[0.2])),
             "jacobian": lambda a, b: disk.jacobian(0.0, a, b),
             "simulate_batch": lambda a, b: disk.simulate_batch(
                 (0, 0.2), np.asarray(a)[None, :], b, t_eval=[0.2])[1:]}
    try:
        got = calls[fn](xa, pa)
    except (ValueError, TypeError, DynamicsError):
        return                       # a clear exception is always acceptable
    assert kind_x != "c16" and kind_p != "c16", "complex input was accepted"
    # the same values as a native, contiguous, writable float64 call
    ref = calls[fn](np.array(np.asarray(xa), dtype=np.float64),
                    np.array(np.asarray(pa), dtype=np.float64))
    if fn == "simulate":
        assert got == ref, (kind_x, kind_p)
    elif fn == "simulate_batch":
        assert np.array_equal(got[0], ref[0], equal_nan=True) and np.array_equal(got[1], ref[1])
    else:
        assert np.array_equal(got, ref, equal_nan=True), (fn, kind_x, kind_p)
