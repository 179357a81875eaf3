"""The compiled dynamics as CasADi external functions (codegen.export.casadi): values, the
analytic Jacobian as CasADi takes it, the exact Hessian of λᵀx', errors, the standalone
export, and the double pendulum swing-up against the SX route."""
from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest

ca = pytest.importorskip("casadi", reason="CasADi is not installed (pip install casadi)")

from codegen import GibbsAppellMethod, examples, generate
from codegen.bench.ocp import solve, sx_dynamics
from codegen.export.casadi import (
    casadi_function,
    casadi_sources,
    export_casadi,
    rk4_step,
)


@pytest.fixture(scope="module")
def cart2(tmp_path_factory):
    """(model, equations, CompiledModel, casadi Function, p) of the double pendulum on a
    cart, compiled once for the module."""
    model = examples.n_pendulum_on_cart(2)
    ga = GibbsAppellMethod(**model.kwargs)
    ga.kanes_equations(model.bodies, model.loads)
    mod = generate(ga, "cart2", output_dir=tmp_path_factory.mktemp("casadi"), jacobian=True)
    f = casadi_function(mod, ga)
    p = np.array([model.parameter_values[c] for c in mod.constants])
    return model, ga, mod, f, p


def _points(seed=0, count=5):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=6), rng.normal(size=1), rng.normal(size=6)) for _ in range(count)]


def test_function_signature(cart2):
    f = cart2[3]
    assert f.name() == "cart2"
    assert f.name_in() == ["x", "r", "p"] and f.name_out() == ["xdot"]
    assert [f.size1_in(i) for i in range(3)] == [6, 1, 6]


def test_values_equal_rhs(cart2):
    _, _, mod, f, p = cart2
    for x, r, _ in _points():
        np.testing.assert_array_equal(np.array(f(x, r, p)).ravel(), mod.rhs(0.0, x, p, r))


def test_first_derivatives_equal_the_analytic_jacobian(cart2):
    _, _, mod, f, p = cart2
    X, R, P = ca.MX.sym("x", 6), ca.MX.sym("r", 1), ca.MX.sym("p", 6)
    y = f(X, R, P)
    jac = ca.Function("J", [X, R, P], [ca.jacobian(y, X), ca.jacobian(y, R)])
    for x, r, _ in _points(1):
        Jx, Jr = (np.array(v) for v in jac(x, r, p))
        np.testing.assert_allclose(Jx, mod.jacobian(0.0, x, p, r), rtol=0, atol=1e-9)
        np.testing.assert_allclose(Jr, mod.input_jacobian(0.0, x, p, r), rtol=0, atol=1e-9)


def test_jacobian_sparsity_is_structural(cart2):
    """The declared pattern has the structural zeros (q' = u; nothing reads q0) and no value
    falls outside it."""
    _, _, mod, f, p = cart2
    jf = f.jacobian()
    sp = jf.sparsity_out(0)
    assert sp.nnz() == 15                       # 3 of q' = u and 3 x 4 (q1, q2, u1, u2) of u'
    dense = np.array(ca.DM(sp, 1).full(), dtype=bool)
    for x, r, _ in _points(2):
        J = mod.jacobian(0.0, x, p, r)
        assert np.all(J[~dense] == 0)


