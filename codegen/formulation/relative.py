"""Kinematics by relative motion: each point's and frame's from its parent's, as named intermediates.

SymPy writes velocities out in q: the velocity of the k-th point of a chain
(``v2pt_theory`` down the chain) is the sum of every link before it, and in
a spatial chain it carries the product of every rotation on the way to the
root. Recursive numeric algorithms, and symbolic generators that scale
(SD/FAST, RobCoGen), compose one joint at a time instead. Here each
quantity is an intermediate, defined once from its parent's (all in the
frame's own components):

    C_F   = R C_P                    (R = F.dcm(P): one joint's rotation; C_N = I)
    w_F   = R w_P + w_rel            (w_rel: F.ang_vel_in(P), short)
    dw_F/du_j = R dw_P/du_j + dw_rel/du_j
    a_F   = R a_P + (R w_P) x w_rel + (w_rel)'          (at u' = 0)

and for a point P located from O by r = sum of parts c_G in frames G,
with its velocity in the components of frame X,

    v_P   = T(X, X_O) v_O + sum_G T(X, G) (c_G' + w_G x c_G)
    a_P   = T(X, X_O) a_O + sum_G T(X, G) (c_G'' + 2 w_G x c_G' + a_G x c_G + w_G x (w_G x c_G))

with T(X, Y) the rotation from Y's components to X's (one joint's DCM for
neighbours, else C_X C_Yᵀ). Every quantity is then O(1) operations over
its parent's, and the formulation (M, F, or the articulated-body
recursion's inputs) is built on the intermediates. A partial velocity that
a point shares with its parent (the speeds of the links before it) stays the
parent's symbol when X is the parent's frame: a chain of points in absolute
angles composed in N adds O(1) intermediates per link.

The frame tree is the graph of orientations (``orient``) searched from the
Newtonian frame; the point tree is the graph of positions (``set_pos``)
searched from the points whose velocity in N is zero (codegen.formulation.points, the
points' half). The frame X of each point's velocity is chosen over the whole
point tree at once (codegen.formulation.frame_tree). Each frame's angular velocity and each
point's velocity is checked, at two generic numeric points, against SymPy's own
(``ang_vel_in``, ``vel``): a model whose stored velocities are not the
derivatives of its positions (a rolling contact set with ``set_vel``)
raises :class:`NotRelative`, and the formulation keeps SymPy's expanded
velocities.
"""
from __future__ import annotations

import sympy as sm
from sympy.physics.vector import Point, ReferenceFrame

from ..equations.intermediates import define
from .frame_tree import Probe, frame_tree
from .motions import Motion, Motions, body_frame, is_rigid
from .points import INLINE_OPERATIONS, INLINE_RATE, NotRelative, PointComposition
from ..symbolic.counting import operation_count
from ..symbolic.expressions import VANISH_TOL, vanishes
from ..symbolic.vec3 import ZERO3, add, cross, matmul, matvec, nonzero, transpose

__all__ = ["RelativeMotions", "NotRelative"]

#: T(X, Y) of frames this many joints apart, one the other's ancestor, composed along
#: the path between them (codegen.formulation.relative's _near), not through N
NEAR_STEPS = 3


