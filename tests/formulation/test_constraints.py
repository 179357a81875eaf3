"""Run-time constraint elimination (Singh & Likins) against independent oracles."""
import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from scipy.integrate import solve_ivp

from codegen import ConvergenceError, GibbsAppellMethod, examples as ex, generate

t = me.dynamicsymbols._t
PARALLELOGRAM = (0.5, 1.0, 0.5, 1.0)


@pytest.fixture(scope="module")
def mech(tmp_path_factory):
    """name -> (model, ga, compiled module), each built once."""
    out_dir = tmp_path_factory.mktemp("mechanisms")
    builders = {
        "four_bar": lambda: ex.four_bar(),
        "four_bar_reduced": lambda: ex.four_bar("reduced"),
        "four_bar_3d": lambda: ex.four_bar(redundant="3d"),
        "four_bar_twice": lambda: ex.four_bar(redundant="twice"),
        "slider_crank": lambda: ex.slider_crank(),
        "slider_crank_reduced": lambda: ex.slider_crank("reduced"),
        "parallelogram": lambda: ex.four_bar(lengths=PARALLELOGRAM),
    }
    out = {}
    for name, build in builders.items():
        model = build()
        ga = GibbsAppellMethod(**model.kwargs)
        out[name] = (model, ga, generate(ga, name, output_dir=out_dir))
    return out


def params(model, mod, alpha=0.0, beta=0.0):
    vals = dict(model.parameter_values, baumgarte_alpha=alpha, baumgarte_beta=beta)
    return np.array([vals[c] for c in mod.constants])


def consistent_state(model, mod, p, rng):
    x = np.array(model.initial_state, dtype=float)
    x[:mod.nq] += rng.uniform(-0.2, 0.2, mod.nq)
    x[mod.nq:] = rng.uniform(-2, 2, mod.nu)
    return mod.project(x, p)


def numeric(expr, model, x, p_names, p):
    by_name = {str(c): c for c in model.constants}
    vals = {by_name[n]: v for n, v in zip(p_names, p) if n in by_name}
    states = list(model.q_ind) + list(model.q_dependent) + list(model.u_ind)
    vals.update(zip(states, x))
    return np.array(sm.sympify(expr).xreplace(vals).evalf(), dtype=float)


def augmented(model, ga, mod, x, p):
    """u' and lambda from [[M, A^T], [A, 0]] [u'; -lambda] = [F; B'] on the SymPy equations."""
    M = numeric(ga.mass_matrix, model, x, mod.constants, p)
    F = numeric(ga.forcing, model, x, mod.constants, p).ravel()
    A, _ = ga.constraint_matrices
    A = numeric(A, model, x, mod.constants, p)
    Bd = numeric(ga.constraint_rate, model, x, mod.constants, p).ravel()
    m = A.shape[0]
    K = np.block([[M, A.T], [A, np.zeros((m, m))]])
    return K, np.concatenate([F, Bd]), M, F, A


