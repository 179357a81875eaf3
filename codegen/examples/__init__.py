"""Built-in models, each a plain description in ``sympy.physics.mechanics`` terms.

Every builder returns a :class:`Model`: the keyword arguments that both
``KanesMethod`` and :class:`codegen.GibbsAppellMethod` accept, plus the
constants and specified inputs, so one description feeds both formulations
(the tests use KanesMethod as the oracle on exactly the same input).
"""
from __future__ import annotations

import math

import sympy as sm
import sympy.physics.mechanics as me

from .flexible_bodies import flexible_arm, hub_angle, rotating_beam, spacecraft, spin_up_beam
from ..description.model import Model

__all__ = ["Model", "spin_up_beam", "hub_angle", "rotating_beam", "spacecraft", "flexible_arm",
           "dumbbell", "rolling_disk", "rolling_disk_contact",
           "n_pendulum_on_cart", "spatial_chain", "humanoid", "HUMANOID_LIMBS", "chaplygin_sleigh",
           "offset_pendulum", "four_bar", "slider_crank", "cartesian_pendulum", "spring_damper", "stiff_pendulum",
           "whipple_bicycle", "EXAMPLES"]


def dumbbell():
    """Greenwood Example 4.10: dumbbell on a plane, knife edge at particle 1.

    q = (x, y, phi); u1 = v (speed along the knife edge), u2 = phi',
    u3 = lateral speed, constrained to zero. Particle 2 sits at distance l
    along the knife edge direction e_t.
    """
    x, y, phi = me.dynamicsymbols('x y phi')
    u1, u2, u3 = me.dynamicsymbols('u1 u2 u3')
    m, l = sm.symbols('m l', positive=True)
    N = me.ReferenceFrame('N')
    E = N.orientnew('E', 'Axis', [phi, N.z])      # e_t = E.x, e_n = E.y
    E.set_ang_vel(N, u2 * N.z)
    O = me.Point('O')
    O.set_vel(N, 0)
    P1 = O.locatenew('P1', x * N.x + y * N.y)
    P1.set_vel(N, u1 * E.x + u3 * E.y)
    P2 = P1.locatenew('P2', l * E.x)
    P2.v2pt_theory(P1, N, E)
    kd = [u1 - (x.diff() * sm.cos(phi) + y.diff() * sm.sin(phi)),
          u2 - phi.diff(),
          u3 - (-x.diff() * sm.sin(phi) + y.diff() * sm.cos(phi))]
    bodies = [me.Particle('p1', P1, m), me.Particle('p2', P2, m)]
    return Model('dumbbell', N, [x, y, phi], [u1, u2], kd, bodies,
                 u_dependent=[u3], velocity_constraints=[u3],
                 constants=[m, l], doc=dumbbell.__doc__,
                 parameter_values={'m': 1.0, 'l': 0.5}, initial_state=[0, 0, 0, 1.0, 2.0])


def _disk_frames(phi, theta, psi):
    """Greenwood's triad: e_theta = B.x (horizontal), e_d = B.y, e_psi = B.z (axis)."""
    N = me.ReferenceFrame('N')
    A = N.orientnew('A', 'Axis', [phi, N.z])
    B = A.orientnew('B', 'Axis', [theta, A.x])
    D = B.orientnew('D', 'Axis', [psi, B.z])
    return N, A, B, D


def rolling_disk():
    """Greenwood Example 4.11: thin disk rolling without slip on a plane.

    Euler angles (phi, theta, psi), theta the angle between the disk axis
    and the vertical; u1 = theta', u2 = omega_d = phi' sin(theta),
    u3 = Omega = phi' cos(theta) + psi'. The contact is eliminated by writing
    the centre's velocity as omega x (r e_d) (rolling), so the contact-point
    coordinates do not appear.
    """
    phi, theta, psi = me.dynamicsymbols('phi theta psi')
    u1, u2, u3 = me.dynamicsymbols('u1 u2 u3')
    m, r, g = sm.symbols('m r g', positive=True)
    N, A, B, D = _disk_frames(phi, theta, psi)
    D.set_ang_vel(N, u1 * B.x + u2 * B.y + u3 * B.z)
    B.set_ang_vel(N, u1 * B.x + u2 * B.y + u2 * sm.cos(theta) / sm.sin(theta) * B.z)
    C = me.Point('C')
    C.set_vel(N, D.ang_vel_in(N).cross(r * B.y))
    I = me.inertia(B, m * r**2 / 4, m * r**2 / 4, m * r**2 / 2)
    disk = me.RigidBody('disk', C, D, m, (I, C))
    kd = [u1 - theta.diff(), u2 - phi.diff() * sm.sin(theta),
          u3 - (phi.diff() * sm.cos(theta) + psi.diff())]
    return Model('rolling_disk', N, [phi, theta, psi], [u1, u2, u3], kd,
                 [disk], loads=[(C, -m * g * N.z)], constants=[m, r, g],
                 potential_energy=m * g * r * sm.sin(theta),
                 doc=rolling_disk.__doc__,
                 parameter_values={'m': 2.0, 'r': 0.3, 'g': 9.81},
                 initial_state=[0.0, 1.3, 0.0, 0.2, 1.5, 6.0],
                 anchors={C: r * B.y}, shapes=_disk_shape(D, C, 0.3))


def _disk_shape(D, C, radius):
    from ..description.shapes import Cylinder
    return [Cylinder(D, C, radius, radius / 15, axis='z')]


