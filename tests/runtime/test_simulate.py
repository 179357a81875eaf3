"""Whole simulations in C: accuracy, order, stiffness, batches, inputs, interruption."""
import ctypes
import os
import signal
import threading

import numpy as np
import pytest
import sympy as sm
from scipy.integrate import solve_ivp

from codegen import GibbsAppellMethod, examples as ex, generate
from codegen.abi import STATUS


@pytest.fixture(scope="module")
def models(built, tmp_path_factory):
    out = tmp_path_factory.mktemp("sim")
    spring = ex.spring_damper()
    stiff = ex.stiff_pendulum(4)
    return dict(disk=built["rolling_disk"], pend=built["pendulum3"],
                spring=(spring, None, generate(GibbsAppellMethod(**spring.kwargs), "spring",
                                               output_dir=out)),
                stiff=(stiff, None, generate(GibbsAppellMethod(**stiff.kwargs), "stiff",
                                             output_dir=out, jacobian=False)),
                stiff_jac=(stiff, None, generate(GibbsAppellMethod(**stiff.kwargs), "stiff_jac",
                                                 output_dir=out)))


def disk_setup(models):
    model, ga, mod = models["disk"]
    return model, ga, mod, mod.parameters(g=9.81, m=2.0, r=0.3), np.array(model.initial_state, float)


def pend_setup(models):
    model, ga, mod = models["pend"]
    p = np.array([model.parameter_values[c] for c in mod.constants])
    return model, ga, mod, p, np.array(model.initial_state, float)


@pytest.mark.parametrize("which", ["disk", "pend"])
def test_dopri5_matches_dop853(models, which):
    model, ga, mod, p, x0 = (disk_setup if which == "disk" else pend_setup)(models)
    r = None if which == "disk" else np.array([0.3])
    T = 3.0 if which == "disk" else 1.0          # the triple pendulum is chaotic: a shorter run
    res = mod.simulate((0, T), x0, p, r, rtol=1e-12, atol=1e-12, t_eval=np.linspace(0, T, 61))
    assert res.success and res.message == "ok" and res.nsteps > 10
    ref = solve_ivp(mod.rhs, (0, T), x0, args=(p, r), method="DOP853", rtol=1e-13, atol=1e-13,
                    t_eval=res.t)
    assert np.allclose(res.x, ref.y.T, rtol=1e-8, atol=1e-8), abs(res.x - ref.y.T).max()
    assert np.array_equal(res[mod.states[1]], res.x[:, 1])


def test_rk4_is_fourth_order(models):
    model, ga, mod, p, x0 = disk_setup(models)
    ref = mod.simulate((0, 1), x0, p, rtol=1e-13, atol=1e-13, t_eval=[1.0]).x[-1]
    errs = [abs(mod.simulate((0, 1), x0, p, method="rk4", dt=dt, t_eval=[1.0]).x[-1] - ref).max()
            for dt in (0.02, 0.01, 0.005)]
    orders = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all((orders > 3.7) & (orders < 4.3)), orders
    fixed = mod.simulate((0, 1), x0, p, method="rk4", dt=0.01)
    assert fixed.nsteps == 100 and fixed.nfev == 4 * 100 + 1 and len(fixed.t) == 101


def test_energy_drift(models):
    model, ga, mod, p, x0 = disk_setup(models)
    E = sm.lambdify([list(ga.state), model.constants], ga.to_state(model.energy()))
    res = mod.simulate((0, 5), x0, p, rtol=1e-12, atol=1e-12)
    e = np.array([E(x, p) for x in res.x])
    assert abs(e - e[0]).max() / abs(e[0]) < 1e-9


@pytest.mark.parametrize("method", ["rosenbrock", "rosw", "bdf"])
def test_stiff_spring_damper(models, method):
    model, _, mod = models["spring"]
    p = np.array([model.parameter_values[c] for c in mod.constants])     # m, k, c
    x0 = np.array([1.0, 0.0])
    stiff = mod.simulate((0, 1), x0, p, method=method, rtol=1e-4, atol=1e-6)
    explicit = mod.simulate((0, 1), x0, p, method="dopri5", rtol=1e-4, atol=1e-6)
    assert stiff.success and explicit.success
    # DOPRI5's steps are held down by stability (h < 3.3 / 1e5), not accuracy
    assert explicit.nsteps > 100 * stiff.nsteps, (explicit.nsteps, stiff.nsteps)
    m, k, c = p
    l1, l2 = np.roots([m, c, k])                                  # overdamped: two real modes
    exact = (l2 * np.exp(l1 * stiff.t) - l1 * np.exp(l2 * stiff.t)) / (l2 - l1)
    assert abs(stiff.x[:, 0] - exact).max() < 1e-3
    assert abs(explicit.x[:, 0] - exact).max() < 1e-3


