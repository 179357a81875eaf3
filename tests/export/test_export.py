"""Standalone C (strict compilers, example driver) and FMI 2.0 FMUs (FMPy)."""
import ctypes
import os
import re
import shutil
import subprocess

import fmpy
import numpy as np
import pytest
from fmpy.validation import validate_fmu
from scipy.integrate import solve_ivp

from codegen import GibbsAppellMethod, examples as ex, export_c, export_fmu, generate
from codegen.abi import STATUS_CODE

HERE = os.path.join(os.path.dirname(__file__), "..", "support")
CC = shutil.which("gcc") or shutil.which("cc")
CXX = shutil.which("g++") or shutil.which("c++")

MODELS = {
    "disk": ex.rolling_disk,
    "pend": lambda: ex.n_pendulum_on_cart(2),       # a specified input
    "fourbar": ex.four_bar,                          # run-time constraints
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("export")
    res = {}
    for name, build in MODELS.items():
        model = build()
        ga = GibbsAppellMethod(**model.kwargs)
        res[name] = (model, ga, export_c(ga, name, out), generate(ga, name, output_dir=out / "py"))
    return res


def run(cmd, cwd):
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    assert proc.returncode == 0, " ".join(cmd) + "\n" + proc.stdout + proc.stderr
    return proc.stdout


RUNTIME_C = list(__import__("codegen.emit.render").emit.render.RUNTIME_C)


def test_files_and_same_c_as_the_python_module(exported):
    for name, (model, ga, folder, mod) in exported.items():
        assert {p.name for p in folder.iterdir()} >= {f"{name}.c", f"{name}.h", f"{name}_driver.c",
                                                      "cg_runtime.h", "cg_model.h", *RUNTIME_C}
        assert (folder / f"{name}.c").read_text() == (mod.source_dir / f"{name}.c").read_text()
        header = (folder / f"{name}.h").read_text()
        for macro in ("NQ", "NU", "NX", "NP", "NR"):
            assert f"#define {name.upper()}_{macro} " in header
        assert '#ifdef __cplusplus\nextern "C" {' in header
        assert "#include <stdlib.h>" not in (folder / f"{name}.c").read_text()


STRICT = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O2"]


@pytest.mark.parametrize("name", MODELS)
def test_strict_c99_and_cxx(exported, name):
    """The model and the runtime compile as strict C99 with every warning an error,
    and a C++ program uses them through the header."""
    model, ga, folder, mod = exported[name]
    for src in [f"{name}.c", f"{name}_driver.c"] + RUNTIME_C:
        run([CC, *STRICT, "-c", src, "-o", src[:-2] + ".o"], folder)
    objects = [f"{name}.o"] + [c[:-2] + ".o" for c in RUNTIME_C]
    defs = [f'-DMODEL_HEADER="{name}.h"', f"-DMODEL_DESCRIPTOR={name}_model"]
    run([CXX, "-Wall", "-Werror", "-I.", *defs, os.path.join(HERE, "c", "use_header.cpp"),
         *objects, "-lm", "-o", "use_header"], folder)
    out = run(["./use_header"], folder).split()
    assert out[0] == "0" and out[1] == mod.states[0]


def test_two_models_link_into_one_program(exported, tmp_path):
    """Each model is its descriptor and the runtime is shared: two models and one
    copy of the runtime link into one program, each computing its own x' and its
    inverse dynamics (the pendulums' Newton-Euler program; the disk's M u' - F, its
    nonholonomic constraints eliminated), and its Jacobian with the bits of the Python
    module's, built without -std=c99: the copy the processor runs (cg_math.h's
    CG_CLONES, fused multiply-adds in the AVX2 one) is the same code in both. What GCC
    schedules (CG_SCHEDULED: the disk's x', the pendulums' inverse dynamics) gives the
    module's bits too."""
    for name in ("disk", "pend"):
        folder = exported[name][2]
        for f in (f"{name}.c", f"{name}.h"):
            shutil.copy(folder / f, tmp_path / f)
    for f in exported["disk"][2].glob("cg_*"):
        shutil.copy(f, tmp_path / f.name)
    run([CC, *STRICT, "-I.", os.path.join(HERE, "c", "two_models.c"), "disk.c", "pend.c",
         *RUNTIME_C, "-lm", "-o", "two_models"], tmp_path)
    lines = [line.split() for line in run(["./two_models"], tmp_path).splitlines()]
    assert [(w[0], w[1], w[3], w[5]) for w in lines] == [("disk", "0", "0", "0"),
                                                          ("pend", "0", "0", "0")]
    # the unchecked entries give the same bits, and for a NaN speed a NaN x' with CG_OK,
    # as documented (neither model has run-time constraints, which keep the checks); the
    # disk's unchecked x' comes from its eval_ldl (eval and the L D L^T in one body), the
    # pendulums' from the recursion
    assert "static CG_FLATTEN CG_SCHEDULED void disk_eval_ldl(" in (tmp_path / "disk.c").read_text()
    assert "eval_ldl" not in (tmp_path / "pend.c").read_text()
    # the functions GCC schedules (CG_SCHEDULED): the pendulums' inverse dynamics program,
    # whole, and the disk's eval_ldl (its inverse dynamics is the runtime's M u' - F)
    scheduled = {name: re.findall(r"CG_SCHEDULED (?:static )?void (\w+)\(",
                                  (tmp_path / f"{name}.c").read_text()) for name in ("disk", "pend")}
    assert scheduled == {"disk": ["disk_eval_ldl"], "pend": ["pend_inverse_dynamics"]}
    assert [w[6:12] for w in lines] == [["1", "0", "1", "0", "0", "0"]] * 2
    for (name, code, dx0, inverse, tau0, jacobian, *rest) in lines:
        J = rest[6:]
        mod = exported[name][3]
        x = 0.1 * np.arange(1, mod.nx + 1)
        r = np.zeros(len(mod.specifieds)) if mod.specifieds else None
        p = np.ones(len(mod.constants))
        assert float(dx0) == mod.rhs(0.0, x, p, r)[0]
        J = np.array([float.fromhex(v) for v in J]).reshape(mod.nx, mod.nx)
        assert np.array_equal(J, mod.jacobian(0.0, x, p, r))
        ud = 0.2 * np.arange(1, mod.nu + 1)
        assert float(tau0) == mod.inverse_dynamics(0.0, x, ud, p, r)[0]
        M, F = mod.mass_matrix(0.0, x, p, r), mod.forcing(0.0, x, p, r)
        assert np.allclose(mod.inverse_dynamics(0.0, x, ud, p, r), M @ ud - F, rtol=1e-12,
                           atol=1e-12)


def test_paused_integration_equals_unpaused(exported):
    """The C contract behind Ctrl-C and the progress bar: a step budget per
    cg_integrate_to call changes nothing but the number of calls."""
    model, ga, folder, mod = exported["pend"]
    defs = ['-DMODEL_HEADER="pend.h"', "-DMODEL_DESCRIPTOR=pend_model"]
    run([CC, "-std=c99", "-Wall", "-Werror", "-O2", "-I.", *defs,
         os.path.join(HERE, "c", "pause_harness.c"), "pend.c", *RUNTIME_C, "-lm",
         "-o", "pause_harness"], folder)
    rows = [line.split() for line in run(["./pause_harness"], folder).splitlines()]
    assert [r[0] for r in rows] == ["0", "1", "2", "3", "4"]    # rk4 dopri5 rosenbrock rosw bdf
    for method, code_a, code_b, same, steps, pauses in rows:
        assert code_a == code_b == "0" and same == "1", rows
        assert int(pauses) >= int(steps) // 7 - 4 > 0              # it did pause, many times


def python_rk4(mod, x0, p, r, h, n):
    xs = [np.array(x0, dtype=float)]
    x = xs[0].copy()
    for k in range(n):
        t = k * h
        k1 = mod.rhs(t, x, p, r)
        k2 = mod.rhs(t + 0.5 * h, x + 0.5 * h * k1, p, r)
        k3 = mod.rhs(t + 0.5 * h, x + 0.5 * h * k2, p, r)
        k4 = mod.rhs(t + h, x + h * k3, p, r)
        x = x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        xs.append(x)
    return np.array(xs)


def start(model, mod):
    vals = dict(model.parameter_values, baumgarte_alpha=5.0, baumgarte_beta=5.0)
    p = np.array([vals[c] for c in mod.constants])
    x0 = np.array(model.initial_state, dtype=float)
    if mod.nc:
        x0 = mod.project(x0, p)
    r = np.full(len(mod.specifieds), 0.25) if mod.specifieds else None
    return x0, p, r


def fmu_start(model, mod):
    """start(), and the same numbers as an FMU's start values by name."""
    x0, p, r = start(model, mod)
    values = dict(zip(mod.states, x0))
    values.update(zip(mod.constants, p))
    if r is not None:
        values.update(zip(mod.specifieds, r))
    return x0, p, r, values


@pytest.mark.parametrize("name", MODELS)
def test_driver_trajectory_equals_python(exported, name):
    model, ga, folder, mod = exported[name]
    run([CC, "-std=c99", "-O2", f"{name}_driver.c", f"{name}.c", *RUNTIME_C, "-lm",
         "-o", f"{name}_driver"], folder)
    x0, p, r = start(model, mod)
    h, n = 1e-3, 500
    args = [repr(float(v)) for v in [*x0, *p, *([] if r is None else r)]]
    out = run([f"./{name}_driver", repr(h), str(n), *args], folder)
    traj = np.array([[float(v) for v in line.split()] for line in out.splitlines()])
    ref = python_rk4(mod, x0, p, r, h, n)
    assert traj.shape == (n + 1, mod.nx + 1)
    assert np.allclose(traj[:, 1:], ref, rtol=1e-12, atol=1e-12)
    assert abs(traj[-1, 1:] - x0).max() > 1e-3                  # it moved
    # any method by name: the runtime's integrator, the very run simulate makes
    out = run([f"./{name}_driver", "bdf", "0.01", "50", *args], folder)
    traj = np.array([[float(v) for v in line.split()] for line in out.splitlines()])
    ours = mod.simulate((0, 0.5), x0, p, r, method="bdf", rtol=1e-8, atol=1e-8,
                        t_eval=np.arange(51) * 0.01)
    assert np.array_equal(traj[:, 0], ours.t) and np.array_equal(traj[:, 1:], ours.x)


@pytest.mark.parametrize("name", MODELS)
def test_fmu_validates_and_matches_solve_ivp(exported, tmp_path, name):
    model, ga, folder, mod = exported[name]
    x0, p, r, values = fmu_start(model, mod)
    path = export_fmu(ga, name, tmp_path, start_values=values)
    assert path == tmp_path / f"{name}.fmu"
    assert validate_fmu(str(path)) == []
    md = fmpy.read_model_description(str(path))
    by_causality = {}
    for v in md.modelVariables:
        by_causality.setdefault(v.causality, []).append(v.name)
    assert by_causality["parameter"] == mod.constants
    assert by_causality.get("input", []) == mod.specifieds
    assert [n for n in by_causality["local"] if not n.startswith("der(")] == mod.states
    t_end = 2.0
    res = fmpy.simulate_fmu(str(path), stop_time=t_end, output_interval=0.01,
                            relative_tolerance=1e-11, output=mod.states, fmi_type="ModelExchange")
    sol = solve_ivp(mod.rhs, (0, t_end), x0, args=(p, r), method="DOP853", rtol=1e-12,
                    atol=1e-12, t_eval=res["time"])
    ours = np.array([res[s] for s in mod.states])
    assert np.allclose(ours, sol.y, rtol=1e-6, atol=1e-6), abs(ours - sol.y).max()
    # tunable parameter: a changed constant changes the motion
    other = fmpy.simulate_fmu(str(path), stop_time=0.5, output_interval=0.01,
                              start_values={mod.constants[-1]: 2 * p[-1]}, output=mod.states,
                              fmi_type="ModelExchange")
    assert not np.allclose(other[mod.states[-1]], res[mod.states[-1]][:len(other)])


@pytest.mark.parametrize("name", MODELS)
def test_cosimulation_runs_our_integrator(exported, tmp_path, name):
    """fmi2DoStep is the model's own DOPRI5 carried from one communication
    point to the next: FMPy's co-simulation equals simulate() at the same
    output times (the same C, the same calls), and solve_ivp's DOP853."""
    model, ga, folder, mod = exported[name]
    x0, p, r, values = fmu_start(model, mod)
    path = export_fmu(ga, name, tmp_path, start_values=values)
    assert fmpy.read_model_description(str(path)).coSimulation is not None
    res = fmpy.simulate_fmu(str(path), stop_time=2.0, output_interval=0.01, fmi_type="CoSimulation",
                            relative_tolerance=1e-10, output=mod.states)
    cosim = np.array([res[s] for s in mod.states]).T
    ours = mod.simulate((0, 2.0), x0, p, r, rtol=1e-10, atol=1e-10, t_eval=res["time"])
    assert abs(cosim - ours.x).max() < 1e-9, abs(cosim - ours.x).max()
    sol = solve_ivp(mod.rhs, (0, 2.0), x0, args=(p, r), method="DOP853", rtol=1e-12,
                    atol=1e-12, t_eval=res["time"])
    assert np.allclose(cosim, sol.y.T, rtol=1e-6, atol=1e-6)


def test_cosimulation_of_a_stiff_model_with_bdf(tmp_path):
    model = ex.stiff_pendulum(2)
    ga = GibbsAppellMethod(**model.kwargs)
    mod = generate(ga, "stiff2", output_dir=tmp_path / "py")
    p = np.array([model.parameter_values[c] for c in mod.constants])
    x0 = np.array(model.initial_state, float)
    values = dict(zip(mod.states, x0), **dict(zip(mod.constants, p)))
    path = export_fmu(ga, "stiff2", tmp_path, start_values=values, method="bdf", tolerance=1e-8)
    assert validate_fmu(str(path)) == []
    res = fmpy.simulate_fmu(str(path), stop_time=1.0, output_interval=0.05, fmi_type="CoSimulation",
                            output=mod.states)                 # the FMU's own tolerance, 1e-8
    cosim = np.array([res[s] for s in mod.states]).T
    ours = mod.simulate((0, 1.0), x0, p, [0.0], method="bdf", rtol=1e-8, atol=1e-8,
                        t_eval=res["time"])
    assert abs(cosim - ours.x).max() < 1e-9
    ref = solve_ivp(mod.rhs, (0, 1.0), x0, args=(p, [0.0]), method="Radau", rtol=1e-12,
                    atol=1e-12, t_eval=res["time"])
    assert np.allclose(cosim, ref.y.T, atol=1e-5)
    with pytest.raises(ValueError, match="method must be one of"):
        export_fmu(ga, "stiff2", tmp_path, method="euler")
    with pytest.raises(ValueError, match="'rk4' needs a positive, finite step dt"):
        export_fmu(ga, "stiff2", tmp_path, method="rk4")
    with pytest.raises(ValueError, match="dt is for the fixed-step methods"):
        export_fmu(ga, "stiff2", tmp_path, method="bdf", dt=1e-3)
    with pytest.raises(ValueError, match="ali3p needs holonomic constraints only"):
        export_fmu(ga, "stiff2", tmp_path, method="ali3p", dt=1e-3)
    with pytest.raises(ValueError, match="tolerance must be"):
        export_fmu(ga, "stiff2", tmp_path, tolerance=0.0)


def test_cosimulation_through_a_singular_position_with_ali3p(tmp_path):
    """The IFToMM N four-bar at N = 1 through its flat positions, in FMPy's
    Co-Simulation with method='ali3p' (fixed step 5e-4, each communication point
    landed on): the same trajectory as simulate(method='ali3p') to 1e-10, and the
    exact motion to 1e-6 m at every output."""
    model = ex.n_four_bar(1)
    ga = GibbsAppellMethod(**model.kwargs)
    mod = generate(ga, "nfb1", output_dir=tmp_path / "py")
    p = mod.parameters(model.parameter_values)
    x0 = mod.project(np.array(model.initial_state, dtype=float), p)
    values = dict(zip(mod.states, x0), **dict(zip(mod.constants, p)))
    path = export_fmu(ga, "nfb1", tmp_path, start_values=values, method="ali3p", dt=5e-4,
                      tolerance=1e-11)
    assert validate_fmu(str(path)) == []
    res = fmpy.simulate_fmu(str(path), stop_time=3.0, output_interval=0.05,
                            fmi_type="CoSimulation", output=mod.states)
    cosim = np.array([res[s] for s in mod.states]).T
    ours = mod.simulate((0, 3.0), x0, p, method="ali3p", dt=5e-4, atol=1e-11,
                        t_eval=res["time"])
    assert ours.success and abs(cosim - ours.x).max() < 1e-10
    exact = ex.n_four_bar_exact(1, res["time"])
    gap = np.hypot(np.cos(cosim[:, 0]) - np.cos(exact), np.sin(cosim[:, 0]) - np.sin(exact))
    assert gap.max() < 1e-6
    # on the SVD elimination (rk4) the run passes by the flat position: the FMU says so,
    # once, as simulate does with its status (decided in C, cg_integrator_warning)
    path = export_fmu(ga, "nfb1", tmp_path, start_values=values, method="rk4", dt=1e-3)
    logged = []
    fmpy.simulate_fmu(str(path), stop_time=1.0, output_interval=0.05, fmi_type="CoSimulation",
                      logger=lambda env, name, status, category, message:
                      logged.append((status, category, message)))
    warned = [m for status, c, m in logged if status == 1]       # fmi2Warning
    assert len(warned) == 1 and b"singular position" in warned[0], logged
    ours = mod.simulate((0, 1.0), x0, p, method="rk4", dt=1e-3)
    assert ours.status == STATUS_CODE["CG_NEAR_SINGULAR"]


def test_bad_names_and_folders(tmp_path):
    ga = GibbsAppellMethod(**ex.dumbbell().kwargs)
    for bad in ("2nd", "static", "my model"):
        with pytest.raises(ValueError, match="model name"):
            export_c(ga, bad, tmp_path)
        with pytest.raises(ValueError, match="model name"):
            export_fmu(ga, bad, tmp_path)
    assert not any(tmp_path.iterdir())
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(OSError, match="cannot create the output folder"):
        export_c(ga, "db", blocker)
    with pytest.raises(OSError, match="cannot create the output folder"):
        export_fmu(ga, "db", blocker)
    with pytest.raises(ValueError, match="neither states, constants nor specifieds"):
        export_fmu(ga, "db", tmp_path, start_values={"nope": 1.0})
    assert not (tmp_path / "db.fmu").exists()


def test_model_without_states(tmp_path):
    import sympy as sm
    from codegen import EquationsOfMotion
    empty = EquationsOfMotion(q=[], u=[], qdot=[], M=sm.zeros(0, 0), F=sm.zeros(0, 1),
                              symmetric=True, constants=[], specifieds=[], state_names=[],
                              constant_names=[], specified_names=[])
    with pytest.raises(ValueError, match="no speeds"):
        export_c(empty, "nothing", tmp_path)
    with pytest.raises(ValueError, match="no speeds"):
        export_fmu(empty, "nothing", tmp_path)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("name", MODELS)
def test_fmu_directional_derivatives(exported, tmp_path, name):
    """FMPy's getDirectionalDerivative through fmi2GetDirectionalDerivative: every
    column of d der(x)/dx and d der(x)/dr equals the module's analytic Jacobian;
    a model with run-time constraints does not claim the capability."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Model
    model, ga, folder, mod = exported[name]
    x0, p, r, values = fmu_start(model, mod)
    path = export_fmu(ga, name, tmp_path, start_values=values)
    md = read_model_description(str(path))
    assert md.modelExchange.providesDirectionalDerivative == (mod.nc == 0)
    if mod.nc:
        return
    fmu = FMU2Model(guid=md.guid, unzipDirectory=extract(str(path)),
                    modelIdentifier=md.modelExchange.modelIdentifier, instanceName="jac")
    fmu.instantiate()
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    fmu.enterContinuousTimeMode()
    rng = np.random.default_rng(5)
    x = x0 + rng.uniform(-0.3, 0.3, mod.nx)
    fmu.setContinuousStates((ctypes.c_double * mod.nx)(*x), mod.nx)
    J, Jr = mod.linearize(x, p, r)
    nx = mod.nx
    der = list(range(nx, 2 * nx))
    for k in range(nx):
        col = fmu.getDirectionalDerivative(der, [k], [1.0])
        assert np.allclose(col, J[:, k], rtol=1e-14, atol=1e-14)
    inputs = [2 * nx + len(mod.constants) + j for j in range(len(mod.specifieds))]
    for j, vr in enumerate(inputs):
        assert np.allclose(fmu.getDirectionalDerivative(der, [vr], [1.0]), Jr[:, j], atol=1e-14)
    both = fmu.getDirectionalDerivative(der[:2], [0, 1], [0.5, -2.0])
    assert np.allclose(both, 0.5 * J[:2, 0] - 2.0 * J[:2, 1], atol=1e-14)
    fmu.terminate()
    fmu.freeInstance()


def test_standalone_c_of_a_flexible_body(tmp_path):
    """export_c of the spin-up beam (a FlexibleBody with geometric stiffening, the hub
    angle an explicit function of time): the example driver's bdf run is the very run
    simulate makes, and the beam bends."""
    model = ex.spin_up_beam(2, omega=4.0, duration=2.0)
    ga = GibbsAppellMethod(**model.kwargs)
    folder = export_c(ga, "spin_up_c", tmp_path)
    mod = generate(ga, "spin_up_c", output_dir=tmp_path / "py")
    assert (folder / "spin_up_c.c").read_text() == (mod.source_dir / "spin_up_c.c").read_text()
    run([CC, "-std=c99", "-O2", "spin_up_c_driver.c", "spin_up_c.c", *RUNTIME_C, "-lm",
         "-o", "spin_up_c_driver"], folder)
    x0, p, _ = start(model, mod)
    out = run(["./spin_up_c_driver", "bdf", "0.05", "60",
               *[repr(float(v)) for v in [*x0, *p]]], folder)
    traj = np.array([[float(v) for v in line.split()] for line in out.splitlines()])
    ours = mod.simulate((0, 3.0), x0, p, method="bdf", rtol=1e-8, atol=1e-8,
                        t_eval=np.arange(61) * 0.05)
    assert ours.success and np.abs(ours.x[:, 0]).max() > 1e-3
    assert np.array_equal(traj[:, 0], ours.t) and np.array_equal(traj[:, 1:], ours.x)