def rolling_disk_contact():
    """The rolling disk with contact-point coordinates and dependent speeds.

    q = (x, y, phi, theta, psi), u = (u1..u5) with u4 = x', u5 = y' dependent:
    the rolling constraint is given as two velocity constraints, the centre's
    velocity is written from the contact point (x, y) without using rolling.
    """
    x, y, phi, theta, psi = me.dynamicsymbols('x y phi theta psi')
    u1, u2, u3, u4, u5 = me.dynamicsymbols('u1:6')
    m, r, g = sm.symbols('m r g', positive=True)
    N, A, B, D = _disk_frames(phi, theta, psi)
    O = me.Point('O')
    O.set_vel(N, 0)
    P = O.locatenew('P', x * N.x + y * N.y)
    P.set_vel(N, u4 * N.x + u5 * N.y)
    C = P.locatenew('C', r * B.y)
    D.set_ang_vel(N, u1 * B.x + u2 * B.y + u3 * B.z)
    B.set_ang_vel(N, u1 * B.x + u2 * B.y + u2 * sm.cos(theta) / sm.sin(theta) * B.z)
    C.v2pt_theory(P, N, B)
    I = me.inertia(B, m * r**2 / 4, m * r**2 / 4, m * r**2 / 2)
    disk = me.RigidBody('disk', C, D, m, (I, C))
    kd = [u1 - theta.diff(), u2 - phi.diff() * sm.sin(theta),
          u3 - (phi.diff() * sm.cos(theta) + psi.diff()),
          u4 - x.diff(), u5 - y.diff()]
    # contact point of the material disk has zero velocity
    vcontact = C.vel(N) + D.ang_vel_in(N).cross(-r * B.y)
    vc = [vcontact.dot(N.x), vcontact.dot(N.y)]
    return Model('rolling_disk_contact', N, [x, y, phi, theta, psi],
                 [u1, u2, u3], kd, [disk], loads=[(C, -m * g * N.z)],
                 u_dependent=[u4, u5], velocity_constraints=vc,
                 constants=[m, r, g], potential_energy=m * g * r * sm.sin(theta),
                 doc=rolling_disk_contact.__doc__,
                 parameter_values={'m': 2.0, 'r': 0.3, 'g': 9.81},
                 initial_state=[0.0, 0.0, 0.0, 1.3, 0.0, 0.2, 1.5, 6.0],
                 shapes=_disk_shape(D, C, 0.3))


def _pendulum_parts(n):
    """Symbols, frames, particles and loads of the n-link pendulum on a cart."""
    q = me.dynamicsymbols(f'q0:{n + 1}')
    u = me.dynamicsymbols(f'u0:{n + 1}')
    f = me.dynamicsymbols('F')
    m = sm.symbols(f'm0:{n + 1}')
    l = sm.symbols(f'l1:{n + 1}')
    g = sm.symbols('g')
    N = me.ReferenceFrame('N')
    O = me.Point('O')
    O.set_vel(N, 0)
    P0 = O.locatenew('P0', q[0] * N.x)
    P0.set_vel(N, u[0] * N.x)
    frames, bodies = [], [me.Particle('pa0', P0, m[0])]
    loads = [(P0, f * N.x - m[0] * g * N.y)]
    prev = P0
    V = 0
    for i in range(1, n + 1):
        Ai = N.orientnew(f'A{i}', 'Axis', [q[i], N.z])
        Ai.set_ang_vel(N, u[i] * N.z)
        Pi = prev.locatenew(f'P{i}', l[i - 1] * Ai.x)
        Pi.v2pt_theory(prev, N, Ai)
        frames.append(Ai)
        bodies.append(me.Particle(f'pa{i}', Pi, m[i]))
        loads.append((Pi, -m[i] * g * N.y))
        V += m[i] * g * Pi.pos_from(O).dot(N.y)
        prev = Pi
    kd = [ui - qi.diff() for qi, ui in zip(q, u)]
    values = {str(c): 1.0 for c in (*m, *l)}
    values.update({str(li): 1.0 / n for li in l}, g=9.81)
    initial = [0.0] + [0.3 * (-1) ** i for i in range(n)] + [0.0] * (n + 1)
    return dict(q=q, u=u, f=f, m=m, l=l, g=g, N=N, frames=frames, bodies=bodies, loads=loads,
                V=V, kd=kd, values=values, initial=initial)


def n_pendulum_on_cart(n=3):
    """n-link pendulum on a cart: the benchmark model.

    Cart of mass m0 moving along N.x under a specified force F(t); n massless
    links of lengths l1..ln with point masses m1..mn at their ends; absolute
    link angles q1..qn measured from N.x; gravity -g N.y; u = q'.
    """
    d = _pendulum_parts(n)
    return Model(f'pendulum{n}', d['N'], list(d['q']), list(d['u']), d['kd'], d['bodies'],
                 d['loads'], constants=[*d['m'], *d['l'], d['g']], specifieds=[d['f']],
                 potential_energy=d['V'], doc=n_pendulum_on_cart.__doc__,
                 parameter_values=d['values'], initial_state=d['initial'])


def stiff_pendulum(n=4, k=1e5, c=1e3):
    """The n-link pendulum on a cart with stiff joints: a stiff, nonlinear model
    with many states, for the implicit integrators.

    Between links i-1 and i (i = 2..n) a torsional spring and damper,
    T_i = -k (q_i - q_{i-1}) - c (u_i - u_{i-1}) on link i and -T_i on link
    i-1. With the default values (links of 1/n, unit masses) the internal
    modes decay at rates up to about 10^4 per second, while the swing of the
    whole chain takes about a second.
    """
    d = _pendulum_parts(n)
    ks, cs = sm.symbols('k c', positive=True)
    q, u, A, N = d['q'], d['u'], d['frames'], d['N']
    loads = list(d['loads'])
    V = d['V']
    for i in range(2, n + 1):
        T = (-ks * (q[i] - q[i - 1]) - cs * (u[i] - u[i - 1])) * N.z
        loads += [(A[i - 1], T), (A[i - 2], -T)]
        V += ks * (q[i] - q[i - 1]) ** 2 / 2
    values = dict(d['values'], k=k, c=c)
    return Model(f'stiff_pendulum{n}', N, list(q), list(u), d['kd'], d['bodies'], loads,
                 constants=[*d['m'], *d['l'], d['g'], ks, cs], specifieds=[d['f']],
                 potential_energy=V, doc=stiff_pendulum.__doc__, parameter_values=values,
                 initial_state=[0.0] + [0.3 + 0.05 * (-1) ** i for i in range(n)] + [0.0] * (n + 1),
                 stiff=True, conservative=False)