@pytest.mark.parametrize("method, bound", [("rosenbrock", 1), ("rosw", 1), ("bdf", 4)])
def test_implicit_accuracy_follows_the_tolerance(models, method, bound):
    """The Rosenbrock 4(3), Rosenbrock-W 3(2) and BDF methods against the
    exact solution of the stiff spring-damper, dense output included: the
    error falls with the tolerance (about in proportion here) and stays below
    rtol (the solution's size is 1; 4 rtol for the BDF, whose errors are
    1.2-3.5 rtol here, as LSODA's 1.2-3.0 and SciPy's BDF's 1.2-2.1); and
    against DOP853 on the nonlinear pendulum with an input."""
    model, _, mod = models["spring"]
    p = np.array([model.parameter_values[c] for c in mod.constants])
    m, k, c = p
    l1, l2 = np.roots([m, c, k])
    t_eval = np.linspace(0, 1, 41)
    exact = (l2 * np.exp(l1 * t_eval) - l1 * np.exp(l2 * t_eval)) / (l2 - l1)
    errs = []
    for tol in (1e-5, 1e-7, 1e-9):
        res = mod.simulate((0, 1), [1.0, 0.0], p, method=method, rtol=tol, atol=tol * 1e-3,
                           t_eval=t_eval)
        assert res.success
        errs.append(abs(res.x[:, 0] - exact).max())
        assert errs[-1] < bound * tol, (tol, errs[-1])
    assert errs[0] / errs[1] > 10 and errs[1] / errs[2] > 10, errs
    model, ga, mod, p, x0 = pend_setup(models)
    t_eval = np.linspace(0, 1, 11)
    ours = mod.simulate((0, 1), x0, p, [0.3], method=method, rtol=1e-10, atol=1e-10,
                        t_eval=t_eval)
    ref = solve_ivp(mod.rhs, (0, 1), x0, args=(p, [0.3]), method="DOP853", rtol=1e-13,
                    atol=1e-13, t_eval=t_eval)
    assert abs(ours.x - ref.y.T).max() < 1e-7


def _stiff_reference(mod, model):
    p = np.array([model.parameter_values[c] for c in mod.constants])
    x0 = np.array(model.initial_state, float)
    t_eval = np.linspace(0, 1, 11)
    ref = solve_ivp(mod.rhs, (0, 1), x0, args=(p, [0.0]), method="Radau", rtol=1e-12,
                    atol=1e-12, t_eval=t_eval).y.T
    return p, x0, t_eval, ref


def test_analytic_jacobian_in_the_implicit_methods(models):
    """With the generated Jacobian (one evaluation per J instead of nx RHS
    calls, and exact) the Rosenbrock method takes fewer steps and a quarter of
    the RHS calls of the same method on finite differences, to the same
    accuracy; the BDF takes SciPy's steps either way."""
    runs = {}
    for key in ("stiff", "stiff_jac"):
        model, _, mod = models[key]
        p, x0, t_eval, ref = _stiff_reference(mod, model)
        for m in ("rosenbrock", "bdf"):
            res = mod.simulate((0, 1), x0, p, [0.0], method=m, rtol=1e-8, atol=1e-8,
                               t_eval=t_eval)
            assert res.success and abs(res.x - ref).max() < 1e-5, (key, m)
            runs[key, m] = res
    fd, exact = runs["stiff", "rosenbrock"], runs["stiff_jac", "rosenbrock"]
    assert exact.nsteps < 0.8 * fd.nsteps and exact.nfev < 0.3 * fd.nfev
    assert exact.nfev <= 5 * (exact.nsteps + exact.nrejected) + 2   # 3 stages, f, J
    bdf_fd, bdf_exact = runs["stiff", "bdf"].nsteps, runs["stiff_jac", "bdf"].nsteps
    assert abs(bdf_exact - bdf_fd) <= 0.05 * bdf_fd


