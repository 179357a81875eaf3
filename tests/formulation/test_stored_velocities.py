"""Velocities and accelerations set by hand are the model, as KanesMethod reads them.

SymPy's rule: an angular velocity stored with ``set_ang_vel`` is the frame's
angular velocity even where it is not the rate of the frame's orientation;
a point's velocity is what ``set_vel``, ``v1pt_theory`` or ``v2pt_theory``
stored; a stored acceleration (``set_acc``, ``a2pt_theory``, ``set_ang_acc``)
replaces the derivative of the velocity; the derivative of a vector is taken
frame part by frame part with each frame's stored angular velocity. Each case
below is formed by KanesMethod and by GibbsAppellMethod (with the relative
kinematics left to choose, forced on and forced off), and the mass matrix and
forcing must agree at generic states, consistent and inconsistent models alike.
"""
import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from codegen import GibbsAppellMethod, generate

t = me.dynamicsymbols._t
m, l, g, k = sm.symbols('m l g k')


def _conical(consistent):
    """PyDy's conical pendulum: 'Space' angles, then set_ang_vel by hand."""
    a, b, w, d = me.dynamicsymbols('a b w d')
    N, A = me.ReferenceFrame('N'), me.ReferenceFrame('A')
    A.orient(N, 'Space', [a, b, 0], 'ZXY')
    if not consistent:
        A.set_ang_vel(N, w * N.z + d * N.x)
    O = me.Point('O')
    O.set_vel(N, 0)
    P = O.locatenew('P', -l * A.y)
    P.v2pt_theory(O, N, A)
    body = me.RigidBody('B', P, A, m, (me.inertia(A, 1, 2, 3), P))
    return dict(frame=N, q_ind=[a, b], u_ind=[w, d], kd_eqs=[w - a.diff(), d - b.diff()]), \
        [body], [(P, -m * g * N.y)]


def _set_vel_particle():
    """A particle whose velocity is set by hand, not its position's derivative."""
    q1, q2, u1, u2 = me.dynamicsymbols('q1 q2 u1 u2')
    N = me.ReferenceFrame('N')
    A = N.orientnew('A', 'Axis', [q1, N.z])
    O = me.Point('O')
    O.set_vel(N, 0)
    P = O.locatenew('P', l * A.x + q2 * N.z)
    P.set_vel(N, l * u1 * A.y + u2 * N.z + k * q2 * u1 * N.x)
    return dict(frame=N, q_ind=[q1, q2], u_ind=[u1, u2],
                kd_eqs=[u1 - q1.diff(), u2 - q2.diff()]), \
        [me.Particle('p', P, m)], [(P, -m * g * N.z + k * q1 * A.x)]


def _collar(consistent):
    """A collar sliding on a rotating rod (v1pt_theory), the rod a rigid body."""
    q1, q2, u1, u2 = me.dynamicsymbols('q1 q2 u1 u2')
    N = me.ReferenceFrame('N')
    B = N.orientnew('B', 'Axis', [q1, N.z])
    if not consistent:
        B.set_ang_vel(N, 2 * u1 * N.z + u2 * B.x)
    O = me.Point('O')
    O.set_vel(N, 0)
    C = O.locatenew('C', l / 2 * B.x)
    C.v2pt_theory(O, N, B)
    P = O.locatenew('P', q2 * B.x)
    P.set_vel(B, u2 * B.x)
    P.v1pt_theory(O, N, B)
    rod = me.RigidBody('rod', C, B, m, (me.inertia(B, 1, 2, 3, 0.1, 0.2, 0.3), C))
    return dict(frame=N, q_ind=[q1, q2], u_ind=[u1, u2],
                kd_eqs=[u1 - q1.diff(), u2 - q2.diff()]), \
        [rod, me.Particle('collar', P, 2 * m)], [(P, -k * q2 * B.x), (B, k * u1 * N.z)]


