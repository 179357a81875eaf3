"""GibbsAppellMethod against SymPy's KanesMethod at random numeric states."""
import zlib

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from codegen import GibbsAppellMethod
from codegen import examples as ex
from helpers import evaluate, kane_accelerations, kane_state

CASES = {
    "pendulum3": lambda: ex.n_pendulum_on_cart(3),
    "chain2": lambda: ex.spatial_chain(2),
    "offset_pendulum": ex.offset_pendulum,
    "chaplygin_sleigh": ex.chaplygin_sleigh,
    "rolling_disk_contact": ex.rolling_disk_contact,
    "dumbbell": ex.dumbbell,
    "rolling_disk": ex.rolling_disk,
    "stiff_pendulum": lambda: ex.stiff_pendulum(3),   # torques on frames without bodies
}


@pytest.mark.parametrize("name", CASES)
def test_accelerations_equal_kane(name):
    """Both forms: the reduced Gibbs-Appell equations (independent speeds) and
    the KanesMethod-shaped ones (all speeds, constraint rows last)."""
    model = CASES[name]()
    ga = GibbsAppellMethod(**model.kwargs)
    km = me.KanesMethod(**model.kwargs)
    km.kanes_equations(model.bodies, model.loads)
    assert ga.mass_matrix.shape == km.mass_matrix.shape
    assert ga.forcing.shape == km.forcing.shape
    p = len(model.u_ind)
    rng = np.random.default_rng(zlib.crc32(name.encode()))     # the same states every run
    for _ in range(3):
        vals = kane_state(model, ga, rng)
        kane = evaluate(km.mass_matrix, km.forcing, vals)
        reduced = evaluate(ga.reduced_mass_matrix, ga.reduced_forcing, vals)
        full = evaluate(ga.mass_matrix, ga.forcing, vals)
        tol = dict(rtol=1e-10, atol=1e-12 * np.abs(kane).max())
        assert np.allclose(reduced, kane[:p], **tol), (reduced, kane)
        assert np.allclose(full, kane, **tol), (full, kane)
        assert np.abs(kane).max() > 1e-6          # a non-trivial state


def test_mass_matrix_symmetric_and_derivative_of_S_numerically():
    model = ex.n_pendulum_on_cart(3)
    ga = GibbsAppellMethod(**model.kwargs)
    ud = [u.diff() for u in ga.u_independent]
    S = ga.gibbs_appell_function
    H = sm.hessian(S, ud)
    grad0 = sm.Matrix([S.diff(d) for d in ud]).xreplace({d: 0 for d in ud})
    vals = kane_state(model, ga, np.random.default_rng(7))
    num = lambda e: np.array(e.xreplace({k: v for k, v in vals.items() if isinstance(k, sm.Derivative)})
                             .xreplace(vals).evalf(), dtype=float)
    assert np.allclose(num(H), num(ga.reduced_mass_matrix), rtol=1e-12)
    assert np.allclose(num(ga.reduced_mass_matrix), num(ga.reduced_mass_matrix).T, rtol=1e-14)
    assert np.allclose(num(ga.generalized_active_forces - grad0), num(ga.reduced_forcing),
                       rtol=1e-12)


def test_full_state_form_and_rhs():
    model = ex.rolling_disk_contact()
    ga = GibbsAppellMethod(**model.kwargs)
    n, p = len(ga.q), len(ga.u)
    assert ga.mass_matrix_full.shape == (n + p, n + p)
    assert ga.forcing_full.shape == (n + p, 1)
    kd = ga.kindiffdict()
    assert set(kd) == {q.diff() for q in ga.q}
    vals = kane_state(model, ga, np.random.default_rng(3))
    xdot = evaluate(ga.mass_matrix_full, ga.forcing_full, vals)
    rhs = ga.rhs()
    rhs_num = np.array(rhs.xreplace(vals).evalf(), dtype=float).ravel()
    assert np.allclose(xdot, rhs_num, rtol=1e-12)
    # x' of the contact point equals the dependent speed from the constraints
    assert np.isclose(xdot[0], vals[model.u_dependent[0]], rtol=1e-12)


def test_implicit_kinematics_like_kane():
    model = ex.rolling_disk()
    ga = GibbsAppellMethod(**model.kwargs, explicit_kinematics=False)
    km = me.KanesMethod(**model.kwargs, explicit_kinematics=False)
    km.kanes_equations(model.bodies, model.loads)
    assert sm.simplify(ga.mass_matrix_kin - km.mass_matrix_kin) == sm.zeros(3, 3)
    assert sm.simplify(ga.forcing_kin - km.forcing_kin) == sm.zeros(3, 1)


