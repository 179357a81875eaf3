"""The regressor through a closed loop: the four-bar reduced symbolically (q_dependent,
u_dependent) and left to the run-time elimination (configuration constraints alone).
Oracles: the compiled model's inverse dynamics at states solved onto the closure
numerically (SciPy), projected onto the constraints' null space computed here from the
closure's Jacobian (SymPy, lambdified), and the SVD rank of the stacked regressors."""
import numpy as np
import pytest
import sympy as sm
from scipy.optimize import fsolve

from codegen import GibbsAppellMethod, examples, generate
from codegen.identification import regressor

def closure_functions(model):
    """f(q), J = ∂f/∂q and (J̇ u) as functions of (q, u), numerically (u = q' here)."""
    q = list(model.q_ind) + list(model.q_dependent or [])
    qs, us = sm.symbols(f"q0:{len(q)}"), sm.symbols(f"v0:{len(q)}")
    values = {sm.Symbol(k): v for k, v in model.parameter_values.items()}
    f = sm.Matrix(model.configuration_constraints).xreplace(dict(zip(q, qs))).xreplace(values)
    f = f.subs({s: v for s, v in values.items()})
    J = f.jacobian(qs)
    Jdu = (J * sm.Matrix(us)).jacobian(qs) * sm.Matrix(us)
    return (sm.lambdify([qs], f), sm.lambdify([qs], J), sm.lambdify([qs, us], Jdu))


GUESS = {"four_bar": [1.0, 0.3, 1.5], "slider_crank": [0.5, -0.1, 1.2]}
MECHANISMS = {"four_bar": (examples.four_bar, 8), "slider_crank": (examples.slider_crank, 6)}


def consistent(model, rng, f, J, Jdu, guess=GUESS["four_bar"]):
    """(q, u, u', T) on the closure: q1 drawn near guess, the others solved; u1, u1'
    drawn, the others from J u = 0 and J u' + J̇ u = 0; T = [I; A], u = T u1."""
    guess = np.array(guess)
    q1 = guess[0] + rng.uniform(-0.4, 0.4)
    dep = fsolve(lambda z: np.ravel(f(np.r_[q1, z])), guess[1:], xtol=1e-13)
    q = np.r_[q1, dep]
    assert np.abs(f(q)).max() < 1e-12
    Jq = np.array(J(q), dtype=float)
    A = -np.linalg.solve(Jq[:, 1:], Jq[:, :1])
    u1, a1 = rng.uniform(-1, 1), rng.uniform(-1, 1)
    u = np.r_[u1, (A * u1).ravel()]
    w = -np.linalg.solve(Jq[:, 1:], np.ravel(Jdu(q, u)))
    ud = np.r_[a1, (A * a1).ravel() + w]
    return q, u, ud, np.vstack([np.eye(1), A])


@pytest.mark.parametrize("mechanism, kind", [("four_bar", "reduced"), ("four_bar", "tree"),
                                             ("slider_crank", "reduced"),
                                             ("slider_crank", "tree")])
def test_closed_loop(outdir, mechanism, kind):
    """Y_r π equals the compiled model's inverse dynamics (reduced: its own; run-time:
    Tᵀ times the tree's at the consistent u'), and the exact count of base parameters
    equals the SVD rank of 40 stacked Y_r. The two forms give the same base."""
    make, count = MECHANISMS[mechanism]
    model = make(kind)
    reg = regressor(model)
    assert reg.speeds == ["u1"] and reg.rank == count
    assert reg.base == regressor(make("tree" if kind == "reduced" else "reduced")).base
    mod = reg.generate(f"id_{mechanism}_{kind}", output_dir=outdir)
    dyn = generate(GibbsAppellMethod(**model.kwargs), f"id_{mechanism}_{kind}_dyn",
                   output_dir=outdir, jacobian=False)
    p = dyn.parameters(model.parameter_values)
    pi = np.array([reg.values[s] for s in reg.parameters])
    beta = np.array(reg.base_values)
    funcs = closure_functions(model)
    rng = np.random.default_rng(1)
    Ys, worst = [], 0.0
    for _ in range(40):
        q, u, ud, T = consistent(model, rng, *funcs, guess=GUESS[mechanism])
        if kind == "reduced":
            x = np.r_[q, u[:1]]
            tau = dyn.inverse_dynamics(0.0, x, ud[:1], p)
        else:
            x = np.r_[q, u]
            tau = T.T @ dyn.inverse_dynamics(0.0, x, ud, p)
        Y = mod.regressor(x, ud[:1])
        worst = max(worst, np.abs(Y @ pi - tau).max() / max(1.0, np.abs(tau).max()))
        assert np.allclose(mod.base_regressor(x, ud[:1]) @ beta, Y @ pi, rtol=0, atol=1e-10)
        Ys.append(Y)
    assert worst < 1e-12
    s = np.linalg.svd(np.vstack(Ys), compute_uv=False)
    s = s / s[0]
    assert s[count - 1] > 1e-8 and s[count] < 1e-13


def test_closure_points_are_exact():
    """The exact states lie on the closure exactly: the four-bar's closure polynomials
    vanish at them in the number field (codegen.identification.algebraic), and the
    dependent sines and cosines are irrational there."""
    import random
    from fractions import Fraction
    from codegen.identification.algebraic import Algebraic, closure_point
    from codegen.identification.loops import closure_polynomials, split_speeds
    model = examples.four_bar("reduced")
    split = split_speeds(model)
    values = {k: sm.Rational(str(v)) for k, v in model.parameter_values.items()}
    polys, pairs, _ = closure_polynomials(split, values)
    kin = split.kin
    point = closure_point(polys, [pairs[kin.qs[0]]], [pairs[s] for s in kin.qs[1:]],
                          random.Random(3))
    for poly in polys + [s ** 2 + c ** 2 - 1 for s, c in pairs.values()]:
        P = sm.Poly(poly, *pairs[kin.qs[0]], *pairs[kin.qs[1]], *pairs[kin.qs[2]])
        total = Fraction(0)
        for powers, coeff in P.terms():
            term = Fraction(int(sm.Rational(coeff).p), int(sm.Rational(coeff).q))
            for sym, e in zip(P.gens, powers):
                term = term * point[sym] ** e
            total = total + term
        assert total == 0 if isinstance(total, Fraction) else total.c == []
    assert sum(isinstance(v, Algebraic) for v in point.values()) >= 2
