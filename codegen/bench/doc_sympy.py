"""SymPy's documentation examples for physics.mechanics and physics.biomechanics.

Each builder writes out the model of one page of SymPy's documentation
(doc/src/tutorials/physics/mechanics/ and .../biomechanics/ in the sympy
repository) as a :class:`codegen.bench.doc_model.DocModel`: the same frames,
orientations, stored velocities, constraints, bodies and loads, formed
through the same call. Where a page gives no numbers, ``note`` says which
are ours.
"""
from __future__ import annotations

import math

import sympy as sm
import sympy.physics.biomechanics as bm
import sympy.physics.mechanics as me

from .. import examples
from .doc_model import DocModel, from_system

__all__ = ["rolling_disc", "rolling_disc_aux", "bicycle", "nonminimal_pendulum",
           "multidof_system", "four_bar", "duffing", "atwood", "arm"]

t = me.dynamicsymbols._t
DOC = "sympy: doc/src/tutorials/physics/"


def _disc(auxiliary: bool) -> DocModel:
    """The rolling disc from its contact point up: yaw Y, lean L, spin R (3-1-2),
    R's angular velocity stored in lean-frame components of u1..u3."""
    q1, q2, q3, u1, u2, u3 = me.dynamicsymbols('q1 q2 q3 u1 u2 u3')
    r, m, g = sm.symbols('r m g')
    N = me.ReferenceFrame('N')
    Y = N.orientnew('Y', 'Axis', [q1, N.z])
    L = Y.orientnew('L', 'Axis', [q2, Y.x])
    R = L.orientnew('R', 'Axis', [q3, L.y])
    rate_form = R.ang_vel_in(N)
    R.set_ang_vel(N, u1 * L.x + u2 * L.y + u3 * L.z)
    contact = me.Point('C')
    aux, loads = [], []
    if auxiliary:
        # speeds of the contact point that are zero, to bring its reaction into evidence
        u4, u5, u6, f1, f2, f3 = me.dynamicsymbols('u4 u5 u6 f1 f2 f3')
        aux = [u4, u5, u6]
        contact.set_vel(N, u4 * L.x + u5 * me.cross(Y.z, L.x) + u6 * Y.z)
    else:
        contact.set_vel(N, 0)
    centre = contact.locatenew('Dmc', r * L.z)
    centre.v2pt_theory(contact, N, R)
    inertia = me.inertia(L, m / 4 * r**2, m / 2 * r**2, m / 4 * r**2)
    kd = [me.dot(R.ang_vel_in(N) - rate_form, e) for e in L]
    loads.append((centre, -m * g * Y.z))
    if auxiliary:
        loads.append((contact, f1 * L.x + f2 * me.cross(Y.z, L.x) + f3 * Y.z))
    disc = me.RigidBody('BodyD', centre, R, m, (inertia, centre))
    page = "rollingdisc_example_kane_constraints.rst" if auxiliary else \
        "rollingdisc_example_kane.rst"
    return DocModel(
        "rolling_disc_aux" if auxiliary else "rolling_disc", DOC + "mechanics/" + page,
        N, [q1, q2, q3], [u1, u2, u3], kd, [disc], loads, u_auxiliary=aux,
        constants={r: 0.3, m: 2.0, g: 9.81},
        specifieds={f: 0.0 for f in (me.dynamicsymbols('f1 f2 f3') if auxiliary else [])},
        initial_conditions={q2: 0.1, u1: 0.3, u2: 4.0, u3: 0.2}, times=(0.0, 2.0, 41),
        note="the page gives no numbers: r, m, g and the initial state are ours")


def rolling_disc() -> DocModel:
    return _disc(False)


def rolling_disc_aux() -> DocModel:
    return _disc(True)