def spatial_chain(n=3, speeds='body'):
    """A spatial chain of n rigid bodies hanging from a fixed point.

    Body i turns relative to its parent by body-fixed X-Y-Z angles; its mass
    centre is offset from the joint, its inertia about the mass centre is a
    full symmetric matrix; a specified torque T_i(t) about the body's z axis
    acts between each body and its parent, gravity along -N.z. speeds='body':
    u are the body-frame components of the angular velocity relative to the
    parent; speeds='rates': u = q' (the joint rates, as a chain of revolute
    joints X, Y, Z has them: codegen.bench.spatial builds that chain for
    Pinocchio).
    """
    if speeds not in ('body', 'rates'):
        raise ValueError(f"speeds must be 'body' or 'rates', got {speeds!r}")
    q, u, bodies, loads = [], [], [], []
    kd = []
    g = sm.symbols('g')
    consts = [g]
    specs = []
    V = sm.S.Zero
    N = me.ReferenceFrame('N')
    O = me.Point('O')
    O.set_vel(N, 0)
    parent, joint = N, O
    for i in range(1, n + 1):
        qi = me.dynamicsymbols(f'q{i}_1:4')
        ui = me.dynamicsymbols(f'u{i}_1:4')
        Bi = parent.orientnew(f'B{i}', 'Body', qi, 'XYZ')
        if speeds == 'rates':
            kd += [ui[k] - qi[k].diff() for k in range(3)]
        else:
            w = Bi.ang_vel_in(parent)
            kd += [ui[k] - w.dot(Bi.x if k == 0 else Bi.y if k == 1 else Bi.z)
                   for k in range(3)]
            Bi.set_ang_vel(parent, ui[0] * Bi.x + ui[1] * Bi.y + ui[2] * Bi.z)
        m, a, b, c = sm.symbols(f'm{i} a{i} b{i} c{i}')
        Ixx, Iyy, Izz, Ixy, Iyz, Izx = sm.symbols(f'I{i}xx I{i}yy I{i}zz I{i}xy I{i}yz I{i}zx')
        Ci = joint.locatenew(f'C{i}', a * Bi.x + b * Bi.y + c * Bi.z)
        Ci.v2pt_theory(joint, N, Bi)
        I = me.inertia(Bi, Ixx, Iyy, Izz, Ixy, Iyz, Izx)
        bodies.append(me.RigidBody(f'b{i}', Ci, Bi, m, (I, Ci)))
        V += m * g * Ci.pos_from(O).dot(N.z)
        Ti = me.dynamicsymbols(f'T{i}')
        loads += [(Ci, -m * g * N.z), (Bi, Ti * Bi.z), (parent, -Ti * Bi.z)] \
            if parent is not N else [(Ci, -m * g * N.z), (Bi, Ti * Bi.z)]
        nxt = Ci.locatenew(f'J{i + 1}', 2 * a * Bi.x)
        nxt.v2pt_theory(joint, N, Bi)
        consts += [m, a, b, c, Ixx, Iyy, Izz, Ixy, Iyz, Izx]
        specs.append(Ti)
        q += qi
        u += ui
        parent, joint = Bi, nxt
    values = {str(c): 0.02 if str(c)[-2:] in ('xy', 'yz', 'zx') else 0.3
              for c in consts}
    values.update({str(c): 1.0 for c in consts if str(c)[0] == 'm'}, g=9.81)
    name = f'chain{n}' if speeds == 'body' else f'chain{n}_rates'
    return Model(name, N, q, u, kd, bodies, loads, constants=consts, specifieds=specs,
                 potential_energy=V, doc=spatial_chain.__doc__, parameter_values=values,
                 initial_state=[0.2, -0.1, 0.3] * n + [0.5, 0.2, -0.3] * n)


#: the humanoid's limbs: (name, attachment on the fixed torso, its three bodies as
#: (name, joint)); a joint is 'xyz' (three body-fixed angles, as a hip or a shoulder
#: has) or the parent axis 'x' or 'y' of a one-speed hinge (knee, ankle, elbow, wrist)
HUMANOID_LIMBS = (
    ("lleg", (0.0, 0.1, 0.0), (("thigh", "xyz"), ("shank", "y"), ("foot", "y"))),
    ("rleg", (0.0, -0.1, 0.0), (("thigh", "xyz"), ("shank", "y"), ("foot", "y"))),
    ("larm", (0.0, 0.2, 0.5), (("upper", "xyz"), ("fore", "y"), ("hand", "x"))),
    ("rarm", (0.0, -0.2, 0.5), (("upper", "xyz"), ("fore", "y"), ("hand", "x"))),
)