@pytest.mark.parametrize("name", ["four_bar", "slider_crank"])
def test_equals_lagrange_multipliers(mech, name):
    model, ga, mod = mech[name]
    p = params(model, mod)
    rng = np.random.default_rng(1)
    for _ in range(4):
        x = consistent_state(model, mod, p, rng)
        assert np.abs(mod.residuals(0.0, x, p)).max() < 1e-10
        K, rhs, M, F, A = augmented(model, ga, mod, x, p)
        sol = np.linalg.solve(K, rhs)
        ud = mod.rhs(0.0, x, p)[mod.nq:]
        assert np.allclose(ud, sol[:mod.nu], rtol=1e-10, atol=1e-10 * abs(sol).max())
        lam = mod.constraint_forces(0.0, x, p)
        assert np.allclose(A.T @ lam, M @ ud - F, atol=1e-9 * abs(F).max())
        assert np.allclose(lam, -sol[mod.nu:], rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("name", ["four_bar", "slider_crank"])
def test_equals_one_coordinate_model(mech, name):
    """The same mechanism with one independent coordinate (dependent speeds eliminated)."""
    model, ga, mod = mech[name]
    rmodel, rga, rmod = mech[name + "_reduced"]
    p = params(model, mod)
    pr = np.array([model.parameter_values[c] for c in rmod.constants])
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = consistent_state(model, mod, p, rng)
        nq = mod.nq
        xr = np.concatenate([x[:nq], [x[nq]]])        # q1, dependent q's, u1
        assert rmod.states[:nq] == mod.states[:nq]
        assert np.isclose(mod.rhs(0.0, x, p)[nq], rmod.rhs(0.0, xr, pr)[nq], rtol=1e-10)


@pytest.mark.parametrize("redundant", ["four_bar_3d", "four_bar_twice"])
def test_redundant_constraints(mech, redundant):
    model, ga, mod = mech["four_bar"]
    rmodel, rga, rmod = mech[redundant]
    p = params(model, mod)
    rng = np.random.default_rng(4)
    x = consistent_state(model, mod, p, rng)
    K, *_ = augmented(rmodel, rga, rmod, x, p)
    assert np.linalg.matrix_rank(K) < K.shape[0]            # the multiplier system is singular
    assert np.allclose(rmod.rhs(0.0, x, p), mod.rhs(0.0, x, p), rtol=1e-10, atol=1e-10)
    lam = rmod.constraint_forces(0.0, x, p)                  # least-norm multipliers
    M = rmod.mass_matrix(0.0, x, p)
    A = numeric(rga.constraint_matrices[0], rmodel, x, rmod.constants, p)
    assert np.allclose(A.T @ lam, M @ rmod.rhs(0.0, x, p)[3:] - rmod.forcing(0.0, x, p), atol=1e-9)


def energy_function(model, ga, **overrides):
    states = list(ga.state)
    consts = sorted(model.constants, key=str)
    f = sm.lambdify([states, consts], ga.to_state(model.energy()), "numpy")
    values = dict(model.parameter_values, **overrides)
    pc = [values[str(c)] for c in consts]
    return lambda x: f(x, pc)


def test_long_run_stabilized(mech):
    model, ga, mod = mech["four_bar"]
    p = params(model, mod, alpha=20.0, beta=20.0)
    x0 = mod.project(np.array(model.initial_state), p)
    sol = solve_ivp(mod.rhs, (0, 10), x0, args=(p,), method="DOP853", rtol=1e-10, atol=1e-10,
                    dense_output=False, t_eval=np.linspace(0, 10, 401))
    assert sol.success
    res = np.array([mod.residuals(0.0, x, p) for x in sol.y.T])
    assert np.abs(res[:, :mod.nh]).max() < 1e-8
    energy = energy_function(model, ga)
    E = np.array([energy(x) for x in sol.y.T])
    assert abs(E - E[0]).max() / abs(E[0]) < 1e-6
    assert np.ptp(sol.y[0]) > 1.0                             # the crank really turned


def test_drift_without_stabilization_is_what_baumgarte_removes(mech):
    """Same run with alpha = beta = 0 drifts more: the stabilization does something."""
    model, ga, mod = mech["four_bar"]
    out = []
    for ab in (0.0, 20.0):
        p = params(model, mod, alpha=ab, beta=ab)
        x0 = mod.project(np.array(model.initial_state), p)
        sol = solve_ivp(mod.rhs, (0, 10), x0, args=(p,), method="RK45", rtol=1e-6, atol=1e-6)
        out.append(np.abs(mod.residuals(0.0, sol.y[:, -1], p)[:mod.nh]).max())
    assert out[1] < out[0] / 10, out


@pytest.mark.parametrize("alpha,beta", [(0.0, 0.0), (5.0, 5.0), (20.0, 0.0), (20.0, 20.0)])
def test_parallelogram_through_folded_configuration(mech, alpha, beta):
    """The constraint rank drops where all links are collinear (q1 = 0, pi); the motion
    goes through: finite, on the constraints, energy kept. With a position term
    (beta > 0) it may leave the fold on the other (anti-parallelogram) branch, which
    the rank drop makes reachable (which branch depends on rounding); without one
    it stays a parallelogram."""
    model, ga, mod = mech["parallelogram"]
    p = params(model, mod, alpha=alpha, beta=beta)
    p[mod.constants.index("g")] = 0.0                         # turn freely, no gravity
    x0 = mod.project(np.array([0.5, 0.0, 0.5, 3.0, 0.0, 3.0]), p)
    sol = solve_ivp(mod.rhs, (0, 4), x0, args=(p,), method="DOP853", rtol=1e-10, atol=1e-10,
                    max_step=0.01)
    assert sol.success and np.isfinite(sol.y).all()
    res = np.array([mod.residuals(0.0, x, p) for x in sol.y.T])
    assert np.abs(res).max() < 1e-8
    energy = energy_function(model, ga, g=0.0)
    E = np.array([energy(x) for x in sol.y.T])
    assert abs(E - E[0]).max() / abs(E[0]) < 1e-4
    folds = np.sum(np.abs(np.diff(np.floor(sol.y[0] / np.pi))) > 0)
    assert folds >= 1                                         # it reached a folded configuration
    if beta == 0.0:
        assert sol.y[0, -1] > 12.0 and abs(sol.y[1]).max() < 1e-6    # still a parallelogram


def test_simulation_starts_on_the_constraints(mech):
    """simulate and simulate_batch refuse an x0 off the constraints (the
    elimination would carry the violation along), naming the residuals; the
    projected state runs, stays on the constraints, and a batch names its row."""
    model, ga, mod = mech["four_bar"]
    p = params(model, mod, alpha=5.0, beta=5.0)
    guess = np.array(model.initial_state)
    with pytest.raises(ValueError, match=r"x0 is off the constraints \(max\|f\| = .*project\(x0, p\)"):
        mod.simulate((0, 1), guess, p)
    x0 = mod.project(guess, p)
    res = mod.simulate((0, 2), x0, p, rtol=1e-10, atol=1e-10)
    assert res.success
    assert max(abs(mod.residuals(0.0, x, p)).max() for x in res.x) < 1e-8
    with pytest.raises(ValueError, match="row 1: x0 is off the constraints"):
        mod.simulate_batch((0, 1), np.vstack([x0, guess]), p)
    t, X, status = mod.simulate_batch((0, 1), np.vstack([x0, np.full_like(x0, np.nan)]), p)
    assert list(status) == [0, 1]                       # a non-finite row fails with its status


def test_project_reports_what_it_cannot_reach(mech):
    model, ga, mod = mech["four_bar"]
    p = params(model, mod)
    p[mod.constants.index("d")] = 5.0                         # ground longer than all links together
    with pytest.raises(ConvergenceError, match=r"project did not reach .* max\|f\| = "):
        mod.project(np.array(model.initial_state), p)
    with pytest.raises(ValueError, match="x is not finite"):
        mod.project(np.array([np.nan, 0, 0, 0, 0, 0]), params(model, mod))


def test_unconstrained_model_has_no_constraint_api(built):
    _, _, disk = built["rolling_disk"]
    assert not hasattr(disk, "project")
    with pytest.raises(ValueError, match="no run-time constraints"):
        disk.dynamics.residuals(0.0, np.ones(6), np.ones(3))


def test_bad_constraints():
    model = ex.four_bar()
    q1, q2, q3 = model.q_ind
    u1 = model.u_ind[0]
    z = me.dynamicsymbols("z")
    kw = model.kwargs
    with pytest.raises(ValueError, match=r"configuration_constraints\[2\] contains z\(t\), which is neither a coordinate"):
        GibbsAppellMethod(**dict(kw, configuration_constraints=list(kw["configuration_constraints"]) + [q1 - z]))
    with pytest.raises(ValueError, match="not linear"):
        GibbsAppellMethod(**dict(kw, velocity_constraints=[u1**2]))
    with pytest.raises(ValueError, match="zero degrees of freedom"):
        GibbsAppellMethod(**dict(kw, configuration_constraints=list(kw["configuration_constraints"]) + [q1 - 1]))


def test_baumgarte_constants_come_last_with_defaults(tmp_path):
    """A user's constants need not list the generator's own Baumgarte constants:
    they are appended, with documented defaults that parameters() fills in."""
    from codegen.equations.equations_of_motion import DEFAULTS
    model = ex.four_bar()
    ga = GibbsAppellMethod(**model.kwargs)
    mod = generate(ga, "fb_order", constants=list(model.constants), output_dir=tmp_path)
    assert mod.constants == [str(c) for c in model.constants] + ["baumgarte_alpha",
                                                                  "baumgarte_beta"]
    p = mod.parameters(model.parameter_values)
    assert list(p[-2:]) == [DEFAULTS["baumgarte_alpha"], DEFAULTS["baumgarte_beta"]]
    assert mod.parameters(model.parameter_values, baumgarte_alpha=0.0)[-2] == 0.0   # tunable
    with pytest.raises(ValueError, match=r"parameters\(\) has no value for l1"):
        mod.parameters({})
    with pytest.raises(ValueError, match="wrong is not a constant of the model"):
        mod.parameters(model.parameter_values, wrong=1.0)