def bicycle() -> DocModel:
    """The linearized Carvallo-Whipple bicycle page: q4 dependent through the contact
    of the front wheel, u1, u4, u6 dependent through its no-slip constraints,
    constraint_solver='CRAMER'; Meijaard's benchmark values. The page's model is SymPy's
    test_kane3, which codegen.examples.whipple_bicycle writes out already."""
    m = examples.whipple_bicycle()
    return DocModel(
        "bicycle", DOC + "mechanics/bicycle_example.rst", m.frame, m.q_ind, m.u_ind,
        m.kd_eqs, m.bodies, m.loads, q_dependent=m.q_dependent, u_dependent=m.u_dependent,
        configuration_constraints=m.configuration_constraints,
        velocity_constraints=m.velocity_constraints,
        options=dict(constraint_solver='CRAMER'),
        constants={s: float(m.parameter_values[s.name]) for s in m.constants},
        initial_conditions=dict(zip(m.q_ind + m.q_dependent + m.u_ind, m.initial_state)),
        times=(0.0, 1.0, 21),
        note="the page linearizes at forward speed v; the initial state (upright at 5 m/s, "
             "roll rate 0.5 rad/s) is ours")


def nonminimal_pendulum() -> DocModel:
    """The pendulum in the x, y coordinates of its bob: q1 and u1 dependent through
    its length and its zero radial speed."""
    q1, q2 = me.dynamicsymbols('q1:3')
    q1d, q2d = me.dynamicsymbols('q1:3', level=1)
    u1, u2 = me.dynamicsymbols('u1:3')
    L, m, g = sm.symbols('L, m, g')
    N = me.ReferenceFrame('N')
    origin = me.Point('N*')
    origin.set_vel(N, 0)
    A = N.orientnew('A', 'axis', [sm.atan(q2 / q1), N.z])       # A.x along the rod
    bob = origin.locatenew('P1', q1 * N.x + q2 * N.y)
    kde = sm.Matrix([q1d - u1, q2d - u2])
    rates = sm.solve(kde, [q1d, q2d])
    bob.set_vel(N, bob.pos_from(origin).dt(N).subs(rates))
    f_c = sm.Matrix([bob.pos_from(origin).magnitude() - L])
    f_v = sm.Matrix([bob.vel(N).express(A).dot(A.x)])
    f_v.simplify()
    return DocModel(
        "nonminimal_pendulum", DOC + "mechanics/lin_pend_nonmin_example.rst", N, [q2], [u2],
        kde, [me.Particle('pP', bob, m)], [(bob, m * g * N.x)], q_dependent=[q1],
        u_dependent=[u1], configuration_constraints=f_c, velocity_constraints=f_v,
        constants={L: 1.0, m: 1.0, g: 9.81}, initial_conditions={q1: 1.0, q2: 0.5},
        times=(0.0, 2.0, 41), note="the page linearizes only: the numbers are ours")


def multidof_system() -> DocModel:
    """A block on a spring and damper, a compound pendulum on it and a simple pendulum
    on that, built with joints and actuators in a System; F and T specified."""
    q1, q2, q3, u1, u2, u3 = me.dynamicsymbols('q1, q2, q3, u1, u2, u3')
    F, T = me.dynamicsymbols('F, T')
    l, k, c, g, kT = sm.symbols('l, k, c, g, kT')
    ma, mb, mc, IBzz = sm.symbols('ma, mb, mc, IBzz')
    wall = me.RigidBody('N')
    block = me.Particle('A', mass=ma)
    compound = me.RigidBody('B', mass=mb)
    compound.central_inertia = me.inertia(compound.frame, 0, 0, IBzz)
    simple = me.Particle('C', mass=mc)
    system = me.System.from_newtonian(wall)
    system.add_bodies(block, compound, simple)
    block_frame = me.ReferenceFrame('A')
    block.masscenter.set_vel(block_frame, 0)
    simple_frame = me.ReferenceFrame('C')
    simple.masscenter.set_vel(simple_frame, 0)
    system.add_joints(
        me.PrismaticJoint('J1', wall, block, coordinates=q1, speeds=u1,
                          child_interframe=block_frame),
        me.PinJoint('J2', block, compound, coordinates=q2, speeds=u2, joint_axis=wall.z,
                    child_point=l * 2 / 3 * compound.y, parent_interframe=block_frame),
        me.PinJoint('J3', compound, simple, coordinates=q3, speeds=u3,
                    joint_axis=compound.z, parent_point=-l / 3 * compound.y,
                    child_point=l * simple_frame.y, child_interframe=simple_frame))
    system.apply_uniform_gravity(-g * wall.y)
    system.add_loads(me.Force(block, F * wall.x))
    path = me.LinearPathway(wall.masscenter, block.masscenter)
    system.add_actuators(me.LinearSpring(k, path), me.LinearDamper(c, path),
                         me.TorqueActuator(T, wall.z, compound, wall),
                         me.TorqueActuator(kT * q3, wall.z, compound, simple_frame))
    return from_system(
        "multidof_system", DOC + "mechanics/multi_degree_freedom_holonomic_system.rst",
        system, form_options=dict(explicit_kinematics=True),
        constants={ma: 1.0, mb: 2.0, mc: 1.0, g: 9.81, l: 2.0, IBzz: 2.0, c: 10.0, k: 60.0,
                   kT: 10.0},
        specifieds={F: 0.0, T: 1.0}, initial_conditions={q1: 1.0}, times=(0.0, 2.0, 41),
        note="the page gives no numbers: PyDy's for the same system")