def test_rosw_keeps_its_jacobian_on_a_stiff_chain(models):
    """The stiff-jointed pendulum (10 states, modes down to -2e5 per second)
    on finite-difference Jacobians: both implicit methods match Radau at 1e-12;
    the W-method, which keeps one J over many steps, needs far fewer RHS calls
    than the Rosenbrock method (nx + 1 of them per new J); DOPRI5 needs orders
    of magnitude more."""
    model, _, mod = models["stiff"]
    p = np.array([model.parameter_values[c] for c in mod.constants])
    x0 = np.array(model.initial_state, float)
    t_eval = np.linspace(0, 1, 11)
    ref = solve_ivp(mod.rhs, (0, 1), x0, args=(p, [0.0]), method="Radau", rtol=1e-12,
                    atol=1e-12, t_eval=t_eval).y.T
    runs = {m: mod.simulate((0, 1), x0, p, [0.0], method=m, rtol=1e-8, atol=1e-8, t_eval=t_eval)
            for m in ("rosenbrock", "rosw", "bdf", "dopri5")}
    for m, res in runs.items():
        assert res.success and abs(res.x - ref).max() < 1e-5, (m, abs(res.x - ref).max())
    assert runs["rosw"].nfev < 0.6 * runs["rosenbrock"].nfev
    assert runs["rosw"].nfev < runs["rosw"].nsteps * (4 + 11 / 5)   # a new J at most every 5 steps
    assert runs["bdf"].nfev < 0.2 * runs["rosw"].nfev              # 1-3 Newton iterations a step
    assert runs["dopri5"].nsteps > 10 * runs["rosw"].nsteps


@pytest.mark.parametrize("tol", [1e-4, 1e-6, 1e-8])
def test_bdf_against_scipys(models, tol):
    """Our BDF is the algorithm of SciPy's BDF (Shampine's NDF, orders 1-5, the
    same step and order rules) run in C, with the reuse of CVODE and LSODE:
    the factored Newton matrix kept while h / alpha stays within 30 %, Newton's
    rate carried between steps, Newton stopped at rtol^(1/4) of the error
    tolerance. On the stiff chain (finite-difference Jacobians) it takes the
    same number of steps within 10 %, with fewer RHS calls (Jacobians
    included: 0.93, 0.80 and 0.67 times SciPy's at the three tolerances), to an
    error at t = 1 at most 5 times SciPy's (the finite-difference Jacobians
    differ in their rounding: without the reuse, 3.3 times at rtol = 1e-4)."""
    model, _, mod = models["stiff"]
    p = np.array([model.parameter_values[c] for c in mod.constants])
    x0 = np.array(model.initial_state, float)
    ref = solve_ivp(mod.rhs, (0, 1), x0, args=(p, [0.0]), method="Radau", rtol=1e-12,
                    atol=1e-12).y[:, -1]
    ours = mod.simulate((0, 1), x0, p, [0.0], method="bdf", rtol=tol, atol=tol, t_eval=[1.0])
    theirs = solve_ivp(mod.rhs, (0, 1), x0, args=(p, [0.0]), method="BDF", rtol=tol, atol=tol)
    assert ours.success and theirs.success
    steps = len(theirs.t) - 1
    e_ours, e_theirs = abs(ours.x[-1] - ref).max(), abs(theirs.y[:, -1] - ref).max()
    theirs_nfev = theirs.nfev + theirs.njev * mod.nx      # their Jacobians' calls apart
    assert abs(ours.nsteps - steps) <= 0.1 * steps, (ours.nsteps, steps)
    assert ours.nfev < 0.95 * theirs_nfev, (ours.nfev, theirs_nfev)
    assert e_ours < 5 * e_theirs, (e_ours, e_theirs)


def test_batches_equal_one_by_one(models):
    model, ga, mod, p, x0 = pend_setup(models)
    rng = np.random.default_rng(0)
    X0 = x0 + 0.1 * rng.normal(size=(12, mod.nx))
    P = np.tile(p, (12, 1)) * rng.uniform(0.9, 1.1, size=(12, len(p)))
    R = rng.uniform(-1, 1, size=(12, 1))
    t, X, status = mod.simulate_batch((0, 1), X0, P, R, rtol=1e-10, atol=1e-10)
    assert X.shape == (12, 101, mod.nx) and np.all(status == 0)
    for i in (0, 5, 11):
        one = mod.simulate((0, 1), X0[i], P[i], R[i], rtol=1e-10, atol=1e-10)
        assert np.array_equal(one.x, X[i])
    D = mod.rhs_batch(0.3, X0, P, R)
    for i in range(12):
        assert np.array_equal(D[i], mod.rhs(0.3, X0[i], P[i], R[i]))
    shared = mod.rhs_batch(0.3, X0, p, [0.2])                   # one P, one R for all rows
    assert np.array_equal(shared[4], mod.rhs(0.3, X0[4], p, [0.2]))