def humanoid():
    """A humanoid of 12 rigid bodies and 20 speeds on a fixed torso.

    Two legs (thigh, shank, foot) and two arms (upper arm, forearm, hand)
    hang from the torso (HUMANOID_LIMBS): 3-speed hips and shoulders
    (body-fixed X-Y-Z angles), one-speed knees, ankles, elbows and wrists.
    Each body has a full inertia about its mass centre, which is offset by
    (a, b, c) from its joint in its own frame; the next joint is at twice
    that offset. u = q' (the joint rates). Each hinge carries a specified
    torque T between the body and its parent; gravity along -N.z.
    """
    N = me.ReferenceFrame('N')
    O = me.Point('O')
    O.set_vel(N, 0)
    g = sm.symbols('g')
    q, u, kd, bodies, loads, consts, specs = [], [], [], [], [], [g], []
    V = sm.S.Zero
    for limb, at, segments in HUMANOID_LIMBS:
        parent = N
        joint = O.locatenew(f'{limb}_J0', at[0] * N.x + at[1] * N.y + at[2] * N.z)
        joint.set_vel(N, 0)
        for name, kind in segments:
            tag = f'{limb}_{name}'
            if kind == 'xyz':
                qi = list(me.dynamicsymbols(f'{tag}_q1:4'))
                ui = list(me.dynamicsymbols(f'{tag}_u1:4'))
                B = parent.orientnew(tag, 'Body', qi, 'XYZ')
            else:
                qi, ui = [me.dynamicsymbols(f'{tag}_q')], [me.dynamicsymbols(f'{tag}_u')]
                axis = parent.x if kind == 'x' else parent.y
                B = parent.orientnew(tag, 'Axis', (qi[0], axis))
                T = me.dynamicsymbols(f'{tag}_T')
                specs.append(T)
                loads += [(B, T * axis)] + ([(parent, -T * axis)] if parent is not N else [])
            kd += [uk - qk.diff() for qk, uk in zip(qi, ui)]
            m, a, b, c = sm.symbols(f'{tag}_m {tag}_a {tag}_b {tag}_c')
            inertia = sm.symbols(f'{tag}_Ixx {tag}_Iyy {tag}_Izz {tag}_Ixy {tag}_Iyz {tag}_Izx')
            C = joint.locatenew(f'{tag}_C', a * B.x + b * B.y + c * B.z)
            C.v2pt_theory(joint, N, B)
            bodies.append(me.RigidBody(tag, C, B, m, (me.inertia(B, *inertia), C)))
            loads.append((C, -m * g * N.z))
            V += m * g * C.pos_from(O).dot(N.z)
            nxt = C.locatenew(f'{tag}_J', a * B.x + b * B.y + c * B.z)
            nxt.v2pt_theory(joint, N, B)
            consts += [m, a, b, c, *inertia]
            q += qi
            u += ui
            parent, joint = B, nxt
    values = {}
    for k, s in enumerate(consts[1:]):
        name = str(s).rsplit('_', 1)[1]
        values[str(s)] = {'m': 1.0 + 0.1 * (k % 3), 'a': 0.02, 'b': -0.01, 'c': -0.2,
                          'Ixx': 0.05, 'Iyy': 0.06, 'Izz': 0.02,
                          'Ixy': 0.002, 'Iyz': -0.001, 'Izx': 0.003}[name]
    values['g'] = 9.81
    return Model('humanoid', N, q, u, kd, bodies, loads, constants=consts, specifieds=specs,
                 potential_energy=V, doc=humanoid.__doc__, parameter_values=values,
                 initial_state=[0.1] * len(q) + [0.0] * len(u))


def offset_pendulum():
    """A 3-D compound pendulum whose inertia is given about the pivot.

    The rigid body's reference point (the pivot P) is not its mass centre,
    which exercises Greenwood's (4.292)/(4.297) with rho_c != 0.
    """
    q = me.dynamicsymbols('q1:4')
    u = me.dynamicsymbols('u1:4')
    m, g, a, b, c = sm.symbols('m g a b c')
    I = sm.symbols('Jxx Jyy Jzz Jxy Jyz Jzx')
    N = me.ReferenceFrame('N')
    B = N.orientnew('B', 'Body', q, 'ZXY')
    w = B.ang_vel_in(N)
    kd = [u[0] - w.dot(B.x), u[1] - w.dot(B.y), u[2] - w.dot(B.z)]
    B.set_ang_vel(N, u[0] * B.x + u[1] * B.y + u[2] * B.z)
    P = me.Point('P')
    P.set_vel(N, 0)
    C = P.locatenew('C', a * B.x + b * B.y + c * B.z)
    C.v2pt_theory(P, N, B)
    body = me.RigidBody('body', C, B, m, (me.inertia(B, *I), P))
    values = {'m': 1.0, 'g': 9.81, 'a': 0.3, 'b': 0.1, 'c': -0.2, 'Jxx': 0.2, 'Jyy': 0.25,
              'Jzz': 0.3, 'Jxy': 0.01, 'Jyz': -0.02, 'Jzx': 0.015}
    return Model('offset_pendulum', N, list(q), list(u), kd, [body],
                 loads=[(C, -m * g * N.z)], constants=[m, g, a, b, c, *I],
                 potential_energy=m * g * C.pos_from(P).dot(N.z),
                 doc=offset_pendulum.__doc__, parameter_values=values,
                 initial_state=[0.1, 0.2, 0.3, 1.0, -0.5, 0.3])


def chaplygin_sleigh():
    """Chaplygin sleigh: a rigid body on a plane with a knife edge at P.

    q = (x, y, theta) of the knife-edge point P; the mass centre lies a
    distance a ahead of P along the body x axis; u1 = theta', u2 = speed of
    P along the body x axis, u3 = lateral speed of P, constrained to zero.
    """
    x, y, th = me.dynamicsymbols('x y theta')
    u1, u2, u3 = me.dynamicsymbols('u1:4')
    m, a, Izz = sm.symbols('m a I_zz', positive=True)
    N = me.ReferenceFrame('N')
    B = N.orientnew('B', 'Axis', [th, N.z])
    B.set_ang_vel(N, u1 * N.z)
    O = me.Point('O')
    O.set_vel(N, 0)
    P = O.locatenew('P', x * N.x + y * N.y)
    P.set_vel(N, u2 * B.x + u3 * B.y)
    C = P.locatenew('C', a * B.x)
    C.v2pt_theory(P, N, B)
    body = me.RigidBody('sleigh', C, B, m, (me.inertia(B, 0, 0, Izz), C))
    kd = [u1 - th.diff(),
          u2 - (x.diff() * sm.cos(th) + y.diff() * sm.sin(th)),
          u3 - (-x.diff() * sm.sin(th) + y.diff() * sm.cos(th))]
    return Model('chaplygin_sleigh', N, [x, y, th], [u1, u2], kd, [body],
                 u_dependent=[u3], velocity_constraints=[u3],
                 constants=[m, a, Izz], doc=chaplygin_sleigh.__doc__,
                 parameter_values={'m': 1.0, 'a': 0.2, 'I_zz': 0.1},
                 initial_state=[0, 0, 0, 1.0, 0.5])


