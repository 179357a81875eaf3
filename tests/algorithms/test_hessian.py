"""The exact second-derivative program (codegen.algorithms.hessian), run as Python code: the
Hessian of λᵀx' it gives (H − CᵀU − UᵀC) against central differences of λᵀJ of the
compiled analytic Jacobian, its declared sparsity, and the double pendulum's values
against the symbolic derivatives of the equations read through (the former program)."""
from __future__ import annotations

import dataclasses
import math
import os

import numpy as np
import pytest
import sympy as sm
from sympy.printing.pycode import PythonCodePrinter

from codegen import GibbsAppellMethod, examples, generate
from codegen.algorithms.hessian import second_derivative_program
from codegen.pipeline.build import neutral_equations
from codegen.robots import from_urdf

#: the shared benchmark robots (as tests/support/robot_oracle.py finds them, without
#: needing Pinocchio)
SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "robots")
SHARED = SHARED if os.path.isdir(SHARED) else "/work/shared/robots"


def shared(name):
    path = os.path.join(SHARED, f"{name}.urdf")
    if not os.path.exists(path):
        pytest.skip(f"{path} is not here")
    return path


class _Printer(PythonCodePrinter):
    """Python code with the program's own C names for its inputs and intermediates."""

    def __init__(self, names):
        super().__init__({"standard": "python3"})
        self.names = names

    def _print(self, expr, **kwargs):
        if isinstance(expr, sm.Basic) and expr in self.names:
            return self.names[expr]
        return super()._print(expr, **kwargs)

    def _print_Symbol(self, expr):
        return expr.name

    _print_Dummy = _print_Symbol


def run(program, arrays: dict) -> dict:
    """The program's output arrays for the input arrays (name -> values), in floats."""
    env = {"math": math, "t": 0.0}
    for inp in program.inputs:
        env[inp.name] = float(arrays[inp.array][inp.index])
    printer = _Printer(program.names)
    for symbol, expr in program.temporaries:
        name = program.names.get(symbol, symbol.name)
        env[name] = eval(printer.doprint(expr), env)
    return {array: np.array([float(eval(printer.doprint(e), env)) for e in exprs])
            for array, exprs in program.outputs}


def _model(which):
    model = (from_urdf(shared(which)) if isinstance(which, str)
             else examples.n_pendulum_on_cart(which))
    ga = GibbsAppellMethod(**model.kwargs)
    ga.kanes_equations(model.bodies, model.loads)
    return model, ga


@pytest.fixture(scope="module", params=[2, "iiwa"])
def case(request, tmp_path_factory):
    """(equations, SecondDerivatives, compiled model, p) of the double pendulum on a cart
    and the iiwa (blocks x and r)."""
    model, ga = _model(request.param)
    eq = neutral_equations(ga, "m")
    sd = second_derivative_program(eq, ("x", "r"))
    mod = generate(ga, f"hess{request.param}", output_dir=tmp_path_factory.mktemp("hessian"),
                   jacobian=True)
    p = mod.parameters() if isinstance(request.param, str) else \
        np.array([model.parameter_values[c] for c in mod.constants])
    return eq, sd, mod, p


def _full_hessian(eq, sd, mod, p, x, r, lam):
    """(Hessian of λᵀx' over (x, r) from the program, J over (x, r) from the module)."""
    nq, nu = eq.nq, eq.nu
    J = np.hstack([mod.jacobian(0.0, x, p, r), mod.input_jacobian(0.0, x, p, r)])
    a = mod.rhs(0.0, x, p, r)[nq:]
    mu = np.linalg.solve(mod.mass_matrix(0.0, x, p, r).T, lam[nq:])
    out = run(sd.program, {"x": x, "r": r, "p": p, "a": a, "mu": mu, "lq": lam[:nq]})
    nd = sd.nd
    H = np.zeros((nd, nd))
    H[np.tril_indices(nd)] = out["H"]
    H = H + np.tril(H, -1).T
    C = out["C"].reshape(nu, nd)
    U = J[nq:]
    return H - C.T @ U - U.T @ C, J


def _points(n, nr, count, seed):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=n), rng.normal(size=nr), rng.normal(size=n)) for _ in range(count)]


