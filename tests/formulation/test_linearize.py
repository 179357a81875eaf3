"""Linearization and the analytic Jacobian, against independent oracles:
Meijaard et al.'s bicycle benchmark, KanesMethod.linearize, central
differences of the compiled right-hand side, and consistent perturbations on
a closed loop's constraint manifold."""
import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from scipy.optimize import brentq, fsolve

from codegen import GibbsAppellMethod, examples as ex, generate
from helpers import evaluate, kane_state

t = me.dynamicsymbols._t


# -- the Whipple bicycle against Meijaard et al. (2007) ----------------------------------
@pytest.fixture(scope="module")
def bicycle(outdir):
    model = ex.whipple_bicycle()
    ga = GibbsAppellMethod(**model.kwargs)
    ga.kanes_equations()
    return model, ga, generate(ga, "bicycle", output_dir=outdir, jacobian=True)


def _upright_op(model, v):
    q1, q2, q5 = model.q_ind
    q4, = model.q_dependent
    u2, u3, u5 = model.u_ind
    u1, u4, u6 = model.u_dependent
    values = model.parameter_values
    op = {q1: 0, q2: 0, q4: 0, q5: 0, u1: 0, u2: 0, u4: 0, u5: 0,
          u3: v / values["WRrad"], u6: v / values["WFrad"]}
    op.update({u.diff(t): 0 for u in model.u_ind + model.u_dependent})
    return op


def test_meijaard_benchmark(bicycle):
    """Lean and steer at upright running, the speed kept a symbol: at 5 m/s the
    eigenvalues are Meijaard's to their 10 digits, and the stable range runs
    from the weave speed 4.2924 to the capsize speed 6.0243 m/s. The default
    constraint_solver (LU), with which KanesMethod.linearize returns nan here
    (the pivot it picks vanishes upright)."""
    model, ga, _ = bicycle
    v = sm.Symbol("v")
    A, B, r = ga.linearize(op_point=_upright_op(model, v), A_and_B=True)
    assert A.shape == (6, 6) and B.shape[1] == 0 and len(r) == 0
    values = {sm.Symbol(k): x for k, x in model.parameter_values.items()}
    block = sm.lambdify(v, A.xreplace(values).extract([1, 2, 3, 5], [1, 2, 3, 5]))

    def eig(speed):
        return np.linalg.eigvals(np.array(block(speed), dtype=float))
    lam = sorted(eig(5.0), key=lambda z: (z.real, z.imag))
    expected = [-14.0783896927, -0.7753418819 - 4.4648677138j,
                -0.7753418819 + 4.4648677138j, -0.3228664286]
    assert np.allclose(lam, expected, rtol=0, atol=1e-9)
    weave = brentq(lambda s: max(z.real for z in eig(s) if abs(z.imag) > 1e-9), 3.0, 5.0,
                   xtol=1e-10)
    capsize = brentq(lambda s: max(z.real for z in eig(s) if abs(z.imag) < 1e-9), 5.0, 8.0,
                     xtol=1e-10)
    assert abs(weave - 4.2924) < 1e-4 and abs(capsize - 6.0243) < 1e-4
    assert max(eig(4.0).real) > 0 and max(eig(5.5).real) < 0 and max(eig(6.5).real) > 0


def test_compiled_bicycle_jacobian(bicycle):
    """The generated Jacobian at upright running equals the symbolic
    linearization (lean, steer: q4 pitch stays put to first order there)."""
    model, ga, mod = bicycle
    speed = 5.0
    A, _, _ = ga.linearize(op_point=_upright_op(model, speed), A_and_B=True)
    values = {sm.Symbol(k): x for k, x in model.parameter_values.items()}
    symbolic = np.array(A.xreplace(values).evalf(), dtype=float)
    x = np.zeros(mod.nx)
    x[mod.states.index("u3")] = speed / model.parameter_values["WRrad"]
    J = mod.jacobian(0.0, x, mod.parameters(model.parameter_values))
    # symbolic over [q1, q2, q5, u2, u3, u5]; compiled over [q1, q2, q5, q4, u2, u3, u5]
    rows = [mod.states.index(s) for s in ("q1", "q2", "q5", "u2", "u3", "u5")]
    assert np.abs(J[np.ix_(rows, rows)] - symbolic).max() < 1e-10 * np.abs(symbolic).max()


