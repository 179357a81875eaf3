"""Relative kinematics (codegen.formulation.relative): velocities composed down the frame and point
trees as intermediates, against SymPy's expanded velocities and the public matrices."""
import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from codegen import GibbsAppellMethod, generate, examples as ex
from codegen.symbolic.expressions import memo_xreplace


def _at(eq, x, values):
    """M and F of EquationsOfMotion at state x and constants by name, its intermediates
    evaluated in order."""
    point = dict(zip(list(eq.q) + list(eq.u), map(sm.Float, x)))
    point.update({c: sm.Float(values[n]) for c, n in zip(eq.constants, eq.constant_names)})
    point.update({r: sm.Float(values[n]) for r, n in zip(eq.specifieds, eq.specified_names)})
    for item in eq.intermediates:
        point[item.symbol] = item.expr.xreplace(point)
    return (np.array(eq.M.xreplace(point), dtype=float),
            np.array(eq.F.xreplace(point), dtype=float).ravel())


def _public_at(matrices, *values):
    """Matrices of functions of time at a point (one memo across the shared subtrees)."""
    memo = {k: sm.Float(v) for d in values for k, v in d.items()}
    return [np.array([[float(memo_xreplace(e, memo)) for e in row] for row in X.tolist()])
            for X in matrices]


@pytest.mark.parametrize("speeds", ["body", "rates"])
def test_relative_equations_equal_the_expanded_ones_and_the_public(speeds):
    """spatial_chain(3) (frames three orientations deep: relative by default): the
    compiled form's mass matrix and forcing over the composed intermediates equal those
    over SymPy's expanded velocities, and the public matrices (codegen.formulation.public_matrices, formed
    from the stored vectors as KanesMethod's are: tests/formulation/test_stored_velocities.py), at
    two generic states."""
    model = ex.spatial_chain(3, speeds=speeds)
    rel = GibbsAppellMethod(**model.kwargs)
    eq_rel = rel.to_equations()
    assert eq_rel.intermediates, "the relative kinematics were not used"
    eq_exp = GibbsAppellMethod(**model.kwargs, relative_kinematics=False).to_equations()
    assert not eq_exp.intermediates
    values = {str(c): 0.3 + 0.1 * k for k, c in enumerate(model.constants)}
    values.update({str(r.func): -0.4 + 0.2 * k for k, r in enumerate(model.specifieds)})
    inputs = {r: values[str(r.func)] for r in model.specifieds}
    public = [rel.mass_matrix, rel.forcing]
    states = list(model.q_ind) + list(model.u_ind)
    for seed in (1, 2):
        x = np.random.default_rng(seed).uniform(-1.2, 1.2, len(states))
        M, F = _at(eq_rel, x, values)
        for other in (_at(eq_exp, x, values),
                      _public_at(public, dict(zip(states, x)), inputs,
                                 {c: values[str(c)] for c in model.constants})):
            np.testing.assert_allclose(M, other[0], rtol=1e-10, atol=1e-10 * np.abs(M).max())
            np.testing.assert_allclose(F, other[1].ravel(), rtol=1e-10,
                                       atol=1e-10 * (1 + np.abs(F).max()))


def test_stored_velocity_that_is_not_the_positions_derivative_falls_back():
    """A point whose velocity was set (set_vel) to something other than the derivative of
    its position: the relative path notices and the model keeps SymPy's velocities
    (which KanesMethod uses too), here M = 4 m."""
    q, u = me.dynamicsymbols('q u')
    m = sm.symbols('m')
    N = me.ReferenceFrame('N')
    O = me.Point('O')
    O.set_vel(N, 0)
    P = O.locatenew('P', q * N.x)
    P.set_vel(N, 2 * u * N.x)
    ga = GibbsAppellMethod(N, [q], [u], kd_eqs=[u - q.diff()], bodies=[me.Particle('p', P, m)],
                           relative_kinematics=True)
    ga.kanes_equations()
    assert not ga._need_formed()["items"]
    assert ga.mass_matrix == sm.Matrix([[4 * m]])