def four_bar() -> DocModel:
    """The four-bar closed by two holonomic constraints in a System, with gravity and
    the auxiliary speeds of the closing joint (its reaction in auxiliary_eqs)."""
    q1, q2, q3, u1, u2, u3 = me.dynamicsymbols('q1:4, u1:4')
    l1, l2, l3, l4, rho = sm.symbols('l1:5, rho')
    N = me.ReferenceFrame('N')
    centres = [me.Point(f'mc{i}') for i in range(1, 5)]
    lengths = (l1, l2, l3, l4)
    inertias = [me.Inertia.from_inertia_scalars(P, N, 0, 0, rho * ln**3 / 12)
                for P, ln in zip(centres, lengths)]
    links = [me.RigidBody('Link1', frame=N, mass=rho * l1, masscenter=centres[0],
                          inertia=inertias[0])]
    links += [me.RigidBody(f'Link{i + 1}', mass=rho * lengths[i], masscenter=centres[i],
                           inertia=inertias[i]) for i in range(1, 4)]
    system = me.System.from_newtonian(links[0])
    joints = [me.PinJoint(f'J{i + 1}', links[i], links[i + 1], coordinates=q, speeds=u,
                          parent_point=lengths[i] / 2 * links[i].x,
                          child_point=-lengths[i + 1] / 2 * links[i + 1].x,
                          joint_axis=links[i].z)
              for i, (q, u) in enumerate(zip((q1, q2, q3), (u1, u2, u3)))]
    system.add_joints(*joints)
    start = links[0].masscenter.locatenew('start_point', -l1 / 2 * links[0].x)
    end = links[3].masscenter.locatenew('end_point', l4 / 2 * links[3].x)
    loop = end.pos_from(start)
    system.add_holonomic_constraints(loop.dot(links[0].x), loop.dot(links[0].y))
    system.q_ind, system.u_ind = [q1], [u1]
    system.q_dep, system.u_dep = [q2, q3], [u2, u3]
    # auxiliary speeds at the closing point; its velocity constraints carry them
    uaux1, uaux2 = me.dynamicsymbols('uaux1:3')
    end_aux = end.locatenew('end_point_aux', 0)
    end_aux.set_vel(N, end.vel(N) + uaux1 * N.x + uaux2 * N.y)
    system.velocity_constraints = [end_aux.vel(N).dot(N.x), end_aux.vel(N).dot(N.y)]
    faux1, faux2 = me.dynamicsymbols('faux1:3')
    at_aux = end.locatenew('end_point_forces', 0)
    at_aux.set_vel(N, uaux1 * N.x + uaux2 * N.y)
    system.add_loads(me.Force(at_aux, faux1 * N.x + faux2 * N.y))
    system.u_aux = [uaux1, uaux2]
    g = sm.symbols('g')
    system.apply_uniform_gravity(-g * N.y)
    system.validate_system()
    return from_system(
        "four_bar", DOC + "mechanics/four_bar_linkage_example.rst", system,
        constants={l1: 2.0, l2: 1.0, l3: 2.0, l4: 1.0, rho: 5.0, g: 9.81},
        specifieds={faux1: 0.0, faux2: 0.0},
        initial_conditions={q1: math.pi / 2, q2: math.pi / 2, q3: math.pi / 2, u1: 0.5},
        times=(0.0, 0.5, 11), note="the page's numbers; the initial speed u1 is ours (from it the "
             "parallelogram folds flat, a singular position, at about 0.93 s)")