# -- every built-in model: Kane, central differences -------------------------------------
def _point(model, mod, vals):
    """x, p, r of the compiled model from KanesMethod-oracle values."""
    by_name = {str(k.func) if isinstance(k, sm.Function) else str(k): v
               for k, v in vals.items() if not isinstance(k, sm.Derivative)}
    x = np.array([by_name[s] for s in mod.states])
    p = np.array([by_name[s] for s in mod.constants])
    r = np.array([by_name[s] for s in mod.specifieds])
    return x, p, r


@pytest.mark.parametrize("name", ["dumbbell", "rolling_disk", "pendulum3", "disk_contact"])
def test_jacobian_equals_kane_linearize(built, name):
    """mod.linearize equals KanesMethod.linearize (symbolic Jacobians, then the
    point) to 1e-12 at random states, inputs included."""
    model, ga, mod = built[name]
    rng = np.random.default_rng(7)
    vals = kane_state(model, ga, rng)
    x, p, r = _point(model, mod, vals)
    ud = mod.rhs(0.0, x, p, r if len(r) else None)
    km = me.KanesMethod(**model.kwargs)
    km.kanes_equations(model.bodies, model.loads)
    op = {k: v for k, v in vals.items() if not isinstance(k, sm.Symbol)}
    # u' at the point: f_2's Jacobian holds M(q) u'
    op.update(zip(km.u.diff(t), evaluate(km.mass_matrix, km.forcing, vals)))
    A, B, inputs = km.linearize(op_point=[op, {s: v for s, v in vals.items()
                                               if isinstance(s, sm.Symbol)}], A_and_B=True)
    A = np.array(A.evalf(), dtype=float)
    J, Jr = mod.linearize(x, p, r if len(r) else None)
    scale = max(1.0, np.abs(A).max())
    assert np.abs(J - A).max() < 1e-12 * scale, np.abs(J - A).max()
    if len(r):
        B = np.array(B.evalf(), dtype=float)
        order = [[str(i.func) for i in inputs].index(s) for s in mod.specifieds]
        assert np.abs(Jr - B[:, order]).max() < 1e-12 * max(1.0, np.abs(B).max())
    assert np.isfinite(ud).all()


def test_chain_jacobian_equals_symbolic_linearize(built):
    """The 3-D chain (KanesMethod.linearize takes half a minute on it): the
    generated Jacobian equals GibbsAppellMethod.linearize at a random state,
    which goes through SymPy's Linearizer, not through the generated code."""
    model, ga, mod = built["chain2"]
    rng = np.random.default_rng(3)
    vals = kane_state(model, ga, rng)
    x, p, r = _point(model, mod, vals)
    op = {k: v for k, v in vals.items() if not isinstance(k, (sm.Symbol, sm.Derivative))}
    ud = mod.rhs(0.0, x, p, r)[mod.nq:]
    op.update(zip([u.diff(t) for u in model.u_ind], ud))
    values = {k: v for k, v in vals.items() if isinstance(k, sm.Symbol)}
    A, B, inputs = ga.linearize(op_point=[op, values], A_and_B=True)
    A, B = np.array(A.evalf(), dtype=float), np.array(B.evalf(), dtype=float)
    J, Jr = mod.linearize(x, p, r)
    assert np.abs(J - A).max() < 1e-12 * max(1.0, np.abs(A).max())
    order = [[str(i.func) for i in inputs].index(s) for s in mod.specifieds]
    assert np.abs(Jr - B[:, order]).max() < 1e-12 * max(1.0, np.abs(B).max())


def _central(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))]).T


@pytest.fixture(scope="module")
def more_models(outdir):
    out = {}
    for name in ("offset_pendulum", "chaplygin_sleigh", "spring_damper", "stiff_pendulum",
                 "humanoid"):
        model = ex.EXAMPLES[name]()
        # the humanoid's derivative program is past the default's size limit: asked for
        out[name] = (model, generate(GibbsAppellMethod(**model.kwargs), name, output_dir=outdir,
                                     jacobian=True if name == "humanoid" else None))
    return out