def test_hessian_is_exact(cart2):
    """The Hessian of λᵀx' in (x, r) (CasADi's jac_adj1) against central differences of λᵀJ."""
    _, _, mod, f, p = cart2
    Z, P, L = ca.MX.sym("z", 7), ca.MX.sym("p", 6), ca.MX.sym("l", 6)
    H = ca.Function("H", [Z, P, L], [ca.hessian(ca.dot(L, f(Z[:6], Z[6:], P)), Z)[0]])

    def grad(z, lam):
        x, r = z[:6], z[6:]
        return np.concatenate([mod.jacobian(0.0, x, p, r).T @ lam,
                               mod.input_jacobian(0.0, x, p, r).T @ lam])
    rng = np.random.default_rng(3)
    for x, r, _ in _points(3, 3):
        z, lam, h = np.concatenate([x, r]), rng.normal(size=6), 1e-5
        fd = np.array([(grad(z + h * e, lam) - grad(z - h * e, lam)) / (2 * h)
                       for e in np.eye(7)]).T
        Hv = np.array(H(z, p, lam))
        np.testing.assert_allclose(Hv, fd, rtol=0, atol=1e-5)
        np.testing.assert_allclose(Hv, Hv.T, rtol=0, atol=1e-12)
    # the structural zeros of the Hessian are declared: F enters x' linearly, nothing reads q0
    ja = f.reverse(1).jacobian()
    assert ja.name() == "jac_adj1_cart2"
    names = ja.name_out()
    assert ja.sparsity_out(names.index("jac_adj_r_r")).nnz() == 0
    hxx = np.array(ca.DM(ja.sparsity_out(names.index("jac_adj_x_x")), 1).full(), dtype=bool)
    assert not hxx[0].any() and not hxx[:, 0].any()


def test_without_hessian_no_second_derivatives(cart2):
    from codegen.pipeline.build import neutral_equations
    eq = neutral_equations(cart2[1], "cart2", [*cart2[0].constants], [*cart2[0].specifieds])
    text = casadi_sources(eq, "cart2", hessian=False)
    assert "jac_cart2(" in text and "adj1_cart2(" in text
    assert "int jac_adj1_cart2(" not in text and "int fwd1_cart2(" not in text


def test_library_exports_only_the_abi(cart2):
    """jac_, adj1_, jac_adj1_ are there; no fwd1_ (CasADi would prefer it to jac_), and the
    runtime's symbols stay hidden (-fvisibility=hidden)."""
    mod = cart2[2]
    lib = next((mod.source_dir / "casadi").glob("libcart2_casadi_*"))
    dll = ctypes.CDLL(str(lib))
    for sym in ("cart2", "jac_cart2", "adj1_cart2", "jac_adj1_cart2", "cart2_sparsity_out"):
        assert hasattr(dll, sym), sym
    for sym in ("fwd1_cart2", "cg_rhs", "cg_jacobian"):
        assert not hasattr(dll, sym), sym


def test_wrong_size_names_the_model_and_input(cart2):
    f, p = cart2[3], cart2[4]
    with pytest.raises(RuntimeError, match=r"cart2.*\n.*Input 0 \(x\) has mismatching shape"):
        f(np.zeros(5), [0.0], p)
    with pytest.raises(RuntimeError, match=r"Input 2 \(p\)"):
        f(np.zeros(6), [0.0], np.zeros(3))


def test_nan_state_fails_naming_the_model_and_input(cart2, capfd):
    f, p = cart2[3], cart2[4]
    with pytest.raises(RuntimeError, match="cart2"):
        f([0.0, np.nan, 0, 0, 0, 0], [0.0], p)
    assert "cart2: input x[1] is nan" in capfd.readouterr().err


def test_refuses_run_time_constraints(tmp_path):
    model = examples.four_bar("tree")
    ga = GibbsAppellMethod(**model.kwargs)
    with pytest.raises(ValueError, match="four_bar.*run-time constraint"):
        export_casadi(ga, "four_bar", tmp_path)
    assert not (tmp_path / "four_bar").exists() or not any((tmp_path / "four_bar").iterdir())