def test_hessian_against_central_differences(case):
    eq, sd, mod, p = case
    nx, nr = sd.sizes["x"], sd.sizes["r"]

    def grad(z, lam):
        x, r = z[:nx], z[nx:]
        return np.hstack([mod.jacobian(0.0, x, p, r), mod.input_jacobian(0.0, x, p, r)]).T @ lam
    for x, r, lam in _points(nx, nr, 2, 7):
        Hv, J = _full_hessian(eq, sd, mod, p, x, r, lam)
        z, h = np.concatenate([x, r]), 1e-5
        fd = np.array([(grad(z + h * e, lam) - grad(z - h * e, lam)) / (2 * h)
                       for e in np.eye(sd.nd)]).T
        scale = max(1.0, np.abs(fd).max())
        np.testing.assert_allclose(Hv, fd, rtol=0, atol=1e-5 * scale)
        # the declared patterns hold every nonzero
        outside = np.ones((sd.nd, sd.nd), dtype=bool)
        for k, l in sd.hessian:
            outside[k, l] = False
        assert np.abs(Hv[outside]).max(initial=0.0) <= 1e-9 * scale
        outside = np.ones(J.shape, dtype=bool)
        for i, k in sd.jacobian:
            outside[i, k] = False
        assert np.abs(J[outside]).max(initial=0.0) == 0.0


def test_patterns_are_not_dense(case):
    """q0 (the cart's position; the iiwa's angle about the vertical) reaches nothing and the
    inputs enter linearly: those rows of H are declared zero (CasADi's sparsity is what
    is declared)."""
    _, sd, _, _ = case
    nx = sd.sizes["x"]
    r_cols = set(range(nx, sd.nd))
    assert not any(k in r_cols and l in r_cols for k, l in sd.hessian)
    assert not any(k == 0 or l == 0 for k, l in sd.hessian)


def _former(eq, blocks):
    """H and C of the former program: the equations read through, differentiated by sm.diff."""
    defs = {}
    for item in eq.intermediates:
        defs[item.symbol] = sm.sympify(item.expr).xreplace(defs)
    nq, nu = eq.nq, eq.nu
    M = sm.Matrix(nu, nu, lambda i, j: sm.sympify(eq.M[i, j]).xreplace(defs))
    F = [sm.sympify(eq.F[i]).xreplace(defs) for i in range(nu)]
    qdot = [sm.sympify(e).xreplace(defs) for e in eq.qdot]
    table = {"x": [*eq.q, *eq.u], "r": list(eq.specifieds), "p": list(eq.constants)}
    zs = [z for b in blocks for z in table[b]]
    a, mu, lq = sm.symbols(f"a0:{nu}"), sm.symbols(f"mu0:{nu}"), sm.symbols(f"lq0:{nq}")
    phi = sum(lq[i] * qdot[i] for i in range(nq)) + sum(
        mu[i] * (F[i] - sum(M[i, j] * a[j] for j in range(nu))) for i in range(nu))
    grad = [sm.diff(phi, z) for z in zs]
    H = [sm.diff(grad[k], zs[l]) for k in range(len(zs)) for l in range(k + 1)]
    C = [sm.diff(sum(M[j, i] * mu[j] for j in range(nu)), z) for i in range(nu) for z in zs]
    args = [*eq.q, *eq.u, *eq.specifieds, *eq.constants, *a, *mu, *lq]
    return sm.lambdify(args, [H, C], modules="math")


@pytest.mark.parametrize("blocks", [("x", "r"), ("x", "r", "p")])
@pytest.mark.parametrize("tree", [True, False])
def test_double_pendulum_equals_the_former_program(tree, blocks):
    """With its tree (the Newton–Euler residual) and without (the model's M and F)."""
    _, ga = _model(2)
    eq = neutral_equations(ga, "m")
    if not tree:
        eq = dataclasses.replace(eq, tree=None)
    sd = second_derivative_program(eq, blocks)
    former = _former(eq, blocks)
    rng = np.random.default_rng(11)
    nq, nu, nr, n_p = eq.nq, eq.nu, len(eq.specifieds), len(eq.constants)
    for _ in range(3):
        x, r, p = rng.normal(size=nq + nu), rng.normal(size=nr), rng.uniform(0.5, 2, size=n_p)
        a, mu, lq = rng.normal(size=nu), rng.normal(size=nu), rng.normal(size=nq)
        out = run(sd.program, {"x": x, "r": r, "p": p, "a": a, "mu": mu, "lq": lq})
        H, C = former(*x, *r, *p, *a, *mu, *lq)
        np.testing.assert_allclose(out["H"], H, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(out["C"], C, rtol=1e-12, atol=1e-12)
