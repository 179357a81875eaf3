"""The regressor as standalone C (Regressor.export_c): compiled by gcc with the strict
flags, its driver's Y and Y_b against the Python module's, and its τ = Y π against
Pinocchio's RNEA (the iiwa) and the compiled model's projected inverse dynamics (the
run-time four-bar, through test_loops' oracle)."""
import shutil
import subprocess

import numpy as np
import pytest

from codegen import examples
from codegen.identification import regressor
from codegen.robots import from_urdf
from robot_oracle import pin, shared

FLAGS = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O1"]


def _build(files, tmp_path, name):
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not here")
    exe = tmp_path / f"{name}_driver"
    sources = [str(p) for f, p in files.items() if f.endswith(".c")]
    subprocess.run(["gcc", *FLAGS, *sources, "-lm", "-o", str(exe)], check=True)
    return exe


def _run(exe, x, ud):
    out = subprocess.run([str(exe), *[repr(float(v)) for v in np.r_[x, ud]]], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    Y = np.array([[float(v) for v in line.split()[1:]] for line in out if line.startswith("Y ")])
    Yb = np.array([[float(v) for v in line.split()[1:]] for line in out
                   if line.startswith("Yb ")])
    tau = np.array([float(line.split()[2]) for line in out if line.startswith("tau ")])
    return Y, Yb, tau


def test_iiwa_export(tmp_path):
    path = shared("iiwa")
    model = from_urdf(path)
    reg = regressor(model)
    files = reg.export_c("iiwa_c", tmp_path)
    assert sorted(files) == ["iiwa_c_regressor.c", "iiwa_c_regressor.h",
                             "iiwa_c_regressor_driver.c"]
    header = files["iiwa_c_regressor.h"].read_text()
    assert "#define IIWA_C_NP 70" in header and "#define IIWA_C_NB 43" in header
    exe = _build(files, tmp_path, "iiwa")
    mod = reg.generate("iiwa_c_py", output_dir=tmp_path / "py")
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    rng = np.random.default_rng(4)
    for _ in range(3):
        x, ud = rng.uniform(-2, 2, 14), rng.uniform(-2, 2, 7)
        Y, Yb, tau = _run(exe, x, ud)
        assert np.array_equal(Y, mod.regressor(x, ud))       # the same kernels, %.17g
        assert np.array_equal(Yb, mod.base_regressor(x, ud))
        q, v = model.to_pinocchio(x)
        rnea = pin.rnea(pm, pd, q, v, ud)
        assert np.abs(tau - rnea).max() <= 1e-11 * max(1.0, np.abs(rnea).max())


def test_export_is_deterministic_and_all_or_nothing(tmp_path):
    """The same model twice gives the same bytes; a name that a folder holds stops the
    export before any file is written."""
    reg = regressor(examples.four_bar("tree"))
    a = reg.export_c("fb", tmp_path / "a")
    b = regressor(examples.four_bar("tree")).export_c("fb", tmp_path / "b")
    assert all(a[f].read_bytes() == b[f].read_bytes() for f in a)
    assert "null space" in a["fb_regressor.h"].read_text()
    target = tmp_path / "c" / "fb"
    (target / "fb_regressor.c").mkdir(parents=True)
    with pytest.raises(IsADirectoryError):
        reg.export_c("fb", tmp_path / "c")
    assert not (target / "fb_regressor.h").exists()


def test_four_bar_export(tmp_path):
    """Through the loop: the driver's τ equals Tᵀ (the tree's inverse dynamics) at states
    on the closure, the oracle of test_loops."""
    from codegen import GibbsAppellMethod, generate
    from test_loops import closure_functions, consistent
    model = examples.four_bar("tree")
    reg = regressor(model)
    exe = _build(reg.export_c("fb4", tmp_path), tmp_path, "fb4")
    dyn = generate(GibbsAppellMethod(**model.kwargs), "fb4_dyn", output_dir=tmp_path,
                   jacobian=False)
    p = dyn.parameters(model.parameter_values)
    funcs = closure_functions(model)
    rng = np.random.default_rng(2)
    for _ in range(3):
        q, u, ud, T = consistent(model, rng, *funcs)
        x = np.r_[q, u]
        _, _, tau = _run(exe, x, ud[:1])
        expected = T.T @ dyn.inverse_dynamics(0.0, x, ud, p)
        assert np.abs(tau - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max())