class RelativeMotions(PointComposition, Motions):
    """Motions (codegen.formulation.motions) composed down the frame and point trees.

    ``items``: the intermediates (codegen.formulation.constraints.Intermediate) in
    definition order; every Motion's entries are expressions over them.
    bodies: the model's bodies; a rigid body's mass centre is preferably
    composed in the body's frame (codegen.formulation.frame_tree)."""

    def __init__(self, kin, N, bodies=()):
        super().__init__(kin, N)
        if kin.uas:
            raise NotRelative("auxiliary speeds")
        self._parent = frame_tree(N)
        self._frame_index, self._rot_N, self._omega = {N: 0}, {N: None}, {}
        self._rot_pair = {}
        self._point_parent = {}      # point -> parent in the position tree (None: at rest)
        self._point_frame = {}       # point -> the frame its velocity is composed in
        self._point_index, self._vel = {}, {}
        self._own = {}               # point -> its stored velocity (comps, frame)
        self._wanted = {}
        for b in bodies:
            if is_rigid(b):
                X = body_frame(b, N)
                self._wanted.setdefault(b.masscenter, X)
                self._wanted.setdefault(b.inertia[1], X)
        self._probe = [Probe(kin, seed) for seed in (1, 2)]

    # -- intermediates ------------------------------------------------------------
    def _vec(self, name, values, inline=None):
        """A composed vector: each entry an intermediate unless it costs at most inline
        operations (INLINE_OPERATIONS: a link's l sin(q)). Short entries stay inline so
        that their products expand, cancel and lose their sin**2 + cos**2 pairs, as
        SymPy's own velocities' would; an entry built on an inline one is longer, and
        named. Rates are kept inline a little longer (INLINE_RATE: a link's own
        -l u² cos(q), whose product with its partial velocity cancels)."""
        limit = INLINE_OPERATIONS if inline is None else inline
        return [v if operation_count([v]) <= limit else
                define(self.items, f"{name}_{i}", v) for i, v in enumerate(values)]

    def name(self, label, expr):
        """A shared sum of the formulation (codegen.formulation.shared_sums) as an intermediate; labels
        repeat between sums, so each gets a number of its own."""
        self._sums = getattr(self, "_sums", 0) + 1
        return define(self.items, f"{label}_{self._sums}", expr)

    def plain(self, expr, what, inputs=False):
        """expr on plain symbols; anything SymPy's velocities might still allow (a
        specified position) leaves the model to the expanded formulation."""
        try:
            return self.kin.to_plain(expr, what, inputs=inputs)
        except ValueError as exc:
            raise NotRelative(str(exc)) from None

    # -- frames -------------------------------------------------------------------
    def _index(self, F):
        if F not in self._parent:
            raise NotRelative(f"{F} is not oriented, directly or through other frames, "
                              f"from {self.N}")
        return self._frame_index.setdefault(F, len(self._frame_index))

    def _dcm(self, F, P):
        """F.dcm(P) of neighbours, plain: components in F = R components in P."""
        return [[self.plain(c, f"the orientation of {F}") for c in row]
                for row in F._dcm_dict[P].tolist()]

    def _path(self, F, done):
        """F and its ancestors in the frame tree not in done, root-most first."""
        path = []
        while F not in done:
            self._index(F)
            path.append(F)
            F = self._parent[F]
        return path[::-1]

    def rot_from_N(self, F):
        """C_F: components in F = C_F components in N (None for N itself)."""
        for G in self._path(F, self._rot_N):
            k, P = self._index(G), self._parent[G]
            R = self._dcm(G, P)
            C = R if P == self.N else matmul(R, self._rot_N[P])
            self._rot_N[G] = [[define(self.items, f"C{k}_{i}{j}", C[i][j])
                               for j in range(3)] for i in range(3)]
        return self._rot_N[F]

    def rot(self, X, Y):
        """T(X, Y): components in X = T components in Y (None when X is Y)."""
        if X == Y:
            return None
        if Y in X._dcm_dict and (self._parent.get(X) == Y or self._parent.get(Y) == X):
            key = (X, Y)
            if key not in self._rot_pair:
                self._index(X), self._index(Y)
                self._rot_pair[key] = (self._dcm(X, Y) if self._parent[X] == Y
                                       else transpose(self._dcm(Y, X)))
            return self._rot_pair[key]
        near = self._near(X, Y)
        if near is not None:
            return near
        CX = self.rot_from_N(X) if X != self.N else None
        CY = self.rot_from_N(Y) if Y != self.N else None
        if CY is None:
            return CX
        if CX is None:
            return transpose(CY)
        key = (X, Y)
        if key not in self._rot_pair:
            a, b = self._index(X), self._index(Y)
            T = matmul(CX, transpose(CY))
            self._rot_pair[key] = [[define(self.items, f"T{a}_{b}_{i}{j}", T[i][j])
                                    for j in range(3)] for i in range(3)]
        return self._rot_pair[key]

    def _near(self, X, Y):
        """T(X, Y) as the product of the joints' rotations between them when one is
        the other's ancestor within NEAR_STEPS (a URDF link and its parent link, with
        the joint frame between them): a constant rotation times one joint's, where
        C_X C_Yᵀ would be a dense product of two rotations from N; else None."""
        for A, B, flip in ((X, Y, False), (Y, X, True)):
            path, F = [A], A
            while len(path) <= NEAR_STEPS and F != B and self._parent.get(F) is not None:
                F = self._parent[F]
                path.append(F)
            if F != B or B == self.N:
                continue
            key = (X, Y)
            if key not in self._rot_pair:
                T = self._dcm(path[0], path[1])
                for F, P in zip(path[1:], path[2:]):
                    T = matmul(T, self._dcm(F, P))
                if flip:
                    T = transpose(T)
                a, b = self._index(X), self._index(Y)
                self._rot_pair[key] = [[define(self.items, f"T{a}_{b}_{i}{j}", T[i][j])
                                        for j in range(3)] for i in range(3)]
            return self._rot_pair[key]
        return None

    def turn(self, X, Y, v):
        if v is ZERO3:
            return v
        T = self.rot(X, Y)
        return list(v) if T is None else matvec(T, v)

    def rotation(self, X, Y) -> sm.Matrix:
        T = self.rot(X, Y)
        return sm.eye(3) if T is None else sm.Matrix(T)

    def components(self, vec, X):
        """vec in components of X, each frame's part turned by T(X, frame)."""
        out = list(ZERO3)
        for comps, G in vec.args:
            c = [self.plain(e, f"a vector in {G}", inputs=True) for e in comps]
            out = add(out, self.turn(X, G, c))
        return out

    def omega(self, F) -> Motion:
        """The angular velocity of F in N in F's components, with partials and rate."""
        if F not in self._omega:
            if self.N not in self._omega:
                p = len(self.kin.speeds)
                self._omega[self.N] = Motion(list(ZERO3), [ZERO3] * p, list(ZERO3), self.N)
            for G in self._path(F, self._omega):
                self._omega[G] = self._compose_omega(G)
        return self._omega[F]

    def _compose_omega(self, F) -> Motion:
        k, P = self._index(F), self._parent[F]
        parent = self._omega[P]
        R = self.rot(F, P)
        w_rel = [sm.S.Zero] * 3
        for comps, G in _ang_vel(F, P).args:
            if G not in (F, P):
                raise NotRelative(f"the angular velocity of {F} in {P} is written in {G}")
            c = [self.plain(e, f"the angular velocity of {F} in {P}") for e in comps]
            w_rel = add(w_rel, c if G == F else matvec(R, c))
        self._check_rate_of_orientation(F, P, R, w_rel)
        Rw = matvec(R, parent.value)
        value = self._vec(f"w{k}", add(Rw, w_rel))
        d_rel = [self.kin.jacobian_u(c) for c in w_rel]
        partials = []
        for j, pj in enumerate(parent.partials):
            own = [d_rel[i][j] for i in range(3)]
            if not nonzero(pj) and not nonzero(own):
                partials.append(ZERO3)
            else:
                partials.append(self._vec(f"wp{k}_{j}", add(matvec(R, pj), own)))
        rate = add(add(matvec(R, parent.rate0), cross(Rw, w_rel)),
                   [self.kin.dt(c) for c in w_rel])
        mo = Motion(value, partials, self._vec(f"a{k}", rate, INLINE_RATE), F)
        self._check(mo.value, _ang_vel(F, self.N), F, f"the angular velocity of {F}")
        self._check_stored_rate(mo, F._ang_acc_dict.get(self.N), f"angular acceleration of {F}")
        return mo

    # -- Motions' interface ------------------------------------------------------------
    def point(self, P: Point, X: ReferenceFrame | None = None) -> Motion:
        return self._in(self.velocity(P), X, P)

    def frame(self, R: ReferenceFrame, X: ReferenceFrame | None = None) -> Motion:
        return self._in(self.omega(R), X, R)

    def _in(self, mo: Motion, X, obj) -> Motion:
        X = X or self._known_frame(obj) or mo.frame
        key = (obj, X)
        if key not in self._motions:
            if X == mo.frame:
                self._motions[key] = mo
            else:
                self._motions[key] = Motion(self.turn(X, mo.frame, mo.value),
                                            [self.turn(X, mo.frame, c) for c in mo.partials],
                                            self.turn(X, mo.frame, mo.rate0), X)
        return self._motions[key]

    def particle_frame(self, P):
        return self.velocity(P).frame

    def body_frame(self, body):
        return body_frame(body, self.N) if is_rigid(body) else self.particle_frame(body.masscenter)

    def load_frame(self, where, vec):
        known = self._known_frame(where)
        if known is not None:
            return known
        return (self.velocity(where) if isinstance(where, Point) else self.omega(where)).frame

    def omega_of(self, X):
        return self.omega(X).value

    def velocity_value(self, obj, X):
        return (self.point(obj, X) if isinstance(obj, Point) else self.frame(obj, X)).value

    # -- the check against SymPy ---------------------------------------------------------
    def _check(self, ours, vec, X, what):
        """ours (components in X) equals SymPy's vec at two generic points: vec's parts
        summed in N's components (each part read once, Probe.in_N), turned into X, in
        floats; the tolerance scales with the sum of the parts' sizes (rotations keep
        each part's size)."""
        for probe in self._probe:
            mine = [probe.plain(e, self.items) for e in ours]
            in_N, size = [0j] * 3, 0.0
            for comps, G in vec.args:
                if G not in self._parent:
                    raise NotRelative(f"{what} is written in {G}, which is not oriented "
                                      f"from {self.N}")
                v, s = probe.in_N(comps, G, self._parent)
                in_N = [a + b for a, b in zip(in_N, v)]
                size += s
            C = probe.rotation(X, self._parent)
            theirs = [sum(C[i][k] * in_N[k] for k in range(3)) for i in range(3)]
            if not all(abs(a - b) <= VANISH_TOL * (1.0 + abs(a) + size)
                       for a, b in zip(mine, theirs)):
                raise NotRelative(f"{what} is not the derivative of its position "
                                  f"(SymPy's stored value differs)")

    def _check_rate_of_orientation(self, F, P, R, w_rel):
        """The angular velocity of F in P as stored (w_rel, in F's components) is the
        rate of F's orientation R = F.dcm(P): w× = -R' Rᵀ at two generic points.
        SymPy's rule is that the stored angular velocity is the model even where it is
        not (KanesMethod reads it so); the formulation without intermediates
        (codegen.formulation.motions.Motions) follows it part by part, this composition cannot."""
        Rdot = [[self.kin.dt(c) for c in row] for row in R]
        implied = [[sm.Mul(Rdot[i][k], R[j][k], evaluate=False) for k in range(3)
                    if Rdot[i][k] != 0 and R[j][k] != 0] for i, j in ((2, 1), (0, 2), (1, 0))]
        # w_rel - implied, implied = -(R' Rᵀ)[i, j]
        if not vanishes([_minus(w, [sm.Mul(sm.S.NegativeOne, e, evaluate=False) for e in terms])
                         for w, terms in zip(w_rel, implied)], self.numeric, relative=True):
            raise NotRelative(f"the angular velocity of {F} in {P} is not the rate of "
                              f"its orientation (set with set_ang_vel)")

    def _check_stored_rate(self, mo, stored, what):
        """A stored acceleration (set_acc, a2pt_theory, set_ang_acc), which KanesMethod
        reads instead of the derivative, equals the composed rate at u' = 0."""
        if stored is None:
            return
        theirs = self.stored_rate(stored, mo.frame, f"the {what}")
        if not vanishes([_minus(a, [b]) for a, b in zip(mo.rate0, theirs)], self.numeric,
                        relative=True):
            raise NotRelative(f"the stored {what} is not the derivative of its velocity")

    def numeric(self, exprs, point: int) -> list:
        """exprs (over the intermediates) at generic point 0 or 1, as complex numbers."""
        return [self._probe[point].plain(e, self.items) for e in exprs]


def _ang_vel(F, P):
    """F.ang_vel_in(P), read directly when stored between them (the shortest path, which
    SymPy's ang_vel_in would find by listing every path through the frames: O(n) per
    call on a chain of frames all oriented from N)."""
    stored = F._ang_vel_dict.get(P)
    return F.ang_vel_in(P) if stored is None else stored


def _minus(a, terms):
    """a - sum(terms), unevaluated: vanishes(relative=True) weighs each term's size."""
    return sm.Add(a, *[sm.Mul(sm.S.NegativeOne, t, evaluate=False) for t in terms],
                  evaluate=False)
