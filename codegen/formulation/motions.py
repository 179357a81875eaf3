"""Motions: each body's velocity, angular velocity, partials and rate, on plain symbols.

A :class:`Motion` is a vector quantity of a body in components of one frame:
its value, its partial velocities (one per speed) and its rate at u' = 0.
:class:`Motions` forms them from SymPy's stored vectors, each once, the way
KanesMethod reads them (codegen.formulation.chain_rule builds S, M and F on them);
codegen.formulation.relative's RelativeMotions composes them instead down the frame and
point trees as intermediates, with the same interface.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sm
from sympy.physics.mechanics import RigidBody
from sympy.physics.vector import Point, ReferenceFrame, Vector, dynamicsymbols

from .kinematics import Kinematics
from ..symbolic.expressions import generic_values
from ..symbolic.vec3 import add, cross, dot, matvec

__all__ = ["Motion", "Motions", "components", "dyadic_components", "frames_of", "simplest_frame", "is_rigid",
           "body_frame"]


def components(vec: Vector, X: ReferenceFrame) -> list:
    """vec in components of X: each frame's part rotated by the cached DCM.

    Vector.to_matrix does a dot product per unit vector and costs ten times
    more on the many-frame velocities of a chain.
    """
    parts = [[], [], []]
    for comps, frame in vec.args:
        if frame == X:
            rows = list(comps)
        else:
            C = X.dcm(frame)
            rows = [dot(C.row(i), comps) for i in range(3)]
        for i in range(3):
            parts[i].append(rows[i])
    return [sm.Add(*p) for p in parts]


def dyadic_components(dyadic, X: ReferenceFrame) -> list:
    """A dyadic's 3 x 3 matrix in components of X, as rows: each term c a b turned by
    the cached DCMs (components). Dyadic.to_matrix takes nine double dot products, a
    tenth of a second for a body's inertia of Floats."""
    out = [[sm.S.Zero] * 3 for _ in range(3)]
    for coef, a, b in dyadic.args:
        ca, cb = components(a, X), components(b, X)
        for i in range(3):
            if ca[i] != 0:
                for j in range(3):
                    if cb[j] != 0:
                        out[i][j] += coef * ca[i] * cb[j]
    return out


def frames_of(vec) -> list:
    """The frames a Vector or Dyadic is written in, in order of appearance."""
    if isinstance(vec, Vector):
        frames = [f for _, f in vec.args]
    else:   # Dyadic: args are (coefficient, unit vector, unit vector)
        frames = [f for _, v1, v2 in vec.args for f in (v1.args[0][1], v2.args[0][1])]
    return list(dict.fromkeys(frames))


def is_rigid(body) -> bool:
    """A RigidBody, or a deprecated ``Body`` that was given an inertia.

    ``sympy.physics.mechanics.Body`` subclasses both RigidBody and Particle;
    its ``is_rigidbody`` says which it is.
    """
    flag = getattr(body, "is_rigidbody", None)
    return bool(flag) if flag is not None else isinstance(body, RigidBody)


def body_frame(body, N):
    """The frame a body's vectors are taken in by Motions (codegen.formulation.chain_rule).

    A rigid body's: the frame of its inertia dyadic if it has one, else its
    own. A particle's: of the frames its velocity is written in, and N, the
    one the others rotate into most simply (an adjacent link's frame rather
    than N for a joint's child, N when every link is oriented from N), so
    that the products of partial velocities stay short."""
    if is_rigid(body):
        frames = frames_of(body.inertia[0])
        return frames[0] if len(frames) == 1 else body.frame
    return simplest_frame([body.masscenter.vel(N)], N)


@dataclass
class Motion:
    """A vector quantity of a body in components of one frame, plain symbols."""
    value: list          # 3 components, in q, u, t (auxiliary speeds zero)
    partials: list       # per speed of Kinematics.speeds: 3 components (d value / d u_j)
    rate0: list          # d/dt of the vector in N at u' = 0, in the same frame
    frame: ReferenceFrame