def test_export_casadi_standalone(cart2, tmp_path):
    _, ga, mod, _, p = cart2
    folder = export_casadi(ga, "cart2", tmp_path)
    names = {q.name for q in folder.iterdir()}
    assert {"cart2.c", "cart2.h", "cart2_casadi.c", "cg_runtime.h"} <= names
    lib = next(folder.glob("libcart2_casadi*"))
    g = ca.external("cart2", str(lib))
    for x, r, _ in _points(4, 2):
        np.testing.assert_allclose(np.array(g(x, r, p)).ravel(), mod.rhs(0.0, x, p, r),
                                   rtol=1e-13, atol=1e-13)
    # acados compiles CasADi code with int indices: the same sources build and run that way
    runtime = sorted(q.name for q in folder.glob("cg_*.c") if q.name != "cg_fused.c")
    proc = subprocess.run(["cc", "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror",
                           "-Dcasadi_int=int", "-o", "check", "cart2_casadi_check.c",
                           "cart2_casadi.c", "cart2.c", *runtime, "-lm"], cwd=folder,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    x, r = np.array([0.1, -1.2, -1.4, 0.3, 0.2, -0.1]), np.array([0.7])
    proc = subprocess.run([str(folder / "check"), *(repr(float(v)) for v in [*x, *r, *p])],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = {ln.split()[0]: np.array(ln.split()[1:], dtype=float)
             for ln in proc.stdout.splitlines()}
    assert set(lines) == {"cart2", "jac_cart2", "adj1_cart2", "jac_adj1_cart2"}
    np.testing.assert_allclose(lines["cart2"], mod.rhs(0.0, x, p, r), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(lines["adj1_cart2"], mod.jacobian(0.0, x, p, r).T @ np.ones(6),
                               rtol=1e-12, atol=1e-12)


def test_swingup_matches_the_sx_route(cart2):
    """The double pendulum swing-up (60 RK4 intervals, ∫F², IPOPT): the same optimum as
    KanesMethod + lambdify in SX; the exact Hessian needs fewer iterations than L-BFGS."""
    _, _, mod, f, p = cart2
    fsx = sx_dynamics(2, mod.constants, mod.specifieds)
    ext, w_ext = solve(f, p, "swingup", "exact")
    sx, w_sx = solve(fsx, p, "swingup", "exact")
    lbfgs, _ = solve(f, p, "swingup", "limited-memory")
    assert ext["success"] and sx["success"] and lbfgs["success"]
    assert abs(ext["objective"] - sx["objective"]) <= 1e-6 * abs(sx["objective"])
    assert np.max(np.abs(w_ext - w_sx)) < 1e-6
    assert ext["iterations"] < lbfgs["iterations"]
    print(f"\nswing-up: exact Hessian {ext['iterations']} iterations "
          f"(objective {ext['objective']:.6f}), limited-memory {lbfgs['iterations']} "
          f"(objective {lbfgs['objective']:.6f})")


@pytest.mark.parametrize("name", ["offset_pendulum", "chaplygin_sleigh"])
def test_hessian_over_parameters_without_inputs(name, tmp_path):
    """A 3-D body with q' nonlinear in (q, u) (offset_pendulum) and dependent speeds solved
    symbolically (chaplygin_sleigh); no inputs (r is empty); p differentiated too."""
    model = getattr(examples, name)()
    ga = GibbsAppellMethod(**model.kwargs)
    mod = generate(ga, name, output_dir=tmp_path, jacobian=True, parameter_jacobian=True)
    f = casadi_function(mod, ga, parameters=True)
    nx, nr, npar = mod.nq + mod.nu, len(mod.specifieds), len(mod.constants)
    assert nr == 0 and f.size1_in(1) == 0
    rng = np.random.default_rng(5)
    p = np.array([model.parameter_values[c] for c in mod.constants])
    p = p * rng.uniform(0.95, 1.05, npar)
    x = rng.normal(size=nx)
    np.testing.assert_array_equal(np.array(f(x, [], p)).ravel(), mod.rhs(0.0, x, p))
    Z, L = ca.MX.sym("z", nx + npar), ca.MX.sym("l", nx)
    y = f(Z[:nx], ca.MX(0, 1), Z[nx:])
    fun = ca.Function("H", [Z, L], [ca.hessian(ca.dot(L, y), Z)[0], ca.jacobian(y, Z)])

    def jac(z):
        return np.hstack([mod.jacobian(0.0, z[:nx], z[nx:]),
                          mod.parameter_jacobian(0.0, z[:nx], z[nx:])])
    z, lam, h = np.concatenate([x, p]), rng.normal(size=nx), 1e-5
    H, J = (np.array(v) for v in fun(z, lam))
    np.testing.assert_allclose(J, jac(z), rtol=0, atol=1e-9)
    fd = np.array([(jac(z + h * e).T @ lam - jac(z - h * e).T @ lam) / (2 * h)
                   for e in np.eye(nx + npar)]).T
    np.testing.assert_allclose(H, fd, rtol=0, atol=1e-5 * max(1.0, np.abs(H).max()))


def test_rk4_step_with_its_jacobian(cart2):
    _, _, mod, f, p = cart2
    step = rk4_step(f, 0.05, steps=2)
    x, r = np.array([0.1, -1.2, -1.4, 0.3, 0.2, -0.1]), np.array([0.7])

    def rk4(x, r):
        for _ in range(2):
            k1 = mod.rhs(0.0, x, p, r)
            k2 = mod.rhs(0.0, x + 0.0125 * k1, p, r)
            k3 = mod.rhs(0.0, x + 0.0125 * k2, p, r)
            k4 = mod.rhs(0.0, x + 0.025 * k3, p, r)
            x = x + 0.025 / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return x
    xn, Jx, Jr = (np.array(v) for v in step(x, r, p))
    np.testing.assert_allclose(xn.ravel(), rk4(x, r), rtol=0, atol=1e-14)
    h = 1e-6
    fd = np.array([(rk4(x + h * e, r) - rk4(x - h * e, r)) / (2 * h) for e in np.eye(6)]).T
    np.testing.assert_allclose(Jx, fd, rtol=0, atol=1e-7)
    fd_r = (rk4(x, r + h) - rk4(x, r - h)) / (2 * h)
    np.testing.assert_allclose(Jr.ravel(), fd_r, rtol=0, atol=1e-7)
    batch = step.map(4)
    X = np.tile(x[:, None], 4)
    np.testing.assert_allclose(np.array(batch(X, np.tile(r, 4), p)[0])[:, 3], xn.ravel(),
                               rtol=0, atol=1e-14)


def test_batched_function_equals_the_map_of_one_node(cart2, tmp_path):
    """casadi_function(..., nodes=N): one call into C for N nodes, the same values, first
    and second derivatives as CasADi's map of the one-node function, and block-diagonal
    sparsity (node k's derivatives read node k's column only)."""
    model, ga, mod, f, p = cart2
    N = 4
    fm = casadi_function(mod, ga, nodes=N)
    assert fm.name() == "cart2_map4" and fm.size_in(0) == (6, N) and fm.size_in(2) == (6, 1)
    rng = np.random.default_rng(11)
    X, R, L = rng.normal(size=(6, N)), rng.normal(size=(1, N)), rng.normal(size=(6, N))
    np.testing.assert_array_equal(np.array(fm(X, R, p)),
                                  np.column_stack([mod.rhs(0.0, X[:, k], p, R[:, k])
                                                   for k in range(N)]))
    Xs, Rs, Ls, Ps = ca.MX.sym("X", 6, N), ca.MX.sym("R", 1, N), ca.MX.sym("L", 6, N), \
        ca.MX.sym("P", 6)
    z = ca.vertcat(ca.vec(Xs), ca.vec(Rs))
    out = []
    for g in (fm, f.map(N)):
        y = g(Xs, Rs, Ps)
        fun = ca.Function("d", [Xs, Rs, Ps, Ls],
                          [ca.jacobian(y, z), ca.hessian(ca.sum1(ca.sum2(Ls * y)), z)[0]])
        out.append([np.array(v) for v in fun(X, R, p, L)])
    (J, H), (J1, H1) = out
    np.testing.assert_allclose(J, J1, rtol=0, atol=1e-12)
    np.testing.assert_allclose(H, H1, rtol=0, atol=1e-12)
    jx = fm.jacobian().sparsity_out(0)          # ∂xdot/∂x: 15 nonzeros a node, no coupling
    assert jx.nnz() == 15 * N
    dense = np.array(ca.DM(jx, 1).full(), dtype=bool)
    blocks = np.kron(np.eye(N, dtype=bool), np.ones((6, 6), dtype=bool))
    assert not np.any(dense & ~blocks)
    with pytest.raises(ValueError, match="nodes must be a whole number"):
        casadi_function(mod, ga, nodes=2.5)