@pytest.mark.parametrize("name", ["dumbbell", "rolling_disk", "pendulum3", "chain2", "disk_contact",
                                  "offset_pendulum", "chaplygin_sleigh", "spring_damper",
                                  "stiff_pendulum", "humanoid", "bicycle"])
def test_jacobian_equals_central_differences(built, more_models, bicycle, name):
    """Every built-in model without run-time constraints: d x'/dx and d x'/dr
    equal central differences of the compiled rhs to 1e-6 (relative to the
    largest entry of d x'/dx) at random states."""
    if name == "bicycle":
        model, _, mod = bicycle
    elif name in built:
        model, _, mod = built[name]
    else:
        model, mod = more_models[name]
    rng = np.random.default_rng(11)
    p = np.array([model.parameter_values.get(c, rng.uniform(0.5, 1.5)) for c in mod.constants])
    r = rng.uniform(-1, 1, len(mod.specifieds))
    rr = r if len(r) else None
    for _ in range(3):
        base = np.array(model.initial_state, float) if model.initial_state else np.zeros(mod.nx)
        x = base + rng.uniform(-0.3, 0.3, mod.nx)
        J, Jr = mod.linearize(x, p, rr)
        fd = _central(lambda z: mod.rhs(0.0, z, p, rr), x)
        assert np.abs(J - fd).max() < 1e-6 * max(1.0, np.abs(J).max())
        if len(r):
            fdr = _central(lambda s: mod.rhs(0.0, x, p, s), r)
            # relative to the model's scale: the stiff chain's rhs cancels 1e5-sized terms
            assert np.abs(Jr - fdr).max() < 1e-6 * max(1.0, np.abs(J).max())
        assert np.array_equal(mod.jacobian(0.0, x, p, rr), J)
        if len(r):
            assert np.array_equal(mod.input_jacobian(0.0, x, p, rr), Jr)


# -- the parameter sensitivities d x'/dp ------------------------------------------------
@pytest.fixture(scope="module")
def sensitive(built, outdir):
    return {name: generate(built[name][1], f"{name}_dp", output_dir=outdir,
                           parameter_jacobian=True)
            for name in ("pendulum3", "rolling_disk", "chain2")}


def _numeric(expr, values):
    derivs = {k: v for k, v in values.items() if isinstance(k, sm.Derivative)}
    rest = {k: v for k, v in values.items() if k not in derivs}
    return np.array(expr.xreplace(derivs).xreplace(rest).evalf(), dtype=float)


@pytest.mark.parametrize("name", ["pendulum3", "rolling_disk", "chain2"])
def test_parameter_jacobian(built, sensitive, name):
    """d x'/dp equals central differences of the compiled rhs over p (1e-6) and,
    for the models without constraints, KanesMethod's full equations
    differentiated symbolically, M^-1 (dF/dp - dM/dp x'), to 1e-12."""
    model, ga, _ = built[name]
    mod = sensitive[name]
    rng = np.random.default_rng(5)
    vals = kane_state(model, ga, rng)
    x, p, r = _point(model, mod, vals)
    rr = r if len(r) else None
    Jp = mod.parameter_jacobian(0.0, x, p, rr)
    assert Jp.shape == (mod.nx, len(mod.constants))
    fd = _central(lambda c: mod.rhs(0.0, x, c, rr), p)
    assert np.abs(Jp - fd).max() < 1e-6 * max(1.0, np.abs(Jp).max())
    if model.u_dependent:
        return
    km = me.KanesMethod(**model.kwargs)
    km.kanes_equations(model.bodies, model.loads)
    Mf, Ff = km.mass_matrix_full, km.forcing_full
    xdot = evaluate(Mf, Ff, vals)
    Mn = _numeric(Mf, vals)
    order = [[str(s.func) for s in list(km.q) + list(km.u)].index(n) for n in mod.states]
    by_name = {str(c): c for c in Ff.free_symbols | Mf.free_symbols if isinstance(c, sm.Symbol)}
    for k, c in enumerate(mod.constants):
        if c not in by_name:             # a constant the equations do not hold
            assert not Jp[:, k].any()
            continue
        sym = by_name[c]
        rhs = _numeric(Ff.diff(sym), vals).ravel() - _numeric(Mf.diff(sym), vals) @ xdot
        col = np.linalg.solve(Mn, rhs)[order]
        assert np.abs(Jp[:, k] - col).max() < 1e-12 * max(1.0, np.abs(col).max()), c