def _planar_links(N, O, angles, speeds, lengths, masses, g, base=None):
    """Links hinged in series from O (or base), absolute angles; mass centres at midpoints."""
    bodies, loads, V = [], [], sm.S.Zero
    joint = O if base is None else base
    tip = None
    for qi, ui, li, mi in zip(angles, speeds, lengths, masses):
        Ai = N.orientnew(f'A_{qi.func}', 'Axis', [qi, N.z])
        Ai.set_ang_vel(N, ui * N.z)
        Ci = joint.locatenew(f'C_{qi.func}', li / 2 * Ai.x)
        Ci.v2pt_theory(joint, N, Ai)
        tip = joint.locatenew(f'P_{qi.func}', li * Ai.x)
        tip.v2pt_theory(joint, N, Ai)
        I = me.inertia(Ai, 0, 0, mi * li**2 / 12)
        bodies.append(me.RigidBody(f'link_{qi.func}', Ci, Ai, mi, (I, Ci)))
        loads.append((Ci, -mi * g * N.y))
        V += mi * g * Ci.pos_from(O).dot(N.y)
        joint = tip
    return bodies, loads, V, tip


def four_bar(kind='tree', lengths=(0.3, 1.0, 0.8, 1.0), redundant=None):
    """Planar four-bar linkage: crank l1 and coupler l2 from the pivot O, rocker
    l3 from the pivot D = (d, 0); links are uniform bars, gravity -g N.y.

    kind='tree': q = (q1, q2, q3) absolute angles, u = q', the loop closed by
    two configuration constraints (coupler tip = rocker tip) left to the
    run-time SVD elimination. kind='reduced': the same mechanism with one
    independent coordinate q1 (q2, q3 dependent, their speeds eliminated
    symbolically). redundant='3d' adds the z row of the point coincidence
    (identically zero), redundant='twice' repeats the x row: both make the
    constraint matrix rank-deficient. lengths = (l1, l2, l3, d); with
    l1 = l3 and l2 = d it is a parallelogram.
    """
    q = me.dynamicsymbols('q1:4')
    u = me.dynamicsymbols('u1:4')
    l1, l2, l3, d, m1, m2, m3, g = sm.symbols('l1 l2 l3 d m1 m2 m3 g')
    N = me.ReferenceFrame('N')
    O = me.Point('O')
    O.set_vel(N, 0)
    D = O.locatenew('D', d * N.x)
    D.set_vel(N, 0)
    b12, l12, V12, P2 = _planar_links(N, O, q[:2], u[:2], [l1, l2], [m1, m2], g)
    b3, l3_, V3, P3 = _planar_links(N, O, q[2:], u[2:], [l3], [m3], g, base=D)
    gap = P2.pos_from(O) - P3.pos_from(O)
    closure = [gap.dot(N.x), gap.dot(N.y)]
    if redundant == '3d':
        closure.append(gap.dot(N.z))
    elif redundant == 'twice':
        closure.append(closure[0])
    kd = [ui - qi.diff() for qi, ui in zip(q, u)]
    values = dict(zip(['l1', 'l2', 'l3', 'd'], lengths), m1=1.0, m2=2.0, m3=1.5, g=9.81)
    common = dict(bodies=b12 + b3, loads=l12 + l3_, potential_energy=V12 + V3,
                  constants=[l1, l2, l3, d, m1, m2, m3, g], parameter_values=values,
                  doc=four_bar.__doc__)
    if kind == 'tree':
        return Model('four_bar', N, list(q), list(u), kd, configuration_constraints=closure,
                     initial_state=[1.0, 0.3, 1.5, 2.0, 0.0, 0.0], **common)
    vel = [sm.diff(c, me.dynamicsymbols._t).subs({qi.diff(): ui for qi, ui in zip(q, u)})
           for c in closure]
    return Model('four_bar_reduced', N, [q[0]], [u[0]], kd, q_dependent=list(q[1:]),
                 u_dependent=list(u[1:]), configuration_constraints=closure,
                 velocity_constraints=vel, **common)


def bricard():
    """Bricard's mechanism (IFToMM benchmark A04): five uniform bars of length L
    and mass m close a loop with the ground through six revolute joints.

    In the reference configuration (q = 0) the joints sit on six vertices of a
    unit cube, O = (0, 0, 0), A = (L, 0, 0), B = (L, L, 0), C = (L, L, L),
    D = (0, L, L), E = (0, 0, L), every bar along an edge, every joint axis
    perpendicular to both bars it joins (O: y, A: z, B: x, C: y, D: z, E: x),
    consecutive axes perpendicular. q_i is the angle of joint i relative to the
    bar before it (the ground for q1), u = q'. The loop is closed at E by five
    configuration constraints: bar 5's tip at E (three rows) and its joint
    axis along N.x (two rows). On the manifold they have rank 4, so the
    mechanism moves with one degree of freedom where a count of rows predicts
    none. Gravity -g N.y.
    """
    q = me.dynamicsymbols('q1:6')
    u = me.dynamicsymbols('u1:6')
    L, m, g = sm.symbols('L m g')
    N = me.ReferenceFrame('N')
    O = me.Point('O')
    O.set_vel(N, 0)
    # joint axis (in the parent's frame) and bar direction (in the bar's frame)
    axes, bars = 'yzxyz', [(1, 'x'), (1, 'y'), (1, 'z'), (-1, 'x'), (-1, 'y')]
    parent, joint = N, O
    bodies, V = [], sm.S.Zero
    k = m * L**2 / 12
    for i, (qi, ui, ax, (sign, along)) in enumerate(zip(q, u, axes, bars), start=1):
        axis = getattr(parent, ax)
        Bi = parent.orientnew(f'B{i}', 'Axis', (qi, axis))
        Bi.set_ang_vel(parent, ui * axis)
        e = sign * getattr(Bi, along)
        G = joint.locatenew(f'G{i}', L / 2 * e)
        G.v2pt_theory(joint, N, Bi)
        tip = joint.locatenew(f'J{i + 1}', L * e)
        tip.v2pt_theory(joint, N, Bi)
        diag = [0 if along == c else k for c in 'xyz']
        bodies.append(me.RigidBody(f'bar{i}', G, Bi, m, (me.inertia(Bi, *diag), G)))
        V += m * g * G.pos_from(O).dot(N.y)
        parent, joint = Bi, tip
    gap = joint.pos_from(O) - L * N.z
    closure = [gap.dot(N.x), gap.dot(N.y), gap.dot(N.z), parent.x.dot(N.y), parent.x.dot(N.z)]
    kd = [ui - qi.diff() for qi, ui in zip(q, u)]
    return Model('bricard', N, list(q), list(u), kd, bodies,
                 loads=[(b.masscenter, -m * g * N.y) for b in bodies],
                 configuration_constraints=closure, constants=[L, m, g],
                 potential_energy=V, doc=bricard.__doc__,
                 parameter_values={'L': 1.0, 'm': 1.0, 'g': 9.81},
                 initial_state=[0.0] * 10)


