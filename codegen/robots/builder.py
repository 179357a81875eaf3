"""A checked URDF tree (codegen.robots.urdf) as sympy.physics.mechanics objects.

Each moving link becomes one rigid body: its own inertial and those of the
links fixed to it, merged about their common mass centre. Its frame is
oriented from its parent body's frame by one rotation, the joint origin's
constant rotation times the turn about the joint's axis (measured against a
constant frame followed by ``orient_axis``: the iiwa's recursion takes 1,689
operations this way and 2,761 that way, since the transport between two
bodies is then one joint's rotation). Its origin is located from the parent
body's origin and given its velocity by ``v2pt_theory`` (the relative kinematics
start from the joints fixed in the world, and take a velocity free of the
coordinates as stored: the Atlas's recursion takes 90 operations more when the
origins' velocities are composed instead). Its mass centre is located from its
origin, its velocity not stored: SymPy derives it when asked (``Point.vel``), as
the relative kinematics compose it, where ``v2pt_theory``'s ω × c through the
rotations of every frame above took half of from_urdf's time (Atlas: 4 of 8 s).
Coordinates, speeds and joint torques follow Pinocchio's order (see RobotModel).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from ..description.model import Model
from .checks import check_inertial, check_moving_mass, has_mass, master
from .rotations import exact_rpy_matrix, rpy_matrix
from .urdf import MOVABLE, URDFError, parse_urdf

__all__ = ["RobotModel", "from_urdf"]

_t = me.dynamicsymbols._t
_BASE_Q = ("base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw")
_BASE_U = ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")


def _timed(name):
    """A function of time named exactly name (dynamicsymbols would parse ':' and ',')."""
    return sm.Function(name)(_t)


@dataclass
class RobotModel(Model):
    """A :class:`codegen.examples.Model` loaded from a URDF file.

    x = [q, u] in Pinocchio's order for ``pin.buildModelFromUrdf(path)`` (with
    ``pin.JointModelFreeFlyer()`` for a floating base, and ``mimic=True`` when the
    file has mimic joints), with one difference: a continuous joint's coordinate is
    its angle, where Pinocchio keeps (cos, sin). :meth:`to_pinocchio` and
    :meth:`from_pinocchio` map between the two. The inputs (``specifieds``) are the
    joint torques (forces for prismatic joints) in Pinocchio's v order, without the
    free-flyer's six: ``generate(GibbsAppellMethod(**model.kwargs), name)`` keeps that
    order, and the constants' (the model declares both, codegen.description.model).

    ``potential_energy`` stays zero: gravity's potential, large for a deep tree, is
    written only when :meth:`energy` is called.
    """
    #: the moving joints that own a coordinate, in order
    joint_names: list = field(default_factory=list)
    #: 'revolute', 'continuous' or 'prismatic' for each of joint_names
    joint_types: list = field(default_factory=list)
    floating_base: bool = False
    #: codegen.robots.urdf.Visual of every link, with the body it moves with:
    #: [(visual, body link, R, p)], R and p the link frame's rotation and origin in the
    #: body's frame (body link None: fixed in the world)
    geometry: list = field(default_factory=list)
    #: body link name -> (ReferenceFrame, origin Point); the root's is the world's for a
    #: fixed base
    links: dict = field(default_factory=dict)
    #: [(point, force)]: the weights, and the world's origin they are measured from
    weights: list = field(default_factory=list, repr=False)
    origin: me.Point = None

    def energy(self):
        """Kinetic energy plus gravity's potential, in q, u (dynamicsymbols)."""
        with warnings.catch_warnings():
            # SymPy derives the mass centres' velocities (Point.vel) and warns that a
            # point's could come from several: they are all the positions' derivatives
            warnings.filterwarnings("ignore", r"\s*Velocity of \S+ automatically calculated",
                                    UserWarning)
            kinetic = super().energy()
        return kinetic - sum((f.dot(P.pos_from(self.origin)) for P, f in self.weights),
                             sm.S.Zero)

    def to_pinocchio(self, x):
        """(q, v) of Pinocchio's model for this model's state x."""
        x = np.asarray(x, dtype=float)
        nq = len(self.q_ind)
        q, v = x[:nq], x[nq:]
        base = 7 if self.floating_base else 0
        parts = [q[:base]]
        for k, kind in enumerate(self.joint_types):
            a = q[base + k]
            parts.append([math.cos(a), math.sin(a)] if kind == "continuous" else [a])
        return np.concatenate([np.asarray(p, dtype=float) for p in parts]), v.copy()

    def from_pinocchio(self, q, v):
        """This model's state x for Pinocchio's (q, v)."""
        q = np.asarray(q, dtype=float)
        base = 7 if self.floating_base else 0
        nq = base + sum(2 if kind == "continuous" else 1 for kind in self.joint_types)
        if q.shape != (nq,):
            raise ValueError(f"q has shape {q.shape}; Pinocchio's model of {self.name} has "
                             f"{nq} entries")
        out, i = list(q[:base]), base
        for kind in self.joint_types:
            out.append(math.atan2(q[i + 1], q[i]) if kind == "continuous" else q[i])
            i += 2 if kind == "continuous" else 1
        return np.concatenate([out, np.asarray(v, dtype=float)])


