"""Bad input to generate and to the compiled functions: clear exceptions, never a crash."""
import numpy as np
import pytest

from codegen import BuildError, DynamicsError, GibbsAppellMethod, examples as ex, export_fmu, generate

X = np.array([0.1, 1.2, 0.3, 0.5, -0.4, 2.0])
P = np.array([1.0, 0.5, 9.81])          # the rolling disk's m, r, g


def test_wrong_lengths(disk):
    with pytest.raises(ValueError, match="x must have length 6, got 5"):
        disk.rhs(0.0, X[:5], P)
    with pytest.raises(ValueError, match="p must have length 3, got 4"):
        disk.rhs(0.0, X, np.ones(4))
    with pytest.raises(ValueError, match="x must be 1-D of length 6, got shape"):
        disk.rhs(0.0, X.reshape(2, 3), P)
    with pytest.raises(ValueError, match="out must be a writable contiguous float64 array of length 6"):
        disk.rhs(0.0, X, P, out=np.empty(5))
    with pytest.raises(ValueError, match="out must be"):
        disk.rhs(0.0, X, P, out=np.empty(6, dtype=np.float32))
    ro = np.empty(6)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out must be"):
        disk.rhs(0.0, X, P, out=ro)
    with pytest.raises(ValueError, match="no specified inputs"):
        disk.rhs(0.0, X, P, r=[1.0])


def test_specified_inputs_required(pend):
    x, p = np.full(pend.nx, 0.3), np.ones(len(pend.constants))
    with pytest.raises(ValueError, match=r"specified inputs \['F'\]: pass r"):
        pend.rhs(0.0, x, p)
    with pytest.raises(ValueError, match="r must have length 1, got 2"):
        pend.rhs(0.0, x, p, [1.0, 2.0])
    a = pend.rhs(0.0, x, p, [0.5])
    b = pend.rhs(0.0, x, p, lambda t, x: [0.5])           # r as a callable
    c = pend.rhs(0.0, x, p, [0.0])
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_other_array_kinds_are_converted_not_misread(disk):
    ref = disk.rhs(0.0, X, P)
    assert np.array_equal(disk.rhs(0.0, list(X), tuple(P)), ref)
    wide = np.zeros(12)
    wide[::2] = X
    assert np.array_equal(disk.rhs(0.0, wide[::2], P), ref)         # non-contiguous
    assert np.array_equal(disk.rhs(0.0, X.astype(np.float32).astype(np.float64), P),
                          disk.rhs(0.0, X.astype(np.float32), P))    # float32 converted
    assert np.array_equal(disk.rhs(0, [0, 1, 0, 1, 0, 1], [9, 1, 1]),
                          disk.rhs(0.0, np.array([0, 1, 0, 1, 0, 1.0]), np.array([9, 1, 1.0])))
    with pytest.raises(TypeError, match="must be real"):
        disk.rhs(0.0, X + 0j, P)
    with pytest.raises(TypeError, match="x must be an array of numbers"):
        disk.rhs(0.0, ["a"] * 6, P)
    with pytest.raises(ValueError, match="x is required"):
        disk.rhs(0.0, None, P)


def test_non_finite_inputs_are_named(disk):
    bad = X.copy()
    bad[1] = np.nan
    with pytest.raises(ValueError, match=r"x is not finite at \['theta'\]"):
        disk.rhs(0.0, bad, P)
    with pytest.raises(ValueError, match=r"p is not finite at \['m'\]"):
        disk.mass_matrix(0.0, X, [np.inf, 0.5, 9.81])
    with pytest.raises(ValueError, match="t = nan is not finite"):
        disk.forcing(float("nan"), X, P)


def test_singular_mass_matrix_raises(disk):
    with pytest.raises(DynamicsError, match="rolling_disk: the mass matrix is not positive definite at t = 0.0"):
        disk.rhs(0.0, X, [0.0, 0.5, 9.81])                 # zero mass


def test_singularity_of_the_equations_raises(disk):
    at_pole = X.copy()
    at_pole[1] = 0.0                                        # theta = 0: phi' = u2/sin(theta)
    with pytest.raises(DynamicsError, match="not finite"):
        disk.rhs(0.0, at_pole, P)


def test_missing_constants_and_specifieds(tmp_path):
    model = ex.n_pendulum_on_cart(1)
    ga = GibbsAppellMethod(**model.kwargs)
    with pytest.raises(ValueError, match="contain g, which is not in constants"):
        generate(ga, "p1", constants=[c for c in model.constants if str(c) != "g"],
                 output_dir=tmp_path)
    with pytest.raises(ValueError, match=r"contain F\(t\), which is not in specifieds"):
        generate(ga, "p1", specifieds=[], output_dir=tmp_path)
    with pytest.raises(TypeError, match="constants must be SymPy Symbols"):
        generate(ga, "p1", constants=["g"], output_dir=tmp_path)


@pytest.mark.parametrize("name", ["1disk", "my-disk", "double", "__x", ""])
def test_model_name_must_be_a_c_identifier(tmp_path, name):
    ga = GibbsAppellMethod(**ex.dumbbell().kwargs)
    with pytest.raises(ValueError, match="model name"):
        generate(ga, name, output_dir=tmp_path)
    assert not any(tmp_path.iterdir())                       # nothing written


def test_compiler_failure_shows_stderr_and_sources(tmp_path):
    ga = GibbsAppellMethod(**ex.dumbbell().kwargs)
    with pytest.raises(BuildError) as info:
        generate(ga, "broken", output_dir=tmp_path, flags=["-O2", "-fno-such-flag-here"])
    msg = str(info.value)
    assert "-fno-such-flag-here" in msg and "failed-build" in msg
    failed = tmp_path / "broken" / "failed-build"
    assert (failed / "broken.c").is_file()
    assert not (tmp_path / "broken" / "manifest.json").exists()   # no half-built model


def test_flags_must_be_a_list_of_strings(tmp_path):
    ga = GibbsAppellMethod(**ex.dumbbell().kwargs)
    for flags in ("-O2", ["-O2", 3]):
        with pytest.raises(TypeError, match="flags must be a sequence of strings"):
            generate(ga, "flagged", output_dir=tmp_path, flags=flags)
        with pytest.raises(TypeError, match="flags must be a sequence of strings"):
            export_fmu(ga, "flagged", tmp_path, flags=flags)
    assert not any(tmp_path.iterdir())                       # nothing written


def test_output_dir_that_cannot_be_made(tmp_path):
    blocker = tmp_path / "taken"
    blocker.write_text("a file, not a folder")            # works as root too
    with pytest.raises(OSError, match="cannot create the output folder"):
        generate(GibbsAppellMethod(**ex.dumbbell().kwargs), "d", output_dir=blocker)