def cartesian_pendulum():
    """The simple pendulum of the IFToMM benchmarks (A01) in natural coordinates: a
    point mass m at (x, y) held at distance L from the origin by the configuration
    constraint x² + y² - L² = 0, gravity -g N.y; u = q'. It starts horizontal, at
    rest, at (L, 0). Its exact motion is the plain pendulum's, φ'' = -(g / L) cos φ
    for the angle φ of (x, y) from N.x."""
    x, y = me.dynamicsymbols('x y')
    vx, vy = me.dynamicsymbols('v_x v_y')
    L, m, g = sm.symbols('L m g')
    N = me.ReferenceFrame('N')
    O = me.Point('O')
    O.set_vel(N, 0)
    P = O.locatenew('P', x * N.x + y * N.y)
    P.set_vel(N, vx * N.x + vy * N.y)
    return Model('cartesian_pendulum', N, [x, y], [vx, vy], [vx - x.diff(), vy - y.diff()],
                 [me.Particle('bob', P, m)], loads=[(P, -m * g * N.y)],
                 configuration_constraints=[x**2 + y**2 - L**2], constants=[L, m, g],
                 potential_energy=m * g * y, doc=cartesian_pendulum.__doc__,
                 parameter_values={'L': 1.0, 'm': 1.0, 'g': 9.81},
                 initial_state=[1.0, 0.0, 0.0, 0.0])


def n_four_bar(n=1):
    """The N four-bar mechanism (IFToMM benchmark A02): n + 1 cranks of length L
    hinged to the ground at x = 0, L, ..., n L, their tips joined by n couplers
    of length L, so n parallelograms share their cranks (uniform bars of mass m,
    gravity -g N.y).

    q: the cranks' absolute angles φ0..φn, then the couplers' ψ1..ψn; u = q'.
    Each coupler closes its loop with two configuration constraints (2 n rows
    for 2 n + 1 coordinates: one degree of freedom). The initial state has
    every crank vertical and the first crank's tip moving at 1 m/s; the exact
    motion keeps all cranks equal and the couplers horizontal, passing the flat
    singular position (every bar on the ground line) twice a turn.
    """
    phi = me.dynamicsymbols(f'phi0:{n + 1}')
    psi = me.dynamicsymbols(f'psi1:{n + 1}')
    dphi = me.dynamicsymbols(f'dphi0:{n + 1}')
    dpsi = me.dynamicsymbols(f'dpsi1:{n + 1}')
    L, m, g = sm.symbols('L m g')
    N = me.ReferenceFrame('N')
    O = me.Point('O')
    O.set_vel(N, 0)
    bodies, loads, V, tips = [], [], sm.S.Zero, []
    for i in range(n + 1):
        base = O.locatenew(f'O{i}', i * L * N.x)
        base.set_vel(N, 0)
        b, l_, v, tip = _planar_links(N, O, [phi[i]], [dphi[i]], [L], [m], g, base=base)
        bodies, loads, V, tips = bodies + b, loads + l_, V + v, tips + [tip]
    closure = []
    for i in range(1, n + 1):
        b, l_, v, tip = _planar_links(N, O, [psi[i - 1]], [dpsi[i - 1]], [L], [m], g,
                                      base=tips[i - 1])
        bodies, loads, V = bodies + b, loads + l_, V + v
        gap = tip.pos_from(O) - tips[i].pos_from(O)
        closure += [gap.dot(N.x), gap.dot(N.y)]
    q, u = list(phi) + list(psi), list(dphi) + list(dpsi)
    kd = [ui - qi.diff() for qi, ui in zip(q, u)]
    return Model(f'n_four_bar{n}', N, q, u, kd, bodies, loads=loads,
                 configuration_constraints=closure, constants=[L, m, g],
                 potential_energy=V, doc=n_four_bar.__doc__,
                 parameter_values={'L': 1.0, 'm': 1.0, 'g': 9.81},
                 initial_state=[math.pi / 2] * (n + 1) + [0.0] * n
                 + [1.0] * (n + 1) + [0.0] * n)


def n_four_bar_exact(n, times, L=1.0, m=1.0, g=9.81):
    """The exact motion of n_four_bar(n) from its initial state: every crank at
    the angle φ(t) of J φ'' = -C cos φ (J, C: the chain's inertia and weight
    about the cranks' angle), integrated to 1e-13 by SciPy's DOP853."""
    import numpy as np
    from scipy.integrate import solve_ivp
    J = (n + 1) * m * L**2 / 3 + n * m * L**2       # cranks about their pivots, couplers
    C = (n + 1) * m * g * L / 2 + n * m * g * L     # translate with the cranks' tips
    sol = solve_ivp(lambda t, y: [y[1], -C / J * np.cos(y[0])], (times[0], times[-1]),
                    [np.pi / 2, 1.0 / L], method='DOP853', rtol=1e-13, atol=1e-13,
                    t_eval=times)
    return sol.y[0]


