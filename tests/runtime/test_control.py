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


def test_k_with_an_input_table_and_a_controller_on_the_reference(cart):
    """r = r_ref(t) - K (x - x_ref) with r_ref from a table (interpolated) is a Python
    RK4 of rhs with that law, and a C controller gets r_ref in r at every call."""
    c = cart
    K, up, p, rhs = c["K"], c["up"], c["p"], c["mod"].rhs
    times, values = np.array([0.0, 0.31, 0.62, 1.0]), np.array([0.0, 3.0, -2.0, 1.0])
    ts = np.linspace(0.0, 1.0, 1001)
    res = c["mod"].simulate((0, 1), c["x0"], p, (times, values), method="rk4", dt=1e-3,
                            t_eval=ts, hold=False, controller=K, x_ref=up)

    def f(t, x):
        return rhs(t, x, p, np.interp(t, times, values) - K @ (x - up))
    x, h = c["x0"].copy(), 1e-3
    for k in range(1000):                         # the same RK4, in Python
        t = ts[k]
        k1 = f(t, x)
        k2 = f(t + h / 2, x + h / 2 * k1)
        k3 = f(t + h / 2, x + h / 2 * k2)
        k4 = f(t + h, x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    assert res.status == 0 and np.abs(res.x[-1] - x).max() < 1e-10

    def law(t, x, p, r, data):                    # adds to the reference it is given
        r[0] -= sum(K[0, j] * (x[j] - up[j]) for j in range(4))
    runs = [c["mod"].simulate((0, 1), c["x0"], p, [0.5], method="rk4", dt=1e-3, **kw)
            for kw in (dict(controller=K, x_ref=up), dict(controller=SIGNATURE(law)))]
    assert np.abs(runs[0].x - runs[1].x).max() < 1e-12


#: (nr, nx) of the generated laws checked: rows, odd and even widths, a single state
LAW_SIZES = ((1, 10), (2, 5), (3, 1), (2, 7))


def _laws(folder, flags):
    """The feedback laws function.j2 writes for LAW_SIZES, built with flags."""
    from codegen.abi import FUNCTIONS, RUNTIME_DIR
    from codegen.pipeline.compiler import compile_library
    from codegen.emit.render import environment
    laws = [dict(symbol=f"law_{nr}_{nx}", signature=FUNCTIONS["feedback"].signature, nr=nr,
                 nx=nx, comment="") for nr, nx in LAW_SIZES]
    text = environment().from_string(
        '#include "cg_math.h"\n#include "cg_model.h"\n{% from "model/function.j2" import feedback %}'
        '{% for f in laws %}{{ feedback(f) }}\n{% endfor %}'
        'cg_feedback_fn laws[] = { {%- for f in laws %}{{ f.symbol }}, {% endfor %}};\n'
    ).render(laws=laws)
    path = compile_library({"laws.c": text}, ["laws.c"], "laws", flags, folder,
                           include_dirs=[RUNTIME_DIR])
    lib = ctypes.CDLL(str(path))
    table = (ctypes.c_void_p * len(LAW_SIZES)).in_dll(lib, "laws")
    law = ctypes.CFUNCTYPE(None, *[ctypes.POINTER(ctypes.c_double)] * 4)
    return lib, [law(address) for address in table]


def test_the_generated_law_is_c_minus_k_x(tmp_path):
    """The model's feedback function is c - K x to rounding, for several rows and odd
    widths."""
    rng = np.random.default_rng(29)
    lib, laws = _laws(tmp_path, ["-O2"])

    def ptr(a):
        return a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    for k, (nr, nx) in enumerate(LAW_SIZES):
        K = rng.standard_normal((nr, nx)) * 10.0 ** rng.integers(-3, 4, (nr, nx))
        x, c = rng.standard_normal(nx), rng.standard_normal(nr)
        scale = np.abs(c) + np.abs(K) @ np.abs(x)
        r = np.full(nr + 1, 7.0)
        laws[k](ptr(x), ptr(K), ptr(c), ptr(r))
        assert np.all(np.abs(r[:nr] - (c - K @ x)) <= 1e-14 * scale), (nr, nx)
        assert r[nr] == 7.0                       # nothing written past the inputs
