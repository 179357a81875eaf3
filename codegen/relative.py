"""Kinematics by relative motion: each body's from its parent's, as named intermediates.

SymPy's velocities of a chain are written out in q: the velocity of the
k-th body of a spatial chain (``v2pt_theory`` down the chain) carries the
product of every rotation on the way to the root, and its size grows
about threefold per body. Recursive numeric algorithms, and symbolic
generators that scale (SD/FAST, RobCoGen), compose one rotation per joint
instead. Here each quantity is an intermediate, defined once from its
parent's (all in the frame's own components):

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
recursion's inputs) is built on the intermediates.

The frame tree is the graph of orientations (``orient``) searched from the
Newtonian frame; the point tree is the graph of positions (``set_pos``)
searched from the points whose velocity in N is zero. Each frame's angular
velocity and each point's velocity is checked, at two generic numeric
points, against SymPy's own (``ang_vel_in``, ``vel``): a model whose
stored velocities are not the derivatives of its positions (a rolling
contact set with ``set_vel``) raises :class:`NotRelative`, and the
formulation keeps SymPy's expanded velocities.
"""
from __future__ import annotations

import random
from collections import deque

import sympy as sm
from sympy.core.function import AppliedUndef
from sympy.physics.vector import Point, ReferenceFrame

from .constraints import define
from .motions import Motion, Motions, is_rigid
from .symbolic import dag_atoms, memo_xreplace, vanishes
from .vec3 import add, cross, matmul, matvec, transpose

__all__ = ["RelativeMotions", "NotRelative", "frame_depth", "composition_pays", "RELATIVE_DEPTH"]

#: without constraints, velocities are composed as intermediates when a body's frame
#: is this many orientations from the Newtonian frame
RELATIVE_DEPTH = 3

_ZERO3 = (sm.S.Zero, sm.S.Zero, sm.S.Zero)


class NotRelative(ValueError):
    """The model's velocities cannot be composed from relative motions."""


def _frame_tree(N: ReferenceFrame) -> dict:
    """{frame: parent} over the orientation graph, breadth first from N."""
    parent, queue = {N: None}, deque([N])
    while queue:
        F = queue.popleft()
        for G in F._dcm_dict:
            if G not in parent:
                parent[G] = F
                queue.append(G)
    return parent


def frame_depth(frames, N: ReferenceFrame) -> int:
    """The largest number of orientations between N and one of frames."""
    parent = _frame_tree(N)
    deepest = 0
    for F in frames:
        k = 0
        while F is not None and F in parent and F != N:
            F, k = parent[F], k + 1
        deepest = max(deepest, k)
    return deepest


def composition_pays(bodies, loads, N: ReferenceFrame) -> bool:
    """A rigid body's frame, or a frame a load acts on, is RELATIVE_DEPTH or more
    orientations from N: there SymPy's written-out velocities grow."""
    frames = [b.frame for b in bodies if is_rigid(b)] + \
        [w for w, _ in loads if isinstance(w, ReferenceFrame)]
    return frame_depth(frames, N) >= RELATIVE_DEPTH