def slider_crank(kind='tree'):
    """Slider-crank: crank l1 from O, connecting rod l2, a slider of mass ms on
    the line y = e through its own coordinate s (uniform bars, gravity -g N.y).

    kind='tree': q = (q1, q2, s), u = q', two configuration constraints (rod
    tip = slider) left to the run-time elimination. kind='reduced': q1
    independent, q2 and s dependent, eliminated symbolically.
    """
    q1, q2, s = me.dynamicsymbols('q1 q2 s')
    u1, u2, us = me.dynamicsymbols('u1 u2 u_s')
    l1, l2, e, m1, m2, ms, g = sm.symbols('l1 l2 e m1 m2 m_s g')
    N = me.ReferenceFrame('N')
    O = me.Point('O')
    O.set_vel(N, 0)
    bodies, loads, V, P2 = _planar_links(N, O, [q1, q2], [u1, u2], [l1, l2], [m1, m2], g)
    S = O.locatenew('S', s * N.x + e * N.y)
    S.set_vel(N, us * N.x)
    bodies.append(me.Particle('slider', S, ms))
    loads.append((S, -ms * g * N.y))
    V += ms * g * e
    gap = P2.pos_from(O) - S.pos_from(O)
    closure = [gap.dot(N.x), gap.dot(N.y)]
    kd = [u1 - q1.diff(), u2 - q2.diff(), us - s.diff()]
    values = dict(l1=0.3, l2=1.0, e=0.1, m1=1.0, m2=1.5, m_s=0.7, g=9.81)
    common = dict(bodies=bodies, loads=loads, potential_energy=V,
                  constants=[l1, l2, e, m1, m2, ms, g], parameter_values=values,
                  doc=slider_crank.__doc__)
    if kind == 'tree':
        return Model('slider_crank', N, [q1, q2, s], [u1, u2, us], kd,
                     configuration_constraints=closure,
                     initial_state=[0.5, -0.1, 1.2, 3.0, 0.0, 0.0], **common)
    qs = {q1.diff(): u1, q2.diff(): u2, s.diff(): us}
    vel = [sm.diff(c, me.dynamicsymbols._t).subs(qs) for c in closure]
    return Model('slider_crank_reduced', N, [q1], [u1], kd, q_dependent=[q2, s],
                 u_dependent=[u2, us], configuration_constraints=closure,
                 velocity_constraints=vel, **common)


def spring_damper(k=1e6, c=1e5):
    """A mass on a stiff spring and a strong damper (stiffness k, damping c), for
    stiff integrators: with m = 1 the modes decay at about -k/c = -10 and
    -c/m = -1e5 per second.

    q = x, u = x'; force -k x - c u along N.x.
    """
    x, v = me.dynamicsymbols('x v')
    m, ks, cs = sm.symbols('m k c', positive=True)
    N = me.ReferenceFrame('N')
    O = me.Point('O')
    O.set_vel(N, 0)
    P = O.locatenew('P', x * N.x)
    P.set_vel(N, v * N.x)
    return Model('spring_damper', N, [x], [v], [v - x.diff()], [me.Particle('mass', P, m)],
                 loads=[(P, (-ks * x - cs * v) * N.x)], constants=[m, ks, cs],
                 potential_energy=ks * x**2 / 2, doc=spring_damper.__doc__,
                 parameter_values={'m': 1.0, 'k': k, 'c': c}, initial_state=[1.0, 0.0],
                 stiff=True, conservative=False)


def _meijaard_values() -> dict:
    """Meijaard et al. (2007)'s benchmark bicycle in whipple_bicycle's
    parameters (the conversion of SymPy's test_kane3; products of inertia
    with the sign of its frames)."""
    rR, rF, hta, trail, wb = 0.3, 0.35, math.pi / 2 - math.pi / 10, 0.08, 1.02
    frame_x, frame_z, fork_x, fork_z = 0.3, 0.9, 0.9, 0.7
    rake = -(trail * math.sin(hta) - rF * math.cos(hta))
    a, b = fork_z - rF, wb - fork_x
    c = math.hypot(a, b)
    fork_length = wb * math.cos(hta) - (rF - rR) * math.sin(hta)
    return dict(
        WFrad=rF, WRrad=rR, htangle=hta, forkoffset=rake, forklength=fork_length,
        framelength=wb * math.sin(hta) - (rake - (rF - rR) * math.cos(hta)),
        framecg1=(frame_z - rR - frame_x / math.sin(hta) * math.cos(hta)) * math.sin(hta),
        framecg3=(frame_x / math.sin(hta)
                  + (frame_z - rR - frame_x / math.sin(hta) * math.cos(hta)) * math.cos(hta)),
        forkcg1=c * math.cos(math.pi / 2 - hta - math.acos(a / c)) - fork_length,
        forkcg3=rake + c * math.sin(math.pi / 2 - hta - math.acos(a / c)),
        Iwr11=0.0603, Iwr22=0.12, Iwf11=0.1405, Iwf22=0.28, Ifork11=0.05892, Ifork22=0.06,
        Ifork33=0.00708, Ifork31=0.00756, Iframe11=9.2, Iframe22=11, Iframe33=2.8,
        Iframe31=-2.4, mfork=4, mframe=85, mwf=3, mwr=2, g=9.81)


