"""Feedback in C: the LQR-stabilized pendulum on a cart, with K as a run-time argument,
as a C function (ctypes, numba), and compiled into the model (control=), against
solve_ivp with the same controller in Python and against A - B K."""
import ctypes

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import solve_continuous_are

from codegen import GibbsAppellMethod, examples as ex, generate
from codegen.abi import STATUS_CODE

SIGNATURE = ctypes.CFUNCTYPE(None, ctypes.c_double, ctypes.POINTER(ctypes.c_double),
                             ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double),
                             ctypes.c_void_p)


@pytest.fixture(scope="module")
def cart(tmp_path_factory):
    """The pendulum on a cart, its LQR gain about the upright position, and the closed
    loop compiled in."""
    model = ex.n_pendulum_on_cart(1)
    ga = GibbsAppellMethod(**model.kwargs)
    out = tmp_path_factory.mktemp("control")
    mod = generate(ga, "lqr_cart", output_dir=out)
    p = mod.parameters(model.parameter_values)
    up = np.array([0.0, np.pi / 2, 0.0, 0.0])
    A, B = mod.linearize(up, p, [0.0])
    K = np.linalg.solve(np.eye(1), B.T @ solve_continuous_are(A, B, np.eye(4), np.eye(1)))
    states = list(ga.q) + list(ga.u)
    law = -sum(float(K[0, j]) * (states[j] - float(up[j])) for j in range(4))
    closed = generate(ga, "lqr_cart_closed", output_dir=out, control={"F": law})
    x0 = up + np.array([0.2, 0.3, 0.0, 0.0])
    t = np.linspace(0, 5, 51)
    oracle = solve_ivp(lambda t_, x: mod.rhs(t_, x, p, -K @ (x - up)), (0, 5), x0, t_eval=t,
                       method="DOP853", rtol=1e-12, atol=1e-12).y.T
    return dict(mod=mod, closed=closed, p=p, up=up, A=A, B=B, K=K, x0=x0, t=t, oracle=oracle)


def test_linear_feedback_in_c_equals_solve_ivp(cart):
    c = cart
    res = c["mod"].simulate((0, 5), c["x0"], c["p"], controller=c["K"], x_ref=c["up"],
                            t_eval=c["t"], rtol=1e-12, atol=1e-12)
    assert res.status == 0
    assert np.abs(res.x - c["oracle"]).max() < 1e-9
    assert np.abs(res.x[:, 1] - np.pi / 2).max() < 0.4         # upright all along
    assert abs(res.x[-1, 1] - np.pi / 2) < 0.02
    for method, options, tol in (("bdf", dict(rtol=1e-10, atol=1e-10), 1e-6),
                                 ("rosw", dict(rtol=1e-10, atol=1e-10), 1e-6),
                                 ("rk4", dict(dt=1e-3), 1e-9)):
        other = c["mod"].simulate((0, 5), c["x0"], c["p"], controller=c["K"], x_ref=c["up"],
                                  t_eval=c["t"], method=method, **options)
        assert np.abs(other.x - c["oracle"]).max() < tol, method


def test_a_c_function_controller(cart):
    """The same law as a ctypes callback and as a numba cfunc: the same run."""
    c = cart
    K, up = c["K"], c["up"]

    def law(t, x, p, r, data):
        r[0] = -sum(K[0, j] * (x[j] - up[j]) for j in range(4))
    callback = SIGNATURE(law)
    res = c["mod"].simulate((0, 5), c["x0"], c["p"], controller=callback, t_eval=c["t"],
                            rtol=1e-12, atol=1e-12)
    assert np.abs(res.x - c["oracle"]).max() < 1e-9
    numba = pytest.importorskip("numba")
    sig = numba.types.void(numba.types.float64, numba.types.CPointer(numba.types.float64),
                           numba.types.CPointer(numba.types.float64),
                           numba.types.CPointer(numba.types.float64), numba.types.voidptr)
    gains = np.ascontiguousarray(np.concatenate([K[0], up]))

    @numba.cfunc(sig)
    def compiled(t, x, p, r, data):
        s = 0.0
        for j in range(4):
            s += gains[j] * (x[j] - gains[4 + j])
        r[0] = -s
    batch = c["mod"].simulate_batch((0, 5), np.array([c["x0"], c["x0"]]), c["p"],
                                    controller=compiled, t_eval=c["t"], rtol=1e-12, atol=1e-12)
    assert list(batch[2]) == [0, 0]
    assert np.abs(batch[1][0] - c["oracle"]).max() < 1e-9


def test_the_compiled_law_is_the_closed_loop(cart):
    """control= compiles the law into the model: no input left, linearize gives A - B K,
    and the run is the K run's."""
    c = cart
    closed = c["closed"]
    assert closed.specifieds == [] and closed.nx == 4
    A_cl, _ = closed.linearize(c["up"], c["p"])
    assert np.abs(A_cl - (c["A"] - c["B"] @ c["K"])).max() < 1e-10
    assert np.abs(np.sort_complex(np.linalg.eigvals(A_cl))
                  - np.sort_complex(np.linalg.eigvals(c["A"] - c["B"] @ c["K"]))).max() < 1e-9
    res = closed.simulate((0, 5), c["x0"], c["p"], t_eval=c["t"], rtol=1e-12, atol=1e-12)
    assert np.abs(res.x - c["oracle"]).max() < 1e-9


def test_a_controller_that_gives_nan_ends_the_run(cart):
    c = cart

    def law(t, x, p, r, data):
        r[0] = float("nan") if t > 1.0 else 0.0
    callback = SIGNATURE(law)
    res = c["mod"].simulate((0, 5), c["x0"], c["p"], controller=callback)
    assert res.status == STATUS_CODE["CG_ERR_CONTROL"]
    assert "controller" in res.message and 0.9 < res.t[-1] <= 1.0


def test_the_closed_loop_fmu(cart, tmp_path):
    """control= makes the FMU the closed loop: no input, and FMPy's Model Exchange run
    balances the pendulum as simulate does."""
    fmpy = pytest.importorskip("fmpy")
    model = ex.n_pendulum_on_cart(1)
    ga = GibbsAppellMethod(**model.kwargs)
    c = cart
    x = list(ga.q) + list(ga.u)
    law = -sum(float(c["K"][0, j]) * (x[j] - float(c["up"][j])) for j in range(4))
    from codegen import export_fmu
    start = dict(zip(c["closed"].states, c["x0"]), **model.parameter_values)
    path = export_fmu(ga, "lqr_fmu", tmp_path, start_values=start, control={"F": law})
    md = fmpy.read_model_description(str(path))
    assert not [v for v in md.modelVariables if v.causality == "input"]
    run = fmpy.simulate_fmu(str(path), fmi_type="ModelExchange", stop_time=5, output_interval=0.1,
                            relative_tolerance=1e-10, output=["q1"])
    assert np.abs(np.interp(c["t"], run["time"], run["q1"]) - c["oracle"][:, 1]).max() < 1e-6