def test_batch_reports_failing_rows(models):
    model, ga, mod, p, x0 = disk_setup(models)
    X = np.tile(x0, (4, 1))
    X[2, 1] = 0.0                                                # theta = 0: singular kinematics
    with pytest.raises(Exception, match="row 2"):
        mod.rhs_batch(0.0, X, p)
    t, Y, status = mod.simulate_batch((0, 1), X, p)
    assert list(status == 0) == [True, True, False, True]
    assert np.isnan(Y[2, -1]).all() and np.isfinite(Y[3]).all()


def test_tabulated_inputs(models):
    model, ga, mod, p, x0 = pend_setup(models)
    times = np.linspace(0, 2, 21)
    values = np.sin(3 * times).reshape(-1, 1)
    res = mod.simulate((0, 2), x0, p, (times, values), hold=False, rtol=1e-11, atol=1e-11)
    ref = solve_ivp(lambda t, x: mod.rhs(t, x, p, [np.interp(t, times, values[:, 0])]), (0, 2),
                    x0, method="DOP853", rtol=1e-12, atol=1e-12, t_eval=res.t, max_step=0.01)
    assert np.allclose(res.x, ref.y.T, atol=1e-6)
    held = mod.simulate((0, 2), x0, p, (times, values), hold=True, rtol=1e-11, atol=1e-11)
    assert not np.allclose(held.x, res.x, atol=1e-6)            # a different input, a different motion
    const = mod.simulate((0, 2), x0, p, [0.3], rtol=1e-10, atol=1e-10)
    table = mod.simulate((0, 2), x0, p, ([0.0], [[0.3]]), rtol=1e-10, atol=1e-10)
    assert np.array_equal(const.x, table.x)