def duffing() -> DocModel:
    """A pendulum hanging from a block on a Duffing spring and a damper. The page
    forms it with LagrangesMethod; here with u = q' and Kane's call (the model, its
    stored velocities in q' and its loads are the page's)."""
    M, m, l, k1, k2, c1, g, h, w, d, r = sm.symbols('M, m, l, k1, k2, c1, g, h, w, d, r')
    q1, q2 = me.dynamicsymbols('q1 q2')
    u1, u2 = me.dynamicsymbols('u1 u2')
    N = me.ReferenceFrame('N')
    B = N.orientnew('B', 'axis', (q2, N.z))
    O = me.Point('O')
    block_point = O.locatenew('block', q1 * N.y)
    pendulum_point = block_point.locatenew('pendulum', l * B.y)
    O.set_vel(N, 0)
    block_point.set_vel(N, q1.diff(t) * N.y)
    pendulum_point.v2pt_theory(block_point, N, B)
    block = me.RigidBody('block', block_point, N, M,
                         (M / 12 * me.inertia(N, h**2 + d**2, w**2 + d**2, w**2 + h**2),
                          block_point))
    pendulum = me.RigidBody('pendulum', pendulum_point, B, m,
                            (2 * m * r**2 / 5 * me.inertia(B, 1, 0, 1), pendulum_point))
    path = me.LinearPathway(O, block_point)
    loads = me.DuffingSpring(k1, k2, path, 0).to_loads() + me.LinearDamper(c1, path).to_loads()
    bodies = [block, pendulum]
    loads += [me.Force(b, b.mass * g * N.y) for b in bodies]
    return DocModel(
        "duffing", DOC + "mechanics/duffing-example.rst", N, [q1, q2], [u1, u2],
        [u1 - q1.diff(t), u2 - q2.diff(t)], bodies, loads,
        constants={M: 2.0, m: 0.5, l: 0.6, k1: 40.0, k2: 10.0, c1: 0.5, g: 9.81, h: 0.2,
                   w: 0.3, d: 0.1, r: 0.05},
        initial_conditions={q1: 0.4, q2: 0.5}, times=(0.0, 2.0, 41),
        note="formed by Kane's call with u = q' (the page uses LagrangesMethod); the "
             "numbers are ours")


def atwood() -> DocModel:
    """Two particles on a rope over a pulley (a WrappingPathway over a cylinder)."""
    m1, m2, g, r, h, T = sm.symbols("m1 m2 g r h T", positive=True, real=True)
    q = me.dynamicsymbols("q", real=True)
    u = me.dynamicsymbols("u", real=True)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P1, P2 = me.Point("P1"), me.Point("P2")
    P1.set_pos(O, r * N.y - (h + q) * N.z)
    P2.set_pos(O, -r * N.y - (h - q) * N.z)
    T1, T2 = me.Point("T1"), me.Point("T2")       # where the rope leaves the pulley
    T1.set_pos(O, r * N.y)
    T1.set_vel(N, 0)
    T2.set_pos(O, -r * N.y)
    T2.set_vel(N, 0)
    rope = me.WrappingPathway(T1, T2, me.WrappingCylinder(r, O, N.x))
    loads = rope.to_loads(T) + [me.Force(P1, -m1 * g * N.z), me.Force(P2, -m2 * g * N.z)]
    return DocModel(
        "atwood", DOC + "mechanics/atwoods_machine_example.rst", N, [q], [u], [u - q.diff()],
        [me.Particle("M1", P1, m1), me.Particle("M2", P2, m2)], loads,
        constants={m1: 1.0, m2: 2.0, g: 9.81, h: 5.0, r: 0.5, T: 10.0},
        initial_conditions={q: 0.0, u: 0.0}, times=(0.0, 1.0, 21),
        note="the page's numbers; the tension T (it does no work) is ours")