def whipple_bicycle(speed=5.0):
    """The Whipple bicycle exactly as SymPy's test_kane3 builds it (Moore's port
    from Autolev), with the parameters of Meijaard et al. (2007)'s benchmark.

    q = (q1 yaw, q2 lean, q5 steer; q4 frame pitch, dependent through the
    front contact's height), u = (u2 lean rate, u3 rear wheel rate, u5 steer
    rate; u1, u4, u6 dependent through the front contact's three velocity
    constraints). The wheels' angles are ignorable and left out. The initial
    state runs upright at `speed` m/s with a lean rate of 0.5 rad/s: inside
    Meijaard's stable range (4.29-6.02 m/s) the lean decays in a weave.
    """
    q1, q2, q4, q5 = me.dynamicsymbols('q1 q2 q4 q5')
    u1, u2, u3, u4, u5, u6 = me.dynamicsymbols('u1 u2 u3 u4 u5 u6')
    names = list(_meijaard_values())
    WFrad, WRrad, htangle, forkoffset, forklength, framelength, framecg1, framecg3, \
        forkcg1, forkcg3, Iwr11, Iwr22, Iwf11, Iwf22, Ifork11, Ifork22, Ifork33, Ifork31, \
        Iframe11, Iframe22, Iframe33, Iframe31, mfork, mframe, mwf, mwr, g = \
        constants = sm.symbols(names)
    N = me.ReferenceFrame('N')
    Y = N.orientnew('Y', 'Axis', [q1, N.z])
    R = Y.orientnew('R', 'Axis', [q2, Y.x])
    Frame = R.orientnew('Frame', 'Axis', [q4 + htangle, R.y])
    WR = me.ReferenceFrame('WR')
    TempFrame = Frame.orientnew('TempFrame', 'Axis', [-htangle, Frame.y])
    Fork = Frame.orientnew('Fork', 'Axis', [q5, Frame.x])
    TempFork = Fork.orientnew('TempFork', 'Axis', [-htangle, Fork.y])
    WF = me.ReferenceFrame('WF')
    WR_cont = me.Point('WR_cont')
    WR_mc = WR_cont.locatenew('WR_mc', WRrad * R.z)
    Steer = WR_mc.locatenew('Steer', framelength * Frame.z)
    Frame_mc = WR_mc.locatenew('Frame_mc', -framecg1 * Frame.x + framecg3 * Frame.z)
    Fork_mc = Steer.locatenew('Fork_mc', -forkcg1 * Fork.x + forkcg3 * Fork.z)
    WF_mc = Steer.locatenew('WF_mc', forklength * Fork.x + forkoffset * Fork.z)
    WF_cont = WF_mc.locatenew('WF_cont', WFrad * (me.dot(Fork.y, Y.z) * Fork.y
                                                  - Y.z).normalize())
    Y.set_ang_vel(N, u1 * Y.z)
    R.set_ang_vel(Y, u2 * R.x)
    WR.set_ang_vel(Frame, u3 * Frame.y)
    Frame.set_ang_vel(R, u4 * Frame.y)
    Fork.set_ang_vel(Frame, u5 * Fork.x)
    WF.set_ang_vel(Fork, u6 * Fork.y)
    WR_cont.set_vel(N, 0)
    WR_mc.v2pt_theory(WR_cont, N, WR)
    Steer.v2pt_theory(WR_mc, N, Frame)
    Frame_mc.v2pt_theory(WR_mc, N, Frame)
    Fork_mc.v2pt_theory(Steer, N, Fork)
    WF_mc.v2pt_theory(Steer, N, Fork)
    WF_cont.v2pt_theory(WF_mc, N, WF)
    bodies = [
        me.RigidBody('BodyFrame', Frame_mc, Frame, mframe,
                     (me.inertia(TempFrame, Iframe11, Iframe22, Iframe33, 0, 0, Iframe31),
                      Frame_mc)),
        me.RigidBody('BodyFork', Fork_mc, Fork, mfork,
                     (me.inertia(TempFork, Ifork11, Ifork22, Ifork33, 0, 0, Ifork31), Fork_mc)),
        me.RigidBody('BodyWR', WR_mc, WR, mwr, (me.inertia(Frame, Iwr11, Iwr22, Iwr11), WR_mc)),
        me.RigidBody('BodyWF', WF_mc, WF, mwf, (me.inertia(Fork, Iwf11, Iwf22, Iwf11), WF_mc))]
    kd = [q1.diff() - u1, q2.diff() - u2, q4.diff() - u4, q5.diff() - u5]
    v = WF_cont.vel(N)
    masses = [(Frame_mc, mframe), (Fork_mc, mfork), (WF_mc, mwf), (WR_mc, mwr)]
    values = _meijaard_values()
    return Model('whipple_bicycle', N, [q1, q2, q5], [u2, u3, u5], kd, bodies,
                 loads=[(P, -m * g * Y.z) for P, m in masses],
                 q_dependent=[q4], u_dependent=[u1, u4, u6],
                 velocity_constraints=[v & Y.x, v & Y.y, v & Y.z],
                 configuration_constraints=[WF_cont.pos_from(WR_cont) & Y.z],
                 constants=list(constants),
                 potential_energy=sum(m * g * (P.pos_from(WR_cont) & Y.z) for P, m in masses),
                 doc=whipple_bicycle.__doc__, parameter_values=values,
                 initial_state=[0.0, 0.0, 0.0, 0.0, 0.5, speed / values['WRrad'], 0.0],
                 shapes=_wheels([(WR, WR_mc, values['WRrad']), (WF, WF_mc, values['WFrad'])]))


def _wheels(wheels):
    from ..description.shapes import Cylinder
    return [Cylinder(W, C, radius, 0.03, axis='y', color='#333333') for W, C, radius in wheels]


#: name -> builder, for the command line
EXAMPLES = {
    'dumbbell': dumbbell,
    'rolling_disk': rolling_disk,
    'rolling_disk_contact': rolling_disk_contact,
    'pendulum': n_pendulum_on_cart,
    'chain': spatial_chain,
    'humanoid': humanoid,
    'offset_pendulum': offset_pendulum,
    'chaplygin_sleigh': chaplygin_sleigh,
    'four_bar': four_bar,
    'bricard': bricard,
    'n_four_bar': n_four_bar,
    'cartesian_pendulum': cartesian_pendulum,
    'slider_crank': slider_crank,
    'spring_damper': spring_damper,
    'stiff_pendulum': stiff_pendulum,
    'whipple_bicycle': whipple_bicycle,
}