class _Numbers:
    """The file's numbers as the model's constants: Floats (0 and ±1 exact), or, with
    symbolic=True, a named constant for each nonzero value (zeros stay zero); with
    exact=True, Rationals and exactly orthogonal rotations (exact_rpy_matrix)."""

    def __init__(self, symbolic, exact=False):
        self.symbolic, self.exact, self.constants, self.values = symbolic, exact, [], {}

    def rotation(self, rpy):
        """rpy's rotation: a float array, or (exact) a Matrix of Rationals."""
        return exact_rpy_matrix(rpy) if self.exact else np.array(rpy_matrix(rpy))

    def eye(self):
        return sm.eye(3) if self.exact else np.eye(3)

    def __call__(self, value, name):
        if value == 0:
            return sm.S.Zero
        if self.exact and not self.symbolic:
            return sm.Rational(repr(float(value)))
        if not self.symbolic:
            return _exact(value)
        s = sm.Symbol(name, real=True)
        if name not in self.values:
            self.constants.append(s)
            self.values[name] = float(value)
        return s


def _exact(value):
    if isinstance(value, sm.Rational):          # an exact model's numbers stay exact
        return value
    if value in (0.0, 1.0, -1.0):
        return sm.Integer(int(value))
    return sm.Float(value)


def _matrix(R) -> sm.Matrix:
    if isinstance(R, sm.MatrixBase):
        return R
    return sm.Matrix(3, 3, [_exact(e) for row in R for e in row])


def _places(desc, num):
    """(place, origins): place[link] = (body link, R, p), the moving link the link is fixed
    to, with the link frame's rotation (floats) and origin in the body's frame; origins
    [joint] = (R, p), a moving joint's origin frame likewise in its parent body's frame."""
    eye = num.eye()
    place, origins = {desc.root: (desc.root, eye, sm.zeros(3, 1))}, {}
    for j in desc.joints:
        body, R, p = place[j.parent]
        xyz = sm.Matrix([num(v, f"{c}_{j.name}") for v, c in zip(j.xyz, ("ox", "oy", "oz"))])
        Rj, pj = R @ num.rotation(j.rpy), p + _matrix(R.tolist()) * xyz
        if j.type == "fixed":
            place[j.child] = (body, Rj, pj)
        else:
            place[j.child] = (j.child, eye, sm.zeros(3, 1))
            origins[j.name] = (Rj, pj)
    return place, origins