def test_as_eom_method_of_system():
    """System.form_eoms(eom_method=GibbsAppellMethod) with joints, like KanesMethod."""
    def build():
        q1, q2, u1, u2 = me.dynamicsymbols('q1 q2 u1 u2')
        m1, m2, l1, l2, g = sm.symbols('m1 m2 l1 l2 g')
        ground = me.RigidBody('ground')
        sys = me.System.from_newtonian(ground)
        link1 = me.RigidBody('link1', mass=m1)
        link1.central_inertia = me.inertia(link1.frame, 0, 0, m1 * l1**2 / 12)
        link2 = me.RigidBody('link2', mass=m2)
        link2.central_inertia = me.inertia(link2.frame, 1, 2, m2 * l2**2 / 12)
        j1 = me.PinJoint('j1', ground, link1, q1, u1, child_point=-l1 / 2 * link1.x,
                         joint_axis=ground.z)
        j2 = me.PinJoint('j2', link1, link2, q2, u2, parent_point=l1 / 2 * link1.x,
                         child_point=-l2 / 2 * link2.x, joint_axis=link1.z)
        sys.add_joints(j1, j2)
        sys.apply_uniform_gravity(-g * ground.y)
        return sys, [m1, m2, l1, l2, g]
    s_ga, consts = build()
    s_ga.form_eoms(eom_method=GibbsAppellMethod)
    s_km, consts_k = build()
    s_km.form_eoms()
    vals = dict(zip(consts, [1.0, 2.0, 0.7, 1.1, 9.81]))
    vals_k = dict(zip(consts_k, [1.0, 2.0, 0.7, 1.1, 9.81]))
    state = [0.3, -0.8, 0.5, -1.2]
    vals.update(zip(list(s_ga.q) + list(s_ga.u), state))
    vals_k.update(zip(list(s_km.q) + list(s_km.u), state))
    ga = np.array(s_ga.rhs().xreplace(vals).evalf(), dtype=float).ravel()
    km = np.array(s_km.rhs().xreplace(vals_k).evalf(), dtype=float).ravel()
    assert np.allclose(ga, km, rtol=1e-10)
    eom = s_ga.eom_method._form_eoms()
    assert eom.shape == (2, 1)


def test_prescribed_support_motion(tmp_path):
    """A rheonomic system: the pendulum's support follows a specified s(t).

    The accelerations bring in s''(t) through the explicit time derivative;
    the equations equal Kane's exactly, and the compiled model takes s'' as
    the specified input named 's_dd'.
    """
    from codegen import generate
    q, u, s = me.dynamicsymbols('q u s')
    m, l, g = sm.symbols('m l g')
    N = me.ReferenceFrame('N')
    A = N.orientnew('A', 'Axis', [q, N.z])
    A.set_ang_vel(N, u * N.z)
    O = me.Point('O')
    O.set_vel(N, 0)
    S = O.locatenew('S', s * N.x)
    S.set_vel(N, s.diff() * N.x)
    P = S.locatenew('P', l * A.x)
    P.v2pt_theory(S, N, A)
    kw = dict(frame=N, q_ind=[q], u_ind=[u], kd_eqs=[u - q.diff()],
              bodies=[me.Particle('p', P, m)], forcelist=[(P, -m * g * N.y)])
    ga = GibbsAppellMethod(**kw)
    km = me.KanesMethod(**kw)
    km.kanes_equations(kw['bodies'], kw['forcelist'])
    assert sm.simplify(ga.forcing - km.forcing) == sm.zeros(1, 1)
    assert sm.simplify(ga.mass_matrix - km.mass_matrix) == sm.zeros(1, 1)
    assert ga.forcing.has(s.diff(me.dynamicsymbols._t, 2))
    mod = generate(ga, "moving_support", output_dir=tmp_path)
    assert mod.specifieds == ["s_dd"]
    x, p = np.array([0.3, 0.1]), np.array([9.81, 1.0, 2.0])        # g, l, m
    sdd = 1.5
    expected = (-9.81 * np.cos(0.3) + sdd * np.sin(0.3)) / 1.0     # l u' = -g cos q + s'' sin q
    assert np.isclose(mod.rhs(0.0, x, p, [sdd])[1], expected, rtol=1e-12)


def test_pythagorean_pairs_are_summed_in_the_formulation():
    """sin(q)**2 + cos(q)**2 on M's diagonal becomes 1 (exactly), nothing else changes."""
    from codegen.symbolic.simplify import pythagoras as _pythagoras
    model = ex.n_pendulum_on_cart(3)
    ga = GibbsAppellMethod(**model.kwargs)
    M = ga.reduced_mass_matrix
    for i in range(1, M.rows):                       # each link's diagonal entry: masses and lengths
        assert not M[i, i].atoms(sm.Function) and M[i, i].free_symbols <= set(model.constants)
    km = me.KanesMethod(**model.kwargs)
    km.kanes_equations(model.bodies, model.loads)
    assert sm.simplify(M - km.mass_matrix) == sm.zeros(M.rows, M.rows)
    a, b, x, y = sm.symbols("a b x y")
    assert _pythagoras(a * sm.sin(x)**2 + a * sm.cos(x)**2 + b, {}) == a + b
    for unchanged in (a * sm.sin(x)**2 + b * sm.cos(x)**2, sm.sin(x)**2 + sm.cos(y)**2,
                      a * sm.sin(x) + a * sm.cos(x)):
        assert _pythagoras(unchanged, {}) == unchanged