class _Extensor(me.PathwayBase):
    """The page's extensor pathway: straight to the elbow's circle, an arc of
    radius r around the pin joint, straight to the insertion."""

    def __init__(self, origin, insertion, axis_point, axis, parent_axis, child_axis,
                 radius, coordinate):
        super().__init__(origin, insertion)
        self.origin, self.insertion, self.axis_point = origin, insertion, axis_point
        self.axis = axis.normalize()
        self.parent_axis, self.child_axis = parent_axis.normalize(), child_axis.normalize()
        self.radius, self.coordinate = radius, coordinate
        self.origin_distance = axis_point.pos_from(origin).magnitude()
        self.insertion_distance = axis_point.pos_from(insertion).magnitude()
        self.origin_angle = sm.asin(radius / self.origin_distance)
        self.insertion_angle = sm.asin(radius / self.insertion_distance)

    @property
    def length(self):
        arc = self.radius * (self.origin_angle + self.coordinate + self.insertion_angle)
        return (self.origin_distance * sm.cos(self.origin_angle) + arc
                + self.insertion_distance * sm.cos(self.insertion_angle))

    @property
    def extension_velocity(self):
        return self.radius * self.coordinate.diff(t)

    def to_loads(self, force_magnitude):
        on_parent = me.Point('Aw')
        on_child = me.Point('Bw')
        on_parent.set_pos(self.axis_point,
                          -self.radius * sm.cos(self.origin_angle)
                          * self.parent_axis.cross(self.axis)
                          + self.radius * sm.sin(self.origin_angle) * self.parent_axis)
        on_child.set_pos(self.axis_point,
                         self.radius * sm.cos(self.insertion_angle)
                         * self.child_axis.cross(self.axis)
                         + self.radius * sm.sin(self.insertion_angle) * self.child_axis)
        f_parent = force_magnitude * self.origin.pos_from(on_parent).normalize()
        f_child = force_magnitude * self.insertion.pos_from(on_child).normalize()
        return [me.Force(self.origin, f_parent),
                me.Force(self.axis_point, -(f_parent + f_child)),
                me.Force(self.insertion, f_child)]