def _merged(num, desc, links, place):
    """(mass, mass centre, central inertia) of a body's links in the body's frame, or
    None if they have no mass and no inertia."""
    parts = []
    for link in links:
        i = desc.links[link].inertial
        if i is None or i.is_zero():
            continue
        _, R, p = place[link]
        m = num(i.mass, f"m_{link}")
        c = sm.Matrix([num(v, f"{n}_{link}") for v, n in zip(i.xyz, ("cx", "cy", "cz"))])
        e = dict(zip(("xx", "yy", "zz", "xy", "yz", "xz"),
                     (num(v, f"I{n}_{link}") for v, n in
                      zip(i.inertia, ("xx", "yy", "zz", "xy", "yz", "xz")))))
        I = sm.Matrix([[e["xx"], e["xy"], e["xz"]], [e["xy"], e["yy"], e["yz"]],
                       [e["xz"], e["yz"], e["zz"]]])
        Ri = _matrix((R @ num.rotation(i.rpy)).tolist())
        parts.append((m, p + _matrix(R.tolist()) * c, Ri * I * Ri.T))
    if len(parts) <= 1:
        return parts[0] if parts else None
    mass = sm.Add(*[m for m, _, _ in parts])
    centre = sum((m * c for m, c, _ in parts), sm.zeros(3, 1)) / mass
    inertia = sm.zeros(3, 3)
    for m, c, I in parts:                   # parallel axes to the common mass centre
        d = c - centre
        inertia += I + m * ((d.T * d)[0] * sm.eye(3) - d * d.T)
    if not num.symbolic and not num.exact:  # rounding's leftovers of exact zeros
        scale = max(abs(float(e)) for e in inertia) or 1.0
        inertia = inertia.applyfunc(lambda e: sm.S.Zero if abs(float(e)) < 1e-14 * scale else e)
        centre = centre.applyfunc(lambda e: sm.S.Zero if abs(float(e)) < 1e-15 else e)
    return mass, centre, inertia


def _vector(frame, comps):
    return sum((c * e for c, e in zip(comps, (frame.x, frame.y, frame.z)) if c != 0),
               me.Vector(0))