class RelativeMotions(Motions):
    """Motions (codegen.motions) composed down the frame and point trees.

    ``items``: the intermediates (codegen.constraints.Intermediate) in
    definition order; every Motion's entries are expressions over them."""

    def __init__(self, kin, N):
        super().__init__(kin, N)
        if kin.uas:
            raise NotRelative("auxiliary speeds")
        self._parent = _frame_tree(N)
        self._frame_index, self._rot_N, self._omega = {N: 0}, {N: None}, {}
        self._rot_pair = {}
        self._point_parent = {}      # point -> parent in the position tree (None: at rest)
        self._point_index, self._vel = {}, {}
        self._probe = [_Probe(kin, seed) for seed in (1, 2)]

    # -- intermediates ------------------------------------------------------------
    def _vec(self, name, values):
        return [define(self.items, f"{name}_{i}", v) for i, v in enumerate(values)]

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

    def rot_from_N(self, F):
        """C_F: components in F = C_F components in N (None for N itself)."""
        if F not in self._rot_N:
            k, P = self._index(F), self._parent[F]
            R = self._dcm(F, P)
            C = R if P == self.N else matmul(R, self.rot_from_N(P))
            self._rot_N[F] = [[define(self.items, f"C{k}_{i}{j}", C[i][j])
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

    def turn(self, X, Y, v):
        T = self.rot(X, Y)
        return list(v) if T is None else matvec(T, v)

    def rotation(self, X, Y) -> sm.Matrix:
        T = self.rot(X, Y)
        return sm.eye(3) if T is None else sm.Matrix(T)

    def components(self, vec, X):
        """vec in components of X, each frame's part turned by T(X, frame)."""
        out = list(_ZERO3)
        for comps, G in vec.args:
            c = [self.plain(e, f"a vector in {G}", inputs=True) for e in comps]
            out = add(out, self.turn(X, G, c))
        return out

    def omega(self, F) -> Motion:
        """The angular velocity of F in N in F's components, with partials and rate."""
        if F in self._omega:
            return self._omega[F]
        p = len(self.kin.speeds)
        if F == self.N:
            mo = Motion(list(_ZERO3), [list(_ZERO3) for _ in range(p)], list(_ZERO3), F)
            self._omega[F] = mo
            return mo
        k, P = self._index(F), self._parent[F]
        parent = self.omega(P)
        R = self.rot(F, P)
        w_rel = [sm.S.Zero] * 3
        for comps, G in F.ang_vel_in(P).args:
            if G not in (F, P):
                raise NotRelative(f"the angular velocity of {F} in {P} is written in {G}")
            c = [self.plain(e, f"the angular velocity of {F} in {P}") for e in comps]
            w_rel = add(w_rel, c if G == F else matvec(R, c))
        self._check_rate_of_orientation(F, P, R, w_rel)
        Rw = matvec(R, parent.value)
        value = self._vec(f"w{k}", add(Rw, w_rel))
        d_rel = [self.kin.jacobian_u(c) for c in w_rel]
        partials = [self._vec(f"wp{k}_{j}", add(matvec(R, parent.partials[j]),
                                                 [d_rel[i][j] for i in range(3)]))
                    for j in range(p)]
        rate = add(add(matvec(R, parent.rate0), cross(Rw, w_rel)),
                    [self.kin.dt(c) for c in w_rel])
        mo = Motion(value, partials, self._vec(f"a{k}", rate), F)
        self._check(mo.value, F.ang_vel_in(self.N), F, f"the angular velocity of {F}")
        self._check_stored_rate(mo, F._ang_acc_dict.get(self.N), f"angular acceleration of {F}")
        self._omega[F] = mo
        return mo

    # -- points -------------------------------------------------------------------
    def _point_tree(self, P):
        """{point: parent} breadth first over positions from the points at rest in N."""
        if P in self._point_parent:
            return self._point_parent
        seen, queue = {P}, deque([P])
        while queue:                                # the component of P
            Q = queue.popleft()
            for O in Q._pos_dict:
                if O not in seen:
                    seen.add(O)
                    queue.append(O)
        roots = [Q for Q in seen if self.N in Q._vel_dict and Q._vel_dict[self.N] == 0]
        if not roots:
            raise NotRelative(f"no point located from {P} is at rest in {self.N}")
        roots.sort(key=lambda Q: Q.name)
        tree, queue = {Q: None for Q in roots}, deque(roots)
        while queue:
            Q = queue.popleft()
            for O in sorted(Q._pos_dict, key=lambda o: o.name):
                if O not in tree:
                    tree[O] = Q
                    queue.append(O)
        self._point_parent.update(tree)
        return self._point_parent

    def velocity(self, P) -> Motion:
        """The velocity of P in N, in the components of its own frame (see the module
        docstring), with partials and rate."""
        if P in self._vel:
            return self._vel[P]
        p = len(self.kin.speeds)
        O = self._point_tree(P)[P]
        if O is None:
            mo = Motion(list(_ZERO3), [list(_ZERO3) for _ in range(p)], list(_ZERO3), self.N)
            self._vel[P] = mo
            return mo
        k = self._point_index.setdefault(P, len(self._point_index))
        base = self.velocity(O)
        r = P._pos_dict[O]
        frames = [G for _, G in r.args]
        X = frames[0] if len(frames) == 1 else base.frame
        value = self.turn(X, base.frame, base.value)
        partials = [self.turn(X, base.frame, base.partials[j]) for j in range(p)]
        rate = self.turn(X, base.frame, base.rate0)
        for comps, G in r.args:
            c = [self.plain(e, f"the position of {P} from {O}") for e in comps]
            w = self.omega(G)
            cd = [self.kin.dt(e) for e in c]
            cdd = [self.kin.dt(e) for e in cd]
            dcd = [self.kin.jacobian_u(e) for e in cd]
            value = add(value, self.turn(X, G, add(cd, cross(w.value, c))))
            for j in range(p):
                own = add([dcd[i][j] for i in range(3)], cross(w.partials[j], c))
                partials[j] = add(partials[j], self.turn(X, G, own))
            acc = add(add(cdd, [2 * e for e in cross(w.value, cd)]),
                       add(cross(w.rate0, c), cross(w.value, cross(w.value, c))))
            rate = add(rate, self.turn(X, G, acc))
        mo = Motion(self._vec(f"v{k}", value),
                    [self._vec(f"vp{k}_{j}", partials[j]) for j in range(p)],
                    self._vec(f"dv{k}", rate), X)
        self._check(mo.value, P.vel(self.N), X, f"the velocity of {P}")
        self._check_stored_rate(mo, P._acc_dict.get(self.N), f"acceleration of {P}")
        self._vel[P] = mo
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
        """ours (components in X) equals SymPy's vec at two generic points."""
        theirs = [[], [], []]
        for comps, G in vec.args:
            C = X.dcm(G) if G != X else sm.eye(3)
            for i in range(3):
                theirs[i] += [sm.Mul(C[i, j], comps[j], evaluate=False) for j in range(3)
                              if C[i, j] != 0 and comps[j] != 0]
        if not vanishes([_minus(a, b) for a, b in zip(ours, theirs)], self.numeric, relative=True):
            raise NotRelative(f"{what} is not the derivative of its position "
                              f"(SymPy's stored value differs)")

    def _check_rate_of_orientation(self, F, P, R, w_rel):
        """The angular velocity of F in P as stored (w_rel, in F's components) is the
        rate of F's orientation R = F.dcm(P): w× = -R' Rᵀ at two generic points.
        SymPy's rule is that the stored angular velocity is the model even where it is
        not (KanesMethod reads it so); the formulation without intermediates
        (codegen.motions.Motions) follows it part by part, this composition cannot."""
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
        """exprs (over the intermediates) at generic point 0 or 1."""
        return [self._probe[point].plain(e, self.items) for e in exprs]


def _minus(a, terms):
    """a - sum(terms), unevaluated: vanishes(relative=True) weighs each term's size."""
    return sm.Add(a, *[sm.Mul(sm.S.NegativeOne, t, evaluate=False) for t in terms],
                  evaluate=False)


class _Probe:
    """Floats at one generic point for plain symbols, SymPy's functions of time, and
    the intermediates: the same value for a symbol in every expression."""

    def __init__(self, kin, seed):
        self.kin, self.seed = kin, seed
        self.memo = {}             # plain and timed atoms, intermediates -> Float
        self.done = 0              # intermediates evaluated so far

    def _value(self, atom):
        rng = random.Random(f"{self.seed}:{atom}")
        return sm.Float(rng.uniform(0.3, 1.3))

    def _fill(self, expr):
        for a in dag_atoms([expr], (sm.Symbol, AppliedUndef, sm.Derivative)):
            if self.memo.get(a, a) is a:     # memo_xreplace also records atoms as themselves
                self.memo[a] = self._value(a)

    def plain(self, expr, items) -> float:
        kin = self.kin
        if not self.memo:
            for s in list(kin.qs) + list(kin.speeds):
                self.memo[s] = self._value(s)
            for s, plain_s in kin._base.items():
                self.memo[s] = self.memo[plain_s]
            for qk, e in zip(kin.q, kin.qdot):
                self._fill(e)
                self.memo[qk.diff()] = memo_xreplace(e, self.memo)
        while self.done < len(items):
            item = items[self.done]
            self._fill(item.expr)
            self.memo[item.symbol] = memo_xreplace(item.expr, self.memo)
            self.done += 1
        return self.number(expr)

    def number(self, expr) -> float:
        """expr (plain or in SymPy's functions of time) at this point."""
        expr = sm.sympify(expr)
        out = memo_xreplace(expr, self.memo)
        if not out.is_number:
            self._fill(out)
            out = memo_xreplace(out, self.memo)
        return complex(out).real
