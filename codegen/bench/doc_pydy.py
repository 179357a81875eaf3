"""PyDy's examples (docs/examples/*.rst and examples/ in the pydy repository).

Each builder writes out the model of one PyDy example as a
:class:`codegen.bench.doc_model.DocModel`, with the constants, specified
inputs, initial conditions and times its simulation uses.
"""
from __future__ import annotations

import math

import sympy as sm
import sympy.physics.mechanics as me

from .doc_model import DocModel

__all__ = ["double_pendulum", "nbody_pendulum", "conical_pendulum", "mass_spring_damper",
           "chaos_pendulum", "multidof_holonomic", "astrobee", "carvallo_whipple"]

t = me.dynamicsymbols._t
DOC = "pydy: docs/examples/"


def double_pendulum() -> DocModel:
    """Two particles on massless rods, both angles from N (examples/double_pendulum)."""
    q1, q2, u1, u2 = me.dynamicsymbols('q1 q2 u1 u2')
    l, m, g = sm.symbols('l m g')
    N = me.ReferenceFrame('N')
    A = N.orientnew('A', 'Axis', [q1, N.z])
    B = N.orientnew('B', 'Axis', [q2, N.z])
    A.set_ang_vel(N, u1 * N.z)
    B.set_ang_vel(N, u2 * N.z)
    O = me.Point('O')
    P = O.locatenew('P', l * A.x)
    R = P.locatenew('R', l * B.x)
    O.set_vel(N, 0)
    P.v2pt_theory(O, N, A)
    R.v2pt_theory(P, N, B)
    return DocModel(
        "double_pendulum", "pydy: examples/double_pendulum/double_pendulum.py", N,
        [q1, q2], [u1, u2], [q1.diff() - u1, q2.diff() - u2],
        [me.Particle('ParP', P, m), me.Particle('ParR', R, m)],
        [(P, m * g * N.x), (R, m * g * N.x)], constants={l: 10.0, m: 10.0, g: 9.81},
        initial_conditions={q1: 1.0, q2: 0.0, u1: 0.0, u2: 0.0}, times=(0.0, 5.0, 300))