def from_urdf(path, floating_base=False, symbolic=False, damping=False, gravity=9.81,
              mimic=True, check_inertia=True, exact=False) -> RobotModel:
    """The robot of a URDF file as a :class:`RobotModel` (a codegen.examples.Model).

    Parameters
    ==========
    path : str or os.PathLike
        A URDF file (xacro files are refused: expand them first).
    floating_base : bool
        Add a free-flyer: the root link's position and unit quaternion
        (base_x, base_y, base_z, base_qx, base_qy, base_qz, base_qw), with the
        root's linear and angular velocity in its own frame as speeds.
    symbolic : bool
        False: the file's numbers are inlined as Floats. True: each nonzero
        number is a constant (``m_<link>``, ``cx_<link>``, ``Ixx_<link>``,
        ``ox_<joint>``, ``damping_<joint>``, ``g``), its value in
        ``parameter_values``; the rotations stay numbers, and zeros stay zero.
    damping : bool
        Each joint's ``<dynamics damping>`` as a viscous torque (Pinocchio's
        ABA leaves it out).
    gravity : float
        Along -z of the world frame.
    mimic : bool
        True: a mimic joint follows its joint (q = multiplier q_joint + offset),
        eliminated, with no coordinate or torque of its own (Pinocchio's
        ``mimic=True``). False: it moves on its own (Pinocchio's default).
    check_inertia : bool
        Refuse a moving link's inertia that is not positive semidefinite or
        violates the triangle inequality, or a zero mass with an inertia.
        False loads them as written, as Pinocchio does.
    exact : bool
        The file's numbers as the exact decimals they are written as (Rationals), and
        each origin's rotation exactly orthogonal (codegen.robots.rotations.exact_rpy_matrix:
        turns within 1e-7 rad of quarter turns are quarter turns): for exact
        arithmetic on the model, as the identification's base parameters need.
    """
    desc = parse_urdf(path, mimic)
    num = _Numbers(symbolic, exact)
    place, origins = _places(desc, num)
    members = {}
    for link in desc.subtree(desc.root):
        members.setdefault(place[link][0], []).append(link)
    for link, (body, _, _) in place.items():
        if floating_base or body != desc.root:
            check_inertial(desc, link, check_inertia)
    moving = [j for j in desc.joints if j.type in MOVABLE]
    speeds = [j for j in moving if j.mimic is None]
    if floating_base:
        if not any(has_mass(desc, k) for k in place):
            raise URDFError(f"{desc.path}: no link has mass")
    elif not speeds:
        raise URDFError(f"{desc.path}: no joint moves (revolute, continuous or prismatic) "
                        f"below the root link {desc.root!r}; from_urdf(..., "
                        f"floating_base=True) makes it a free body")
    check_moving_mass(desc, speeds)

    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    q, u, kd = [], [], []
    if floating_base:
        root_frame, root_point = _free_flyer(desc.root, N, O, q, u, kd)
    else:
        root_frame, root_point = N, O
    frames = {desc.root: (root_frame, root_point)}
    coordinate = {}
    for j in speeds:
        qj, uj = _timed(f"q_{j.name}"), _timed(f"u_{j.name}")
        q.append(qj)
        u.append(uj)
        kd.append(uj - qj.diff(_t))
        coordinate[j.name] = (qj, uj)
    inputs = [_timed(f"tau_{j.name}") for j in speeds]
    loads = []
    for j in moving:
        if j.mimic is None:
            angle, rate = coordinate[j.name]
            tau = inputs[speeds.index(j)]
        else:
            lead, mult, off = master(desc, j)
            qm, um = coordinate[lead]
            angle, rate, tau = _exact(mult) * qm + num(off, f"offset_{j.name}"), _exact(mult) * um, 0
        X, OX = frames[place[j.parent][0]]
        R, p = origins[j.name]
        frame, point, reaction = _joint(j, X, OX, N, R, p, angle)
        frames[j.child] = (frame, point)
        torque = tau
        if damping and j.damping:
            torque = torque - num(j.damping, f"damping_{j.name}") * rate
        if torque != 0:
            a = _vector(frame, [_exact(c) for c in j.axis])
            own, other = (frame, X) if j.type != "prismatic" else (point, reaction)
            loads.append((own, torque * a))
            if X is not N:
                loads.append((other, -torque * a))
    g = num(gravity, "g")
    bodies, weights = [], []
    for body, links in members.items():
        if body == desc.root and not floating_base:
            continue
        inertial = _merged(num, desc, links, place)
        if inertial is None:
            continue
        m, c, I = inertial
        frame, point = frames[body]
        C = point.locatenew(f"{body}_com", _vector(frame, c))
        inertia = me.inertia(frame, I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[1, 2], I[0, 2])
        bodies.append(me.RigidBody(body, C, frame, m, (inertia, C)))
        if g != 0:
            weights.append((C, -m * g * N.z))
    loads += weights
    numeric = _places(desc, _Numbers(False))[0]
    geometry = [(v, None if (b == desc.root and not floating_base) else b,
                 R.tolist(), [float(e) for e in p])
                for link, (b, R, p) in numeric.items() for v in desc.links[link].visuals]
    x0 = [0.0] * len(q) + [0.0] * len(u)
    if floating_base:
        x0[6] = 1.0
    return RobotModel(
        name=desc.name, frame=N, q_ind=q, u_ind=u, kd_eqs=kd, bodies=bodies, loads=loads,
        constants=num.constants, specifieds=inputs,
        doc=f"{desc.name} from {desc.path}", parameter_values=dict(num.values),
        initial_state=x0, conservative=not (damping and any(j.damping for j in moving)),
        joint_names=[j.name for j in speeds], joint_types=[j.type for j in speeds],
        floating_base=floating_base, geometry=geometry,
        links={k: v for k, v in frames.items() if k in members}, weights=weights, origin=O)