def _chain(ang_vel="orient", stored_acc=False):
    """Three rigid bodies, each frame oriented from the last (deep enough for the
    relative kinematics), with one joint's angular velocity set by hand (consistent
    with its orientation or not) and, optionally, stored accelerations."""
    q = me.dynamicsymbols('q1:4')
    u = me.dynamicsymbols('u1:4')
    N = me.ReferenceFrame('N')
    B1 = N.orientnew('B1', 'Axis', [q[0], N.z])
    B2 = B1.orientnew('B2', 'Axis', [q[1], B1.x])
    B3 = B2.orientnew('B3', 'Axis', [q[2], B2.y])
    if ang_vel == "consistent":
        B2.set_ang_vel(B1, q[1].diff() * B1.x)
    elif ang_vel == "inconsistent":
        B2.set_ang_vel(B1, (u[1] + u[0] / 2) * B1.x)
    O = me.Point('O')
    O.set_vel(N, 0)
    P1 = O.locatenew('P1', l * B1.x)
    P2 = P1.locatenew('P2', l * B2.y)
    P3 = P2.locatenew('P3', l * B3.z)
    bodies = []
    for i, (P, F, base) in enumerate([(P1, B1, O), (P2, B2, P1), (P3, B3, P2)]):
        P.v2pt_theory(base, N, F)
        if stored_acc:
            P.a2pt_theory(base, N, F)
        bodies.append(me.RigidBody(f'b{i}', P, F, m * (i + 1),
                                   (me.inertia(F, 1 + i, 2, 3 - i / 2, 0.1), P)))
    if stored_acc == "inconsistent":
        P3.set_acc(N, P3.acc(N) + k * q[0] * N.x)
        B3.set_ang_acc(N, B3.ang_acc_in(N) + k * u[1] * B3.z)
    loads = [(b.masscenter, -b.mass * g * N.z) for b in bodies] + [(B3, k * u[2] * B2.y)]
    return dict(frame=N, q_ind=list(q), u_ind=list(u),
                kd_eqs=[ui - qi.diff() for ui, qi in zip(u, q)]), bodies, loads


def _offset_inertia(consistent):
    """A rigid body whose inertia is given about its joint, with its mass centre's
    velocity stored by hand (consistent with the joint's or not)."""
    q1, q2, u1, u2 = me.dynamicsymbols('q1 q2 u1 u2')
    N = me.ReferenceFrame('N')
    A = N.orientnew('A', 'Axis', [q1, N.z])
    B = A.orientnew('B', 'Axis', [q2, A.x])
    O = me.Point('O')
    O.set_vel(N, 0)
    C = O.locatenew('C', l * B.y + l / 3 * B.z)
    if consistent:
        C.v2pt_theory(O, N, B)
    else:
        C.set_vel(N, l * u1 * B.x + k * u2 * B.z)
    body = me.RigidBody('b', C, B, m, (me.inertia(B, 1, 2, 3, 0.2, 0.1), O))
    return dict(frame=N, q_ind=[q1, q2], u_ind=[u1, u2],
                kd_eqs=[u1 - q1.diff(), u2 - q2.diff()]), [body], [(C, -m * g * N.z)]


def _varying_mass():
    """A particle and a rigid body whose mass and inertia change with the motion
    (KanesMethod adds m' v and I' w to the inertia forces)."""
    q1, q2, u1, u2 = me.dynamicsymbols('q1 q2 u1 u2')
    N = me.ReferenceFrame('N')
    A = N.orientnew('A', 'Axis', [q1, N.z])
    O = me.Point('O')
    O.set_vel(N, 0)
    P = O.locatenew('P', q2 * A.x)
    P.v2pt_theory(O, N, A)
    P.set_vel(N, P.vel(N) + u2 * A.x - q2.diff() * A.x)
    body = me.RigidBody('rod', O, A, m * (1 + q2 ** 2),
                        (me.inertia(A, 1, 2, 3 + k * q2 ** 2), O))
    return dict(frame=N, q_ind=[q1, q2], u_ind=[u1, u2],
                kd_eqs=[u1 - q1.diff(), u2 - q2.diff()]), \
        [body, me.Particle('p', P, m * (2 + sm.sin(q1)))], [(P, -k * q2 * A.x)]