@pytest.mark.filterwarnings("ignore::UserWarning")   # SymPy: Q's velocity from B or O
def test_stored_velocity_on_the_way_to_an_unstored_point_is_checked():
    """The particle's point Q stores no velocity: SymPy derives it from its nearest
    neighbour that stores one, B, whose stored velocity is not its position's
    derivative. Q is composed through A, not B: the relative path checks every stored
    velocity of the point tree, on Q's way or not, and falls back (M = 4 m, as
    KanesMethod reads it)."""
    q, u = me.dynamicsymbols('q u')
    m = sm.symbols('m')
    N = me.ReferenceFrame('N')
    O = me.Point('O')
    O.set_vel(N, 0)
    A = O.locatenew('A', q * N.x)
    B = A.locatenew('B', N.z)
    B.set_vel(N, 2 * u * N.x)
    Q = A.locatenew('Q', N.y)
    Q.set_pos(B, N.y - N.z)
    ga = GibbsAppellMethod(N, [q], [u], kd_eqs=[u - q.diff()], bodies=[me.Particle('p', Q, m)],
                           relative_kinematics=True)
    eq = ga.to_equations()          # first: KanesMethod's matrices would derive Q's velocity
    assert not eq.intermediates
    assert eq.M == sm.Matrix([[4 * m]])


def test_relative_kinematics_flag_is_checked():
    with pytest.raises(TypeError, match="relative_kinematics"):
        GibbsAppellMethod(**ex.dumbbell().kwargs, relative_kinematics="yes")


@pytest.fixture(scope="module")
def humanoid_modules(tmp_path_factory):
    """The humanoid compiled three ways: by default (relative kinematics, the solve of
    the smaller program), with SymPy's expanded velocities and the dense solve, and
    relative with the articulated-body recursion."""
    model = ex.humanoid()
    out = tmp_path_factory.mktemp("humanoid")
    kw = dict(output_dir=out, constants=model.constants, specifieds=model.specifieds,
              jacobian=False)
    mods = [generate(GibbsAppellMethod(**model.kwargs), "hum_default", **kw),
            generate(GibbsAppellMethod(**model.kwargs, relative_kinematics=False),
                     "hum_expanded", recursive=False, **kw),
            generate(GibbsAppellMethod(**model.kwargs), "hum_tree", recursive=True, **kw)]
    return model, mods


def test_humanoid_three_ways_agree(humanoid_modules):
    model, mods = humanoid_modules
    p = mods[0].parameters(model.parameter_values)
    rng = np.random.default_rng(7)
    for _ in range(5):
        x = rng.uniform(-1.5, 1.5, mods[0].nx)
        r = rng.uniform(-1, 1, len(model.specifieds))
        ref = mods[1].rhs(0.0, x, p, r)
        for mod in (mods[0], mods[2]):
            np.testing.assert_allclose(mod.rhs(0.0, x, p, r), ref, rtol=1e-9, atol=1e-9)


def test_humanoid_conserves_energy(humanoid_modules):
    """Without torques, 2 s of motion from a bent pose keeps T + V to 1e-7 J."""
    model, mods = humanoid_modules
    mod = mods[0]
    ga = GibbsAppellMethod(**model.kwargs)
    energy = sm.lambdify([list(model.q_ind) + list(model.u_ind), model.constants],
                         ga.to_state(sum(b.kinetic_energy(model.frame) for b in model.bodies)
                                     + model.potential_energy))
    p = mod.parameters(model.parameter_values)
    pv = [model.parameter_values[str(c)] for c in model.constants]
    x0 = np.array(model.initial_state, dtype=float)
    x0[len(model.q_ind):] = 0.3
    res = mod.simulate((0.0, 2.0), x0, p, r=np.zeros(len(model.specifieds)), rtol=1e-11,
                       atol=1e-11)
    assert res.success, res.message
    e0 = energy(x0, pv)
    assert max(abs(energy(x, pv) - e0) for x in res.x) < 1e-7


def test_velocity_check_reads_each_part_once_and_still_catches():
    """Checking every composed velocity against SymPy's reads each of SymPy's vector parts
    once (a chain's velocities repeat their parents' parts): the probes' parts grow by a
    few per link, not with n². A stored velocity one part of which is off (1e-6 relative,
    a chain's last point) is still refused."""
    from codegen.formulation.points import NotRelative
    from codegen.formulation.relative import RelativeMotions
    parts = {}
    for n in (4, 8, 16):
        model = ex.n_pendulum_on_cart(n)
        rm = RelativeMotions(GibbsAppellMethod(**model.kwargs)._kin, model.frame, model.bodies)
        for b in model.bodies:
            rm.velocity(b.masscenter)
        parts[n] = max(len(p._parts) for p in rm._probe)
    assert parts[16] - parts[8] <= 2 * (parts[8] - parts[4]) + 2, parts
    model = ex.n_pendulum_on_cart(6)
    N, P = model.frame, model.bodies[-1].masscenter
    (comps, G), *_ = P.vel(N).args
    P.set_vel(N, P.vel(N) + 1e-6 * comps[0] * G.x)
    rm = RelativeMotions(GibbsAppellMethod(**model.kwargs)._kin, N, model.bodies)
    with pytest.raises(NotRelative, match="not the derivative of its position"):
        rm.velocity(P)