def _free_flyer(name, N, O, q, u, kd):
    """The root link's frame and origin moved by a free-flyer: position in N, unit
    quaternion (x, y, z, w), velocity and angular velocity in the root's frame."""
    x, y, z, qx, qy, qz, qw = (_timed(n) for n in _BASE_Q)
    vx, vy, vz, wx, wy, wz = (_timed(n) for n in _BASE_U)
    B = me.ReferenceFrame(name)
    # the rotation of the normalised quaternion: orthogonal at every q, so that
    # composing velocities through it holds off the unit sphere too
    n2 = qw ** 2 + qx ** 2 + qy ** 2 + qz ** 2
    _orient(B, N, sm.Matrix([
        [qw ** 2 + qx ** 2 - qy ** 2 - qz ** 2, 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy)],
        [2 * (qx * qy + qw * qz), qw ** 2 - qx ** 2 + qy ** 2 - qz ** 2, 2 * (qy * qz - qw * qx)],
        [2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), qw ** 2 - qx ** 2 - qy ** 2 + qz ** 2]]) / n2,
        wx * B.x + wy * B.y + wz * B.z)
    P = O.locatenew(name, x * N.x + y * N.y + z * N.z)
    v = vx * B.x + vy * B.y + vz * B.z
    P.set_vel(N, v)
    half = sm.Rational(1, 2)
    kd += [x.diff(_t) - v.dot(N.x), y.diff(_t) - v.dot(N.y), z.diff(_t) - v.dot(N.z),
           qx.diff(_t) - half * (qw * wx + qy * wz - qz * wy),
           qy.diff(_t) - half * (qw * wy + qz * wx - qx * wz),
           qz.diff(_t) - half * (qw * wz + qx * wy - qy * wx),
           qw.diff(_t) + half * (qx * wx + qy * wy + qz * wz)]
    q += [x, y, z, qx, qy, qz, qw]
    u += [vx, vy, vz, wx, wy, wz]
    return B, P


def _joint(j, X, OX, N, R, p, angle):
    """(frame, origin, reaction point) of joint j's child link. A revolute joint's frame
    is oriented from the parent's X by one rotation, the origin's constant R times the
    turn about the axis (one composed orientation per joint: the formulation's
    transport between two bodies is then this rotation itself, and its zeros stay
    zeros); a prismatic joint's by R alone, its origin moved along the axis."""
    a = [_exact(c) for c in j.axis]
    F = me.ReferenceFrame(j.child)
    if j.type == "prismatic":
        F.orient_explicit(X, _matrix(R))
        J = OX.locatenew(f"{j.child}_joint", _vector(X, p))
        J.v2pt_theory(OX, N, X)
        P = J.locatenew(j.child, angle * _vector(F, a))
        P.set_vel(F, angle.diff(_t) * _vector(F, a))
        P.v1pt_theory(J, N, F)
        return F, P, J
    _orient(F, X, _matrix(R) * _turn(a, angle), angle.diff(_t) * _vector(F, a))
    P = OX.locatenew(j.child, _vector(X, p))
    P.v2pt_theory(OX, N, X)
    return F, P, None


def _orient(F, X, R, omega):
    """F oriented from X by R (components in X = R components in F), its angular
    velocity in X set to omega. orient_explicit would also derive the angular velocity
    from R by trigsimp, slow on long expressions and overwritten here: SymPy's hook
    for that is given omega instead (if SymPy renames it, only the time changes)."""
    F._w_diff_dcm = lambda parent: omega
    try:
        F.orient_explicit(X, R)
    finally:
        del F._w_diff_dcm
    F.set_ang_vel(X, omega)


def _turn(a, angle) -> sm.Matrix:
    """Rodrigues' rotation by angle about the unit axis a: components before the turn =
    this times components after."""
    c, s = sm.cos(angle), sm.sin(angle)
    A = sm.Matrix(a)
    cross = sm.Matrix([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return c * sm.eye(3) + (1 - c) * A * A.T + s * cross