class Motions:
    """Velocities, angular velocities and their partials, each computed once."""

    def __init__(self, kin: Kinematics, N: ReferenceFrame):
        self.kin, self.N = kin, N
        self._frame_rate = {}    # frame X -> omega of X in N, components in X
        self._motions = {}       # (point or frame, X) -> Motion
        self._aux0 = dict.fromkeys(kin.uas, 0)
        self.items = []          # intermediates the motions are written over (none here)

    def point(self, P: Point, X: ReferenceFrame | None = None) -> Motion:
        """Velocity of P in N, in components of X.

        Without X, the frame of an earlier call for P (a load on a body's
        point reuses the body's components), else the Newtonian frame.
        """
        X = X or self._known_frame(P) or self.N
        key = (P, X)
        if key not in self._motions:
            self._motions[key] = self.motion(P.vel(self.N), X, f"the velocity of {P}",
                                             P._acc_dict.get(self.N))
        return self._motions[key]

    def name(self, label: str, expr):
        """expr as the formulation writes a shared sum (codegen.formulation.shared_sums): inline here,
        a named intermediate in the relative kinematics."""
        return expr

    def body_frame(self, body) -> ReferenceFrame:
        """The frame the formulation takes a body's vectors in (body_frame)."""
        return body_frame(body, self.N)

    def particle_frame(self, P: Point) -> ReferenceFrame:
        """The frame the tree of bodies (codegen.formulation.tree) takes a particle's motion in."""
        return self.N

    def _known_frame(self, obj):
        return next((x for (o, x) in self._motions if o is obj), None)

    def frame(self, R: ReferenceFrame, X: ReferenceFrame | None = None) -> Motion:
        """Angular velocity of R in N, in components of X."""
        X = X or self._known_frame(R) or R
        key = (R, X)
        if key not in self._motions:
            self._motions[key] = self.motion(R.ang_vel_in(self.N), X,
                                             f"the angular velocity of {R}",
                                             R._ang_acc_dict.get(self.N))
        return self._motions[key]

    def motion(self, vec: Vector, X: ReferenceFrame, what: str, stored=None) -> Motion:
        """vec (a velocity or angular velocity in N) in components of X, its partials
        and its rate at u' = 0, read as KanesMethod reads them: the rate is the stored
        acceleration where the user set one (stored), else SymPy's ``vec.dt(N)``."""
        kin = self.kin
        value = [kin.to_plain(c, what, inputs=False) for c in components(vec, X)]
        partials = [list(col) for col in zip(*[kin.jacobian_u(c) for c in value])]
        if self._aux0:
            value = [c.xreplace(self._aux0) for c in value]
        rate0 = self.rate(vec, X, what) if stored is None else \
            self.stored_rate(stored, X, what)
        return Motion(value, partials, rate0, X)

    def rate(self, vec: Vector, X: ReferenceFrame, what: str) -> list:
        """SymPy's vec.dt(N) at u' = 0, in components of X: each frame's part
        differentiated in that frame, plus the frame's *stored* angular velocity
        crossed with it (sympy.physics.vector's time_derivative). The angular
        velocity set with set_ang_vel is the model even where it is not the rate of
        the frame's orientation, so the rotation matrices are never differentiated."""
        kin, out = self.kin, [sm.S.Zero] * 3
        for comps, F in vec.args:
            c = [kin.to_plain(e, what, inputs=False) for e in comps]
            if self._aux0:
                c = [e.xreplace(self._aux0) for e in c]
            d = [kin.dt(e) for e in c]
            if F != self.N:
                d = add(d, cross(self.omega_of(F), c))
            out = add(out, d if F == X else matvec(self.rotation(X, F).tolist(), d))
        return out

    def stored_rate(self, acc: Vector, X: ReferenceFrame, what: str) -> list:
        """A stored acceleration (set_acc, a2pt_theory, set_ang_acc) at u' = 0 in
        components of X. KanesMethod uses it so: its u' terms are dropped, and the
        mass matrix comes from the partial velocities, as here."""
        kin, t = self.kin, dynamicsymbols._t
        zero = {u.diff(t): sm.S.Zero for u in list(kin.u) + list(kin.u_aux)}
        comps = [sm.sympify(c).xreplace(zero) for c in components(acc, X)]
        second = {d for c in comps for d in c.atoms(sm.Derivative) if d.derivative_count == 2}
        if second:        # q'' at u' = 0, as KanesMethod's q_ddot_u_map
            rates = {qk.diff(t, 2): kin.to_time(kin.dt(e)) for qk, e in zip(kin.q, kin.qdot)}
            comps = [c.xreplace(rates) for c in comps]
        comps = [kin.to_plain(c, what) for c in comps]
        return [e.xreplace(self._aux0) for e in comps] if self._aux0 else comps

    def velocity_value(self, obj, X: ReferenceFrame) -> list:
        """The velocity of a point (angular velocity of a frame) in N, in components
        of X, without partials or rates: for checks."""
        vec = obj.vel(self.N) if isinstance(obj, Point) else obj.ang_vel_in(self.N)
        return [self.kin.to_plain(c, f"the velocity of {obj}", inputs=False).xreplace(self._aux0)
                for c in components(vec, X)]

    def components(self, vec: Vector, X: ReferenceFrame) -> list:
        return [self.kin.to_plain(c, "a vector") for c in components(vec, X)]

    def without_auxiliary(self, exprs) -> list:
        """exprs with the auxiliary speeds zero (they enter only the partials)."""
        return [e.xreplace(self._aux0) for e in exprs] if self._aux0 else list(exprs)

    def rotation(self, X: ReferenceFrame, Y: ReferenceFrame) -> sm.Matrix:
        """The matrix taking components in Y to components in X."""
        return sm.Matrix(3, 3, [self.kin.to_plain(c, f"the orientation of {X}")
                                for c in X.dcm(Y)])

    def numeric(self, exprs, point: int) -> list:
        """exprs at generic point 0 or 1 (there are no intermediates to evaluate first)."""
        return generic_values(exprs, point)

    def load_frame(self, where, vec) -> ReferenceFrame:
        """The frame a load's motion and vector are taken in: the body's, for a load on
        a body's point or frame, else the one the load's frames rotate into most simply."""
        known = self._known_frame(where)
        if known is not None:
            return known
        motion = where.vel(self.N) if isinstance(where, Point) else where.ang_vel_in(self.N)
        return simplest_frame([motion, vec], self.N)

    def omega_of(self, X: ReferenceFrame) -> list:
        if X not in self._frame_rate:
            w = X.ang_vel_in(self.N)
            self._frame_rate[X] = [self.kin.to_plain(c, f"the angular velocity of {X}",
                                                     inputs=False).xreplace(self._aux0)
                                   for c in components(w, X)]
        return self._frame_rate[X]


def _rotations(X: ReferenceFrame, F: ReferenceFrame) -> int:
    """How many orientations a DCM from F to X multiplies (the path in the frame tree)."""
    try:
        return len(X._dict_list(F, 0)) - 1
    except (AttributeError, ValueError):       # no path (yet), or another SymPy
        return 10**6


def simplest_frame(vectors, N):
    """Of the frames the vectors are written in, and N, the one the others
    rotate into with the fewest orientations."""
    frames = list(dict.fromkeys(f for v in vectors for f in frames_of(v)))
    if len(frames) == 1:
        return frames[0]
    candidates = frames + ([N] if N not in frames else [])
    return min(candidates, key=lambda X: sum(_rotations(X, F) for F in frames if F != X))