def nbody_pendulum(n: int = 3) -> DocModel:
    """n rods, each turned from the one before by body-fixed 1-2-3 angles, with a ball
    spinning on each and a dot on each ball; the angular velocities stored in each
    rod's own frame; the balls repel by a Heaviside spring when they touch."""
    m, m1, g, r, l, k = sm.symbols('m, m1, g, r, l, k')
    iXX, iYY, iZZ = sm.symbols('iXX, iYY, iZZ')
    q, u = [], []
    for i in range(n):
        for axis in 'xyz':
            q.append(me.dynamicsymbols(f'q{axis}{i}'))
            u.append(me.dynamicsymbols(f'u{axis}{i}'))
    N = me.ReferenceFrame('N')
    frames = [me.ReferenceFrame(f'A{i}') for i in range(n)]
    rates, stored = [], []
    for i, A in enumerate(frames):
        A.orient_body_fixed(N if i == 0 else frames[i - 1], tuple(q[3 * i:3 * i + 3]), '123')
        rates.append(A.ang_vel_in(N))
        A.set_ang_vel(N, u[3 * i] * A.x + u[3 * i + 1] * A.y + u[3 * i + 2] * A.z)
        stored.append(A.ang_vel_in(N))
    P0 = me.Point('P0')
    ends = [me.Point(f'P{i}') for i in range(n)]
    centres = [me.Point(f'Dmc{i}') for i in range(n)]
    dots = [me.Point(f'punkt{i}') for i in range(n)]
    ends[0].set_pos(P0, 0.)
    ends[0].set_vel(N, 0.)
    for i in range(n):
        if i > 0:
            ends[i].set_pos(ends[i - 1], l * frames[i - 1].y)
            ends[i].v2pt_theory(ends[i - 1], N, frames[i - 1])
        centres[i].set_pos(ends[i], l / sm.S(2.) * frames[i].y)
        centres[i].v2pt_theory(ends[i], N, frames[i])
        dots[i].set_pos(centres[i], r * frames[i].z)
        dots[i].v2pt_theory(centres[i], N, frames[i])
    bodies = []
    for i in range(n):
        inertia = me.inertia(frames[i], iXX, iYY, iZZ)
        bodies.append(me.RigidBody(f'body{i}', centres[i], frames[i], m, (inertia, centres[i])))
        bodies.append(me.Particle(f'punct{i}', dots[i], m1))
    loads = [(centres[i], -m * g * N.y) for i in range(n)] + \
        [(dots[i], -m1 * g * N.y) for i in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            gap = centres[j].pos_from(centres[i])
            dist = gap.magnitude()
            push = k * (2 * r - dist) * gap.normalize() * sm.Heaviside(2. * r - dist)
            loads += [(centres[j], push), (centres[i], -push)]
    kd = [me.dot(rates[i] - stored[i], e) for i in range(n) for e in frames[i]]
    ball_m, ball_r, spin = 1.0, 1.5, 7.5
    ball_i = 2. / 5. * ball_m * ball_r**2
    return DocModel(
        f"nbody_pendulum{n}", DOC + "3d-n-body-pendulum.rst", N, q, u, kd, bodies, loads,
        constants={m: ball_m, m1: ball_m / 5., g: 9.8, r: ball_r, l: 6.0, k: 1000.0,
                   iXX: ball_i, iYY: ball_i, iZZ: ball_i},
        initial_conditions={**dict(zip(q[:3], (0.2, 0.2, 0.2))),
                            **{u[3 * i + 1]: spin for i in range(n)}},
        times=(0.0, 2.0, 200))


def conical_pendulum() -> DocModel:
    """Three links, each oriented from the one before by 'Space' angles, whose
    angular velocities in I are set by hand to omega I.z + delta I.x (not the rate of
    that orientation: the stored velocity is the model); a bob at each joint."""
    n = 3
    alpha = me.dynamicsymbols(f'alpha:{n}')
    beta = me.dynamicsymbols(f'beta:{n}')
    omega = me.dynamicsymbols(f'omega:{n}')
    delta = me.dynamicsymbols(f'delta:{n}')
    m_bob = sm.symbols(f'm:{n}')
    l = sm.symbols(f'l:{n}')
    m_link = sm.symbols(f'M:{n}')
    Ixx, Iyy, Izz = sm.symbols(f'Ixx:{n}'), sm.symbols(f'Iyy:{n}'), sm.symbols(f'Izz:{n}')
    g = sm.symbols('g')
    I = me.ReferenceFrame('I')
    frames = [me.ReferenceFrame(name) for name in 'ABC']
    for i, F in enumerate(frames):
        F.orient(I if i == 0 else frames[i - 1], 'Space', [alpha[i], beta[i], 0], 'ZXY')
    kd = []
    for i in range(n):
        kd += [omega[i] - alpha[i].diff(), delta[i] - beta[i].diff()]
    for i, F in enumerate(frames):
        F.set_ang_vel(I, omega[i] * I.z + delta[i] * I.x)
    O = me.Point('O')
    O.set_vel(I, 0)
    joints, centres, prev = [], [], O
    for i, F in enumerate(frames):
        joint = prev.locatenew(f'P{i + 1}', -l[i] * F.y)
        joint.v2pt_theory(prev, I, F)
        centre = prev.locatenew(f'P_link{i + 1}', -l[i] / 2 * F.y)
        centre.v2pt_theory(prev, I, F)
        joints.append(joint)
        centres.append(centre)
        prev = joint
    bobs = [me.Particle(f'Pa{i + 1}', joints[i], m_bob[i]) for i in range(n)]
    links = [me.RigidBody(f'link{i + 1}', centres[i], F, m_link[i],
                          (me.inertia(F, Ixx[i], Iyy[i], Izz[i]), centres[i]))
             for i, F in enumerate(frames)]
    loads = [(b.point, -b.mass * g * I.y) for b in bobs] + \
        [(b.masscenter, -b.mass * g * I.y) for b in links]
    length, mass, radius, bob_mass = 10.0, 10.0, 0.5, 5.0
    ixx = 1.0 / 12.0 * mass * (3.0 * radius**2 + length**2)
    constants = {g: 9.8}
    for i in range(n):
        constants.update({l[i]: length, m_bob[i]: bob_mass, m_link[i]: mass, Ixx[i]: ixx,
                          Iyy[i]: mass * radius**2, Izz[i]: ixx})
    return DocModel(
        "conical_pendulum", DOC + "three-link-conical-pendulum.rst", I,
        list(alpha) + list(beta), list(omega) + list(delta), kd, links + bobs, loads,
        constants=constants,
        initial_conditions={s: math.radians(10.0) for s in list(alpha) + list(beta)},
        times=(0.0, 60.0, 600))


def mass_spring_damper() -> DocModel:
    """A particle below a ceiling on a spring and a damper, with gravity."""
    x, v = me.dynamicsymbols('x v')
    m, c, k, g = sm.symbols('m c k g')
    ceiling = me.ReferenceFrame('C')
    O, P = me.Point('O'), me.Point('P')
    O.set_vel(ceiling, 0)
    P.set_pos(O, x * ceiling.x)
    P.set_vel(ceiling, v * ceiling.x)
    force = -c * P.vel(ceiling) - k * P.pos_from(O) + m * g * ceiling.x
    return DocModel(
        "mass_spring_damper", DOC + "mass-spring-damper.rst", ceiling, [x], [v],
        [v - x.diff(t)], [me.Particle('mass', P, m)], [(P, force)],
        constants={m: 10.0, g: 9.8, c: 5.0, k: 10.0}, initial_conditions={x: 0.0, v: 0.0},
        times=(0.0, 10.0, 600))


def chaos_pendulum() -> DocModel:
    """A rod swinging about N.y with a plate turning about the rod's axis."""
    mA, mB, lB, w, h, g = sm.symbols('m_A, m_B, L_B, w, h, g')
    theta, phi = me.dynamicsymbols('theta, phi')
    omega, alpha = me.dynamicsymbols('omega, alpha')
    N, A, B = me.ReferenceFrame('N'), me.ReferenceFrame('A'), me.ReferenceFrame('B')
    A.orient(N, 'Axis', (theta, N.y))
    B.orient(A, 'Axis', (phi, A.z))
    No, Ao, Bo = me.Point('No'), me.Point('Ao'), me.Point('Bo')
    lA = (lB - h / 2) / 2
    Ao.set_pos(No, lA * A.z)
    Bo.set_pos(No, lB * A.z)
    A.set_ang_vel(N, omega * N.y)
    B.set_ang_vel(A, alpha * A.z)
    No.set_vel(N, 0)
    Ao.v2pt_theory(No, N, A)
    Bo.v2pt_theory(No, N, A)
    rod_i = sm.S(1) / 12 * mA * (2 * lA)**2
    rod = me.RigidBody('rod', Ao, A, mA, (me.inertia(A, rod_i, rod_i, 0), Ao))
    plate = me.RigidBody('plate', Bo, B, mB, (me.inertia(
        B, sm.S(1) / 12 * mB * h**2, sm.S(1) / 12 * mB * (w**2 + h**2),
        sm.S(1) / 12 * mB * w**2), Bo))
    return DocModel(
        "chaos_pendulum", DOC + "chaos-pendulum.rst", N, [theta, phi], [omega, alpha],
        [omega - theta.diff(), alpha - phi.diff()], [rod, plate],
        [(Ao, mA * g * N.z), (Bo, mB * g * N.z)],
        constants={lB: 0.2, h: 0.1, w: 0.2, mA: 0.01, mB: 0.1, g: 9.81},
        initial_conditions={theta: math.radians(45), phi: math.radians(0.5), omega: 0,
                            alpha: 0}, times=(0.0, 10.0, 300))


def multidof_holonomic() -> DocModel:
    """PyDy's block, compound pendulum and simple pendulum, with u2 the speed of the
    compound pendulum's mass centre along B.x (a non-trivial generalized speed) and
    the velocities stored after substituting the q' it defines; F and T specified."""
    q1, q2, q3 = me.dynamicsymbols('q1, q2, q3')
    u1, u2, u3 = me.dynamicsymbols('u1, u2, u3')
    F, T = me.dynamicsymbols('F, T')
    k, c, ma, mb, mc, IB_bo, l, kT, g = sm.symbols('k, c, m_a, m_b, m_c, I_{B_bo}, l, k_T, g')
    N = me.ReferenceFrame('N')
    B = N.orientnew('B', 'Axis', (q2, N.z))
    C = B.orientnew('C', 'Axis', (q3, N.z))
    O = me.Point('O')
    Pab = O.locatenew('P_{ab}', q1 * N.x)
    Bo = Pab.locatenew('B_o', -2 * l / 3 * B.y)
    Pbc = Pab.locatenew('P_{bc}', -l * B.y)
    Pc = Pbc.locatenew('P_c', -l * C.y)
    Pab.set_vel(N, Pab.pos_from(O).dt(N))
    Bo.v2pt_theory(Pab, N, B)
    Pbc.v2pt_theory(Pab, N, B)
    Pc.v2pt_theory(Pbc, N, C)
    definitions = [sm.Eq(u1, Pab.vel(N).dot(N.x)), sm.Eq(u2, Bo.vel(N).dot(B.x)),
                   sm.Eq(u3, C.ang_vel_in(B).dot(B.z))]
    qdots = sm.solve(definitions, q1.diff(), q2.diff(), q3.diff())
    Pab.set_vel(N, Pab.vel(N).subs(qdots).simplify())
    Bo.set_vel(N, Bo.vel(N).subs(qdots).express(B).simplify())
    Pc.set_vel(N, Pc.vel(N).subs(qdots).simplify())
    B.set_ang_vel(N, B.ang_vel_in(N).subs(qdots).simplify())
    C.set_ang_vel(B, u3 * N.z)
    loads = [(Pab, (F - k * q1 - c * qdots[q1.diff()]) * N.x), (Bo, -(mb * g) * N.y),
             (Pc, -(mc * g) * N.y), (B, (T + kT * q3) * N.z), (C, -kT * q3 * N.z)]
    bodies = [me.Particle('block', Pab, ma),
              me.RigidBody('pendulum', Bo, B, mb, (me.inertia(B, 0, 0, IB_bo), Bo)),
              me.Particle('bob', Pc, mc)]
    return DocModel(
        "multidof_holonomic", DOC + "multidof-holonomic.rst", N, [q1, q2, q3], [u1, u2, u3],
        [d.rhs - d.lhs for d in definitions], bodies, loads,
        constants={ma: 1.0, mb: 2.0, mc: 1.0, g: 9.81, l: 2.0, IB_bo: 2.0, c: 10.0, k: 60.0,
                   kT: 10.0},
        specifieds={F: 0.0, T: 1.0}, initial_conditions={q1: 1.0}, times=(0.0, 20.0, 500))


def astrobee() -> DocModel:
    """A free-flying cube: position in the ISS frame, body-fixed x-y-z Euler angles,
    u = q'; the stored velocities are the position's and orientation's rates with q'
    replaced by u; three force and three torque magnitudes specified."""
    ISS, B = me.ReferenceFrame('N'), me.ReferenceFrame('B')
    q1, q2, q3 = me.dynamicsymbols('q1:4')
    B.orient(ISS, 'Body', (q1, q2, q3), 'xyz')
    O = me.Point('O')
    O.set_vel(ISS, 0)
    x, y, z = me.dynamicsymbols('x, y, z')
    C = O.locatenew('C', x * ISS.x + y * ISS.y + z * ISS.z)
    ux, uy, uz = me.dynamicsymbols('u_x u_y u_z')
    u1, u2, u3 = me.dynamicsymbols('u_1 u_2 u_3')
    speeds = [ux, uy, uz, u1, u2, u3]
    coords = [x, y, z, q1, q2, q3]
    rates = dict(zip([s.diff() for s in coords], speeds))
    C.set_vel(ISS, C.pos_from(O).dt(ISS).subs(rates))
    B.set_ang_vel(ISS, B.ang_vel_in(ISS).subs(rates))
    m = sm.symbols('m')
    Ix, Iy, Iz = sm.symbols('I_x, I_y, I_z')
    forces = me.dynamicsymbols('Fmag_x, Fmag_y, Fmag_z')
    torques = me.dynamicsymbols('Tmag_1, Tmag_2, Tmag_3')
    loads = [(C, f * e) for f, e in zip(forces, ISS)] + \
        [(B, tq * e) for tq, e in zip(torques, B)]
    body = me.RigidBody('body', C, B, m, (me.inertia(B, Ix, Iy, Iz), C))
    return DocModel(
        "astrobee", DOC + "astrobee.rst", ISS, coords, speeds,
        [u - q.diff() for q, u in zip(coords, speeds)], [body], loads,
        constants={Ix: 0.1083, Iy: 0.1083, Iz: 0.1083, m: 7.0},
        specifieds=dict.fromkeys(list(forces) + list(torques), 0.0),
        initial_conditions={ux: 0.2, u3: 0.5}, times=(0.0, 50.0, 1000))


class _Frame(me.ReferenceFrame):
    """The example's frame with unit vectors indexed '1', '2', '3'."""

    def __init__(self, name, **kwargs):
        kwargs.pop('indices', None)
        kwargs.pop('latexs', None)
        low = name.lower()
        super().__init__(name, indices=('1', '2', '3'),
                         latexs=tuple(rf'\hat{{{low}}}_{i}' for i in '123'), **kwargs)


def carvallo_whipple() -> DocModel:
    """Moore's formulation of the Carvallo-Whipple bicycle: pitch q5 dependent through
    the front contact's height, yaw, pitch and front wheel rates dependent through its
    three velocity constraints; roll, rear wheel and steer torques specified."""
    N, A, B, C, D, E, F = (_Frame(name) for name in 'NABCDEF')
    q1, q2, q3, q4, q5, q6, q7, q8 = me.dynamicsymbols('q1:9')
    u1, u2, u3, u4, u5, u6, u7, u8 = me.dynamicsymbols('u1:9')
    A.orient(N, 'Axis', (q3, N['3']))
    B.orient(A, 'Axis', (q4, A['1']))
    C.orient(B, 'Axis', (q5, B['2']))
    E.orient(C, 'Axis', (q7, C['3']))
    rf, rr, d1, d2, d3, l1, l2, l3, l4, g = sm.symbols('rf rr d1 d2 d3 l1 l2 l3 l4 g')
    mc, md, me_, mf = sm.symbols('mc md me mf')
    ic11, ic22, ic33, ic31 = sm.symbols('ic11 ic22 ic33 ic31')
    id11, id22, if11, if22 = sm.symbols('id11 id22 if11 if22')
    ie11, ie22, ie33, ie31 = sm.symbols('ie11 ie22 ie33 ie31')
    T4, T6, T7 = me.dynamicsymbols('T4 T6 T7')
    dn, do, co, ce, fo, eo, fn = (me.Point(p) for p in ('dn', 'do', 'co', 'ce', 'fo', 'eo', 'fn'))
    do.set_pos(dn, -rr * B['3'])
    co.set_pos(do, l1 * C['1'] + l2 * C['3'])
    ce.set_pos(do, d1 * C['1'])
    fo.set_pos(ce, d2 * E['3'] + d3 * E['1'])
    eo.set_pos(fo, l3 * E['1'] + l4 * E['3'])
    fn.set_pos(fo, rf * E['2'].cross(A['3']).cross(E['2']).normalize())
    holonomic = fn.pos_from(dn).dot(A['3'])
    kinematical = [q3.diff(t) - u3, q4.diff(t) - u4, q5.diff(t) - u5, q7.diff(t) - u7]
    A.set_ang_vel(N, u3 * N['3'])
    B.set_ang_vel(A, u4 * A['1'])
    C.set_ang_vel(B, u5 * B['2'])
    D.set_ang_vel(C, u6 * C['2'])
    E.set_ang_vel(C, u7 * C['3'])
    F.set_ang_vel(E, u8 * E['2'])
    dn.set_vel(N, 0.0 * N['1'])
    do.v2pt_theory(dn, N, D)
    co.v2pt_theory(do, N, C)
    ce.v2pt_theory(do, N, C)
    fo.v2pt_theory(ce, N, E)
    eo.v2pt_theory(fo, N, E)
    fn.v2pt_theory(fo, N, F)
    nonholonomic = [fn.vel(N).dot(A['1']), fn.vel(N).dot(A['3']), fn.vel(N).dot(A['2'])]
    inertias = [me.inertia(C, ic11, ic22, ic33, 0.0, 0.0, ic31),
                me.inertia(C, id11, id22, id11, 0.0, 0.0, 0.0),
                me.inertia(E, ie11, ie22, ie33, 0.0, 0.0, ie31),
                me.inertia(E, if11, if22, if11, 0.0, 0.0, 0.0)]
    bodies = [me.RigidBody(label, point, frame, mass, (inertia, point))
              for label, point, frame, mass, inertia in zip(
                  ('Rear Frame', 'Rear Wheel', 'Front Frame', 'Front Wheel'), (co, do, eo, fo),
                  (C, D, E, F), (mc, md, me_, mf), inertias)]
    loads = [(co, mc * g * A['3']), (do, md * g * A['3']), (eo, me_ * g * A['3']),
             (fo, mf * g * A['3']), (C, T4 * A['1'] - T6 * B['2'] - T7 * C['3']),
             (D, T6 * C['2']), (E, T7 * C['3'])]
    constants = {
        rf: 0.35, rr: 0.3, d1: 0.9534570696121849, d3: 0.03207142672761929,
        d2: 0.2676445084476887, l1: 0.4707271515135145, l2: -0.47792881146460797,
        l4: -0.3699518200282974, l3: -0.00597083392418685, mc: 85.0, md: 2.0, me_: 4.0,
        mf: 3.0, id11: 0.0603, id22: 0.12, if11: 0.1405, if22: 0.28,
        ic11: 7.178169776497895, ic22: 11.0, ic31: 3.8225535938357873,
        ic33: 4.821830223502103, ie11: 0.05841337700152972, ie22: 0.06,
        ie31: 0.009119225261946298, ie33: 0.007586622998470264, g: 9.81}
    speed, roll_rate = 4.6, 0.5
    return DocModel(
        "carvallo_whipple", DOC + "carvallo-whipple.rst", N, [q3, q4, q7], [u4, u6, u7],
        kinematical, bodies, loads, q_dependent=[q5], u_dependent=[u3, u5, u8],
        configuration_constraints=[holonomic], velocity_constraints=nonholonomic,
        constants=constants, specifieds={T4: 0.0, T6: 0.0, T7: 0.0},
        initial_conditions={q5: 0.3, q7: 1e-8, u4: roll_rate, u6: -speed / 0.3,
                            u8: -speed / 0.35}, times=(0.0, 6.0, 180))