def arm() -> DocModel:
    """The biomechanical arm: a lever (q1) pulled by a hand at the end of an upper and
    lower arm (q2..q4 dependent through the hand's closed loop), a biceps on a straight
    pathway and a triceps wrapping the elbow, both DeGroote 2016 musculotendons with
    first-order activation. The activations a are the equations' specified inputs."""
    q1, q2, q3, q4 = me.dynamicsymbols('q1, q2, q3, q4', real=True)
    u1, u2, u3, u4 = me.dynamicsymbols('u1, u2, u3, u4', real=True)
    dx, dy, dz = sm.symbols('dx, dy, dz', real=True, nonnegative=True)
    lA, lC, lD = sm.symbols('lA, lC, lD', real=True, positive=True)
    mA, mC, mD = sm.symbols('mA, mC, mD', real=True, positive=True)
    g, k, c, r = sm.symbols('g, k, c, r', real=True, positive=True)
    N, A, B, C, D = sm.symbols('N, A, B, C, D', cls=me.ReferenceFrame)
    O, P1, P2, P3, P4 = sm.symbols('O, P1, P2, P3, P4', cls=me.Point)
    Ao, Co, Cm, Dm, Do = sm.symbols('Ao, Co, Cm, Dm, Do', cls=me.Point)
    A.orient_axis(N, q1, N.z)
    B.orient_axis(N, q2, N.y)
    C.orient_axis(B, q3, B.z)
    D.orient_axis(C, q4, C.y)
    A.set_ang_vel(N, u1 * N.z)
    B.set_ang_vel(N, u2 * N.y)
    C.set_ang_vel(B, u3 * B.z)
    D.set_ang_vel(C, u4 * C.y)
    Ao.set_pos(O, dx * N.x)
    P1.set_pos(Ao, lA * A.y)
    P2.set_pos(O, dy * N.y + dz * N.z)
    Co.set_pos(P2, lC / 2 * C.z)
    Cm.set_pos(P2, lC / 3 * C.z)
    P3.set_pos(P2, lC * C.z)
    Dm.set_pos(P3, lD / 3 * D.z)
    Do.set_pos(P3, lD / 2 * D.z)
    P4.set_pos(P3, lD * D.z)
    O.set_vel(N, 0)
    Ao.set_vel(N, 0)
    P1.v2pt_theory(Ao, N, A)
    P2.set_vel(N, 0)
    for point, base, frame in ((Co, P2, C), (Cm, P2, C), (P3, P2, C), (Dm, P3, D),
                               (Do, P3, D), (P4, P3, D)):
        point.v2pt_theory(base, N, frame)
    holonomic = (P4.pos_from(O) - P1.pos_from(O)).to_matrix(N)
    lever = me.RigidBody('lever', masscenter=Ao, frame=A, mass=mA, inertia=me.Inertia(
        me.inertia(A, mA / 12 * lA**2, mA / 2 * lA**2, mA / 12 * lA**2), Ao))
    upper = me.RigidBody('upper arm', masscenter=Co, frame=C, mass=mC, inertia=me.Inertia(
        me.inertia(C, mC / 12 * lC**2, mC / 12 * lC**2, mC / 2 * lC**2), Co))
    lower = me.RigidBody('lower arm', masscenter=Do, frame=D, mass=mD, inertia=me.Inertia(
        me.inertia(D, mD / 12 * lD**2, mD / 12 * lD**2, mD / 2 * lD**2), Do))
    biceps = bm.MusculotendonDeGroote2016.with_defaults(
        'biceps', me.LinearPathway(Cm, Dm),
        bm.FirstOrderActivationDeGroote2016.with_defaults('biceps'))
    triceps = bm.MusculotendonDeGroote2016.with_defaults(
        'triceps', _Extensor(Cm, Dm, P3, B.y, -C.z, D.z, r, q4),
        bm.FirstOrderActivationDeGroote2016.with_defaults('triceps'))
    loads = biceps.to_loads() + triceps.to_loads() + [
        me.Torque(A, (-k * q1 - c * u1) * N.z), me.Force(upper, mC * g * N.z),
        me.Force(lower, mD * g * N.z)]
    constants = {dx: 0.31, dy: 0.15, dz: -0.31, lA: 0.2, lC: 0.3, lD: 0.3, mA: 1.0,
                 mC: 2.3, mD: 1.7, g: 9.81, k: 5.0, c: 0.5, r: 0.03,
                 biceps.F_M_max: 500.0, biceps.l_M_opt: 0.6 * 0.3,
                 biceps.l_T_slack: 0.55 * 0.3, triceps.F_M_max: 500.0,
                 triceps.l_M_opt: 0.6 * 0.3, triceps.l_T_slack: 0.65 * 0.3}
    return DocModel(
        "arm", DOC + "biomechanics/biomechanical-model-example.rst", N, [q1], [u1],
        [u1 - q1.diff(), u2 - q2.diff(), u3 - q3.diff(), u4 - q4.diff()],
        [lever, upper, lower], loads, q_dependent=[q2, q3, q4], u_dependent=[u2, u3, u4],
        configuration_constraints=list(holonomic),
        velocity_constraints=list(holonomic.diff(t)), constants=constants,
        specifieds={biceps.a: 0.3, triceps.a: 0.2},
        initial_conditions={q1: math.radians(5.0), q2: math.radians(-10.0), q3: 0.0,
                            q4: math.radians(75.0)}, times=(0.0, 1.0, 21),
        note="the page's numbers; the activations (specified inputs here, the page "
             "integrates their dynamics itself) are ours")