def test_parameter_jacobian_errors(built, sensitive):
    model, ga, mod = built["pendulum3"]
    p = mod.parameters(model.parameter_values)
    x = np.linspace(-0.4, 0.5, mod.nx)
    with pytest.raises(ValueError, match="regenerate it with parameter_jacobian=True"):
        mod.parameter_jacobian(0.0, x, p, [0.1])
    dp = sensitive["pendulum3"]
    with pytest.raises(ValueError, match=rf"out must be .* \({mod.nx}, {len(p)}\)"):
        dp.parameter_jacobian(0.0, x, p, [0.1], np.empty((mod.nx, len(p) + 1)))
    out = np.full((mod.nx, len(p)), np.nan)
    assert dp.parameter_jacobian(0.0, x, p, [0.1], out) is out
    assert np.array_equal(out, dp.parameter_jacobian(0.0, x, p, [0.1]))
    with pytest.raises(ValueError, match="not finite"):
        dp.parameter_jacobian(0.0, x, np.full(len(p), np.nan), [0.1])
    with pytest.raises(TypeError, match="parameter_jacobian must be True or False"):
        generate(ga, "bad_dp", output_dir="unused", parameter_jacobian=None)


# -- a closed loop: the linearization on the constraint manifold -------------------------
@pytest.fixture(scope="module")
def four_bar(outdir):
    tree = ex.four_bar()
    return tree, generate(GibbsAppellMethod(**tree.kwargs), "four_bar_lin", output_dir=outdir)


def test_four_bar_on_the_manifold(four_bar):
    """The four-bar (2 loop constraints, run-time SVD), away from equilibrium:
    A dx equals central differences of the rates between consistent perturbed
    states (projected back onto the loop), and A is zero across the
    constraints."""
    model, mod = four_bar
    p = mod.parameters(model.parameter_values)
    x = mod.project(np.array([1.0, 0.3, 1.5, 0.4, -0.2, 0.1]), p)
    A, B = mod.linearize(x, p)
    T = mod.tangent_basis(x, p)
    assert T.shape == (6, 2) and B.shape == (6, 0)
    h = 1e-5
    for d in T.T:
        plus, minus = mod.project(x + h * d, p), mod.project(x - h * d, p)
        fd = (mod.rhs(0.0, plus, p) - mod.rhs(0.0, minus, p)) / (2 * h)
        step = (plus - minus) / (2 * h)                 # d, to first order
        assert np.abs(A @ step - fd).max() < 1e-6 * max(1.0, np.abs(fd).max())
    normal = np.linalg.svd(T.T)[2][2:]                  # the constrained directions
    assert np.abs(A @ normal.T).max() < 1e-12 * np.abs(A).max()
    with pytest.raises(ValueError, match="violates the constraints"):
        mod.linearize(x + 0.1, p)
    with pytest.raises(ValueError, match="run-time constraints"):
        mod.jacobian(0.0, x, p)