CASES = {
    "conical_set_ang_vel": lambda: _conical(False),
    "conical_consistent": lambda: _conical(True),
    "set_vel_particle": _set_vel_particle,
    "collar_v1pt": lambda: _collar(True),
    "collar_v1pt_set_ang_vel": lambda: _collar(False),
    "chain_v2pt": lambda: _chain(),
    "chain_set_ang_vel_consistent": lambda: _chain("consistent"),
    "chain_set_ang_vel_inconsistent": lambda: _chain("inconsistent"),
    "chain_a2pt": lambda: _chain(stored_acc=True),
    "chain_set_acc": lambda: _chain(stored_acc="inconsistent"),
    "chain_set_ang_vel_and_set_acc": lambda: _chain("inconsistent", "inconsistent"),
    "inertia_about_joint": lambda: _offset_inertia(True),
    "inertia_about_joint_set_vel": lambda: _offset_inertia(False),
    "varying_mass_and_inertia": _varying_mass,
}


def _numbers(exprs, kwargs, seed):
    rng = np.random.default_rng(seed)
    states = list(kwargs["q_ind"]) + list(kwargs["u_ind"])
    values = {s: sm.Float(v) for s, v in zip(states, rng.uniform(-1, 1, len(states)))}
    values.update({m: 1.3, l: 0.7, g: 9.81, k: 0.4})
    return [np.array(me.msubs(e, values).evalf(), dtype=float) for e in exprs]


@pytest.mark.parametrize("relative", [None, True, False])
@pytest.mark.parametrize("case", sorted(CASES))
def test_stored_velocities_are_the_model(case, relative):
    kwargs, bodies, loads = CASES[case]()
    kane = me.KanesMethod(**kwargs)
    kane.kanes_equations(bodies, loads)
    ga = GibbsAppellMethod(**kwargs, relative_kinematics=relative)
    ga.kanes_equations(bodies, loads)
    for seed in (1, 2):
        Mk, Fk = _numbers([kane.mass_matrix, kane.forcing], kwargs, seed)
        Mg, Fg = _numbers([ga.mass_matrix, ga.forcing], kwargs, seed)
        scale = 1 + np.abs(Fk).max()
        assert np.allclose(Mg, Mk, rtol=1e-10, atol=1e-10 * np.abs(Mk).max()), case
        assert np.allclose(Fg, Fk, rtol=1e-10, atol=1e-10 * scale), case


@pytest.mark.parametrize("case", ["conical_set_ang_vel", "chain_set_ang_vel_and_set_acc",
                                  "collar_v1pt_set_ang_vel", "inertia_about_joint_set_vel"])
def test_compiled_stored_velocities_equal_kane(case, outdir):
    """The generated code follows the same rule (it is formed on the compact path)."""
    kwargs, bodies, loads = CASES[case]()
    kane = me.KanesMethod(**kwargs)
    kane.kanes_equations(bodies, loads)
    ga = GibbsAppellMethod(**kwargs, bodies=bodies, forcelist=loads)
    mod = generate(ga, f"stored_{case}", output_dir=outdir)
    p = mod.parameters({s: v for s, v in {m: 1.3, l: 0.7, g: 9.81, k: 0.4}.items()
                        if s.name in mod.constants})
    nq = len(kwargs["q_ind"])
    for seed in (1, 2):
        x = np.random.default_rng(seed).uniform(-1, 1, mod.nx)
        values = dict(zip(list(kwargs["q_ind"]) + list(kwargs["u_ind"]), x))
        values.update({m: 1.3, l: 0.7, g: 9.81, k: 0.4})
        M = np.array(me.msubs(kane.mass_matrix, values).evalf(), dtype=float)
        F = np.array(me.msubs(kane.forcing, values).evalf(), dtype=float).ravel()
        ud = np.linalg.solve(M, F)
        xd = mod.rhs(0.0, x, p)
        assert np.allclose(xd[nq:], ud, rtol=1e-9, atol=1e-9 * (1 + np.abs(ud).max())), case