def interrupted(run):
    """run() with a SIGINT (Ctrl-C) sent to this process 0.3 s after it starts. Python's
    own handler is installed for the call: a library imported by another test of the
    session may have replaced it (the runs take seconds, so the signal comes first)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        return run()
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_stops_cleanly(models):
    model, _, mod = models["spring"]
    p = np.array([model.parameter_values[c] for c in mod.constants])
    res = interrupted(lambda: mod.simulate((0, 1e4), [1.0, 0.0], p, method="dopri5", rtol=1e-10,
                                           atol=1e-12, t_eval=np.linspace(0, 1e4, 200001)))
    assert res.status == -1 and res.message == "interrupted"
    assert 0 < len(res.t) < 200001 and np.isfinite(res.x).all()


def test_ctrl_c_stops_between_far_output_times(models):
    """One output time 10^5 s away: the C loop hands back control every few
    thousand steps, so Ctrl-C stops it long before it gets there."""
    model, _, mod = models["spring"]
    p = np.array([model.parameter_values[c] for c in mod.constants])
    res = interrupted(lambda: mod.simulate((0, 1e5), [1.0, 0.0], p, rtol=1e-10, atol=1e-12,
                                           t_eval=[1e5]))
    assert res.status == -1 and len(res.t) == 0 and res.nsteps > 0


def test_ctrl_c_stops_a_batch(models):
    model, _, mod = models["spring"]
    p = np.array([model.parameter_values[c] for c in mod.constants])
    t, X, status = interrupted(lambda: mod.simulate_batch(
        (0, 1e4), np.tile([1.0, 0.0], (8, 1)), p, rtol=1e-10, atol=1e-12, t_eval=[0.0, 1e-3, 1e4]))
    assert np.all(status == -1)                                  # cut short or never started
    started = np.isfinite(X[:, 1]).all(axis=1)                   # their first output points
    assert started.any() and np.isnan(X[:, 2]).all()
    assert np.array_equal(X[started, 1], np.tile(X[started][0, 1], (started.sum(), 1)))


@pytest.mark.parametrize("method", ["rk4", "dopri5", "rosenbrock", "rosw", "bdf"])
def test_runs_of_many_pauses_simulate_equals_batch(models, method):
    """Both hand control back every 2000 steps, simulate from one call after
    another, the batch inside its parallel loop: the same bits over runs of
    many pauses between output times (that a pause changes nothing at all is
    tested on the C API, test_export.test_paused_integration_equals_unpaused)."""
    key, T, tol = dict(rk4=("spring", 0.02, 1e-9), dopri5=("spring", 0.5, 1e-9),
                       rosenbrock=("spring", 1.0, 1e-12), rosw=("spring", 1.0, 1e-10),
                       bdf=("stiff", 12.0, 1e-11))[method]    # the BDF's steps grow fast
    model, _, mod = models[key]
    p = np.array([model.parameter_values[c] for c in mod.constants])
    x0 = np.array(model.initial_state, float)
    r = np.zeros(len(mod.specifieds))
    opts = dict(method=method, rtol=tol, atol=tol / 100, dt=1e-6 if method == "rk4" else None,
                t_eval=[0.0, T / 5, T])
    one = mod.simulate((0, T), x0, p, r, **opts)
    assert one.success and one.nsteps > 3 * 2000
    _, X, status = mod.simulate_batch((0, T), [x0], p, r if len(r) else None, **opts)
    assert status[0] == 0 and np.array_equal(one.x, X[0])


def test_progress_bar(models, capsys):
    pytest.importorskip("tqdm")
    model, _, mod = models["spring"]
    p = np.array([model.parameter_values[c] for c in mod.constants])
    plain = mod.simulate((0, 2), [1.0, 0.0], p, rtol=1e-10, atol=1e-12, t_eval=[2.0])
    shown = mod.simulate((0, 2), [1.0, 0.0], p, rtol=1e-10, atol=1e-12, t_eval=[2.0], progress=True)
    err = capsys.readouterr().err
    assert "spring" in err and "100%" in err and "2/2 s" in err
    assert np.array_equal(plain.x, shown.x)


def test_progress_without_tqdm_warns(models, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "tqdm", None)              # import tqdm raises ImportError
    model, _, mod = models["spring"]
    p = np.array([model.parameter_values[c] for c in mod.constants])
    with pytest.warns(UserWarning, match="needs tqdm"):
        res = mod.simulate((0, 1), [1.0, 0.0], p, progress=True)
    assert res.success


def test_rhs_address_has_the_numbalsoda_signature(models):
    model, ga, mod, p, x0 = pend_setup(models)
    proto = ctypes.CFUNCTYPE(None, ctypes.c_double, ctypes.POINTER(ctypes.c_double),
                             ctypes.POINTER(ctypes.c_double), ctypes.c_void_p)
    f = proto(mod.rhs_address)
    data = mod.callback_data(p, [0.4])
    u = x0.copy()
    du = np.empty(mod.nx)
    dp = ctypes.POINTER(ctypes.c_double)
    f(0.2, u.ctypes.data_as(dp), du.ctypes.data_as(dp), data.ctypes.data)
    assert np.array_equal(du, mod.rhs(0.2, x0, p, [0.4]))
    bad = x0.copy()
    bad[0] = np.nan
    f(0.2, bad.ctypes.data_as(dp), du.ctypes.data_as(dp), data.ctypes.data)
    assert np.isnan(du).all()                                    # the failure reaches the solver
    with pytest.raises(ValueError, match="callback_data needs"):
        mod.callback_data(p)


def test_numbalsoda_integrates_through_rhs_address(models):
    """numbalsoda's LSODA and DOP853 on the compiled model through rhs_address
    equal our DOPRI5; a failing RHS stops them. Skipped where numbalsoda is not
    installed, except under CODEGEN_REQUIRE_NUMBALSODA=1 (.ci/run sets it)."""
    if os.environ.get("CODEGEN_REQUIRE_NUMBALSODA") == "1":
        import numbalsoda
    else:
        numbalsoda = pytest.importorskip("numbalsoda")
    model, ga, mod, p, x0 = pend_setup(models)
    r = [0.3]
    t_eval = np.linspace(0.0, 1.0, 11)
    data = mod.callback_data(p, r)
    ours = mod.simulate((0, 1), x0, p, r, rtol=1e-12, atol=1e-12, t_eval=t_eval)
    for solve in (numbalsoda.lsoda, numbalsoda.dop853):
        usol, success = solve(mod.rhs_address, x0.copy(), t_eval, data=data, rtol=1e-11,
                              atol=1e-11)
        assert success, solve
        assert np.allclose(usol, ours.x, rtol=1e-7, atol=1e-7), (solve, abs(usol - ours.x).max())
    # a failing RHS (here: p not finite) fills du with NaN: LSODA reports success
    # but its states are NaN; DOP853 rejects every step and stops
    bad = mod.callback_data(p * np.array([np.nan] + [1.0] * (len(p) - 1)), r)
    usol, success = numbalsoda.lsoda(mod.rhs_address, x0.copy(), t_eval, data=bad)
    assert np.isnan(usol[1:]).all()
    usol, success = numbalsoda.dop853(mod.rhs_address, x0.copy(), t_eval, data=bad)
    assert not success


def test_empty_batches(models):
    """Zero rows in, zero rows out (P and R broadcast to no rows)."""
    model, ga, mod, p, x0 = pend_setup(models)
    assert mod.rhs_batch(0.0, np.ones((0, mod.nx)), p, [0.0]).shape == (0, mod.nx)
    t, X, status = mod.simulate_batch((0, 1), np.ones((0, mod.nx)), p, [0.0], t_eval=[0.0, 1.0])
    assert X.shape == (0, 2, mod.nx) and status.shape == (0,)


def test_bad_simulate_arguments(models):
    model, ga, mod, p, x0 = pend_setup(models)
    r = [0.1]
    for dt in (None, 0.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="rk4 needs a positive, finite step dt"):
            mod.simulate((0, 1), x0, p, r, method="rk4", dt=dt)
    for span in ((0, 1, 2), "ab", (0, np.inf)):
        with pytest.raises(ValueError, match="t_span must be two finite times"):
            mod.simulate(span, x0, p, r)
    with pytest.raises(ValueError, match="t_eval must be finite, ascending and inside t_span"):
        mod.simulate((0, 1), x0, p, r, t_eval=[0.0, np.nan])
    with pytest.raises(ValueError, match="max_steps must be at least 1"):
        mod.simulate((0, 1), x0, p, r, max_steps=0)
    with pytest.raises(ValueError, match="method must be one of"):
        mod.simulate((0, 1), x0, p, r, method="euler")
    with pytest.raises(TypeError, match="cannot call Python for r"):
        mod.simulate((0, 1), x0, p, lambda t, x: [0.0])
    with pytest.raises(ValueError, match="specified inputs"):
        mod.simulate((0, 1), x0, p)
    with pytest.raises(ValueError, match="input table needs"):
        mod.simulate((0, 1), x0, p, ([0, 1], [[0.0, 1.0, 2.0]]))
    with pytest.raises(ValueError, match="t_eval must be finite, ascending and inside t_span"):
        mod.simulate((0, 1), x0, p, r, t_eval=[0.5, 2.0])
    with pytest.raises(ValueError, match="t_span"):
        mod.simulate((1, 0), x0, p, r)
    for tol in (dict(rtol=-1.0), dict(atol=0.0), dict(rtol=np.nan)):
        with pytest.raises(ValueError, match="rtol and atol must be positive and finite"):
            mod.simulate((0, 1), x0, p, r, **tol)
        with pytest.raises(ValueError, match="rtol and atol must be positive and finite"):
            mod.simulate_batch((0, 1), x0[None], p, r, **tol)
    with pytest.raises(ValueError, match="x0 must have length"):
        mod.simulate((0, 1), x0[:-1], p, r)
    with pytest.raises(ValueError, match=r"p is not finite at \['m0'\]"):
        mod.simulate((0, 1), x0, p * np.array([np.nan] + [1.0] * (len(p) - 1)), r)
    short = mod.simulate((0, 1), x0, p, r, max_steps=5)
    assert short.status == 5 and short.message == "max_steps reached" and not short.success


@pytest.mark.parametrize("method", ["rk4", "dopri5", "rosenbrock", "rosw", "bdf"])
def test_overflowing_state_is_reported(models, method):
    """The integrators check inputs once, then only results: a state that
    overflows where the dynamics never look (the cart's position) must still
    stop the run, not come back as inf."""
    model, ga, mod, p, x0 = pend_setup(models)
    x = x0.copy()
    x[mod.states.index("q0")] = 1.7e308
    x[mod.states.index("u0")] = 1e308
    res = mod.simulate((0, 1), x, p, [0.0], method=method, dt=0.01)
    assert not res.success and np.isfinite(res.x).all()
    # the Rosenbrock method's stages overflow first: reported as such, not as
    # the NaN pivot the dynamics then meets
    assert (res.status, res.message) == (3, STATUS[3]) and "non-finite" in res.message