def test_four_bar_eigenvalues_equal_the_reduced_model(four_bar):
    """At the loop's hanging equilibrium, the manifold linearization of the
    run-time-constrained four-bar has the eigenvalues of the symbolic
    linearization of the same mechanism in one independent coordinate
    (q2, q3 dependent; SymPy's Linearizer eliminates them)."""
    model, mod = four_bar
    p = mod.parameters(model.parameter_values)

    def static(q):          # the loop closed and no acceleration at rest
        x = np.concatenate([q, np.zeros(3)])
        return np.concatenate([mod.residuals(0.0, x, p)[:2], mod.rhs(0.0, x, p)[3:4]])
    q = fsolve(static, [-1.2, -0.9, -1.6], xtol=1e-14)
    x = np.concatenate([q, np.zeros(3)])
    assert np.abs(mod.rhs(0.0, x, p)).max() < 1e-9
    A, _ = mod.linearize(x, p)
    T = mod.tangent_basis(x, p)
    lam = np.sort_complex(np.linalg.eigvals(T.T @ A @ T))
    reduced = ex.four_bar(kind="reduced")
    ga = GibbsAppellMethod(**reduced.kwargs)
    ga.kanes_equations()
    qs = reduced.q_ind + reduced.q_dependent
    us = reduced.u_ind + reduced.u_dependent
    op = dict(zip(qs, q)) | {u: 0 for u in us} | {u.diff(t): 0 for u in us}
    Ar, _, _ = ga.linearize(op_point=op, A_and_B=True)
    values = {sm.Symbol(k): v for k, v in reduced.parameter_values.items()}
    Ar = np.array(Ar.xreplace(values).evalf(), dtype=float)
    expected = np.sort_complex(np.linalg.eigvals(Ar))
    assert np.allclose(lam, expected, rtol=1e-6, atol=1e-8)
    assert abs(lam.real).max() < 1e-6 and abs(lam.imag).max() > 1    # a conservative swing


# -- bad input ---------------------------------------------------------------------------
def test_operating_point_errors(built):
    model, ga, _ = built["pendulum3"]
    q, u = model.q_ind, model.u_ind
    full = {s: 0 for s in q + u}
    partial, _, _ = ga.linearize(op_point={s: 0 for s in q + u[:-1] + [s.diff(t) for s in u]},
                                 A_and_B=True)
    assert partial.has(u[-1]) and not partial.has(u[0])   # SymPy's meaning: it stays
    with pytest.raises(ValueError, match="not a coordinate"):
        ga.linearize(op_point=full | {me.dynamicsymbols("w"): 0}, A_and_B=True)
    A, B, r = ga.linearize(A_and_B=True)                 # no point: functions of the state
    assert any(A.has(s) for s in q) and len(r) == 1


def test_jacobian_errors(built, tmp_path):
    model, ga, mod = built["pendulum3"]
    p = mod.parameters(model.parameter_values)
    with pytest.raises(ValueError, match="x"):
        mod.jacobian(0.0, np.zeros(mod.nx + 1), p, [0.0])
    with pytest.raises(Exception, match="not finite|non-finite|nan"):
        mod.jacobian(0.0, np.full(mod.nx, np.nan), p, [0.0])
    # out=: written in place, and exactly the array a call without it returns
    x = np.linspace(-0.4, 0.5, mod.nx)
    out = np.full((mod.nx, mod.nx), np.nan)
    assert mod.jacobian(0.0, x, p, [0.1], out) is out
    assert np.array_equal(out, mod.jacobian(0.0, x, p, [0.1]))
    for bad in [np.empty((mod.nx, mod.nx + 1)), np.empty((mod.nx, mod.nx), ">f8"),
                np.empty((mod.nx, mod.nx), order="F"), np.empty(mod.nx * mod.nx),
                np.empty((mod.nx, mod.nx), np.float32)]:
        with pytest.raises(ValueError, match=rf"out must be .* \({mod.nx}, {mod.nx}\)"):
            mod.jacobian(0.0, x, p, [0.1], bad)
    plain = generate(ga, "no_jacobian", output_dir=tmp_path, jacobian=False)
    with pytest.raises(ValueError, match="regenerate"):
        plain.linearize(np.zeros(mod.nx), p, [0.0])
    # the integrators fall back to finite differences: the same trajectory to 1e-8
    x0 = np.array(model.initial_state, float)
    a = mod.simulate((0, 1), x0, p, [0.0], method="bdf", rtol=1e-10, atol=1e-10)
    b = plain.simulate((0, 1), x0, p, [0.0], method="bdf", rtol=1e-10, atol=1e-10)
    assert np.abs(a.x[-1] - b.x[-1]).max() < 1e-7
