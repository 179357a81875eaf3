"""Kinematics by relative motion, the points: each point's velocity from its parent's.

The point half of codegen.formulation.relative's RelativeMotions (see its docstring for the
composition): the point tree is the graph of positions (``set_pos``) searched from
the points whose velocity in N is zero, and for a point P located from O by
r = sum of parts c_G in frames G, with its velocity in the components of frame X,

    v_P   = T(X, X_O) v_O + sum_G T(X, G) (c_G' + w_G x c_G)
    a_P   = T(X, X_O) a_O + sum_G T(X, G) (c_G'' + 2 w_G x c_G' + a_G x c_G + w_G x (w_G x c_G))

The frame X of each point's velocity is chosen over the whole point tree at once
(codegen.formulation.frame_tree). A mixin: the frames' half (omega, turn, _vec, the checks) is
RelativeMotions'.
"""
from __future__ import annotations

from collections import deque

import sympy as sm
from sympy.core.function import AppliedUndef

from .frame_tree import plan_frames, uncached_path
from .motions import Motion
from ..progress import checkpoint
from ..symbolic.vec3 import ZERO3, add, cross, nonzero

__all__ = ["PointComposition", "NotRelative"]

#: a composed vector's (a rate's) entry of at most this many operations stays inline
#: (codegen.formulation.relative's _vec)
INLINE_OPERATIONS, INLINE_RATE = 3, 6


class NotRelative(ValueError):
    """The model's velocities cannot be composed from relative motions."""


class PointComposition:
    """The points' velocities of codegen.formulation.relative.RelativeMotions, composed down the point
    tree (state: _point_parent, _point_frame, _point_index, _vel, _own, _wanted)."""

    def _point_tree(self, P):
        """{point: parent} breadth first over positions from the points at rest in N;
        the frames the velocities are composed in are planned for the new component."""
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
        for Q, O in tree.items():
            for _, G in ([] if O is None else Q._pos_dict[O].args):
                self._index(G)
            if O is not None:
                parts = self._own_velocity(Q)
                if parts is not None:
                    self._own[Q] = parts
        own = {Q: [self._own[Q][1]] for Q in tree if Q in self._own}
        self._point_frame.update(plan_frames(tree, self._parent, self._wanted, own))
        self._point_parent.update(tree)
        for Q, O in tree.items():        # every stored velocity checked, used or not
            if O is not None and self.N in Q._vel_dict:
                self.velocity(Q)
        return self._point_parent

    def velocity(self, P) -> Motion:
        """The velocity of P in N, in the components of the frame planned for it (see the
        module docstring), with partials and rate."""
        if P not in self._vel:
            tree = self._point_tree(P)
            for Q in reversed(uncached_path(P, tree, self._vel)):
                self._vel[Q] = self._compose_velocity(Q, tree[Q])
        return self._vel[P]

    def _own_velocity(self, P):
        """P's stored velocity in N as (components, frame) when its components are free
        of the coordinates (a free body's velocity in its own frame, whose components are
        speeds), else None. Such a velocity is taken as it is stored, once checked to be
        its position's derivative: its rate is then ω × v in each frame, where the
        composed one would differentiate the rotation that carries it to N."""
        vec = P._vel_dict.get(self.N)
        if not vec or len(vec.args) != 1 or vec.args[0][1] == self.N:
            # one rotating frame (a free body's base): in N, ω × v saves nothing; over
            # several frames (a chain's v2pt_theory) composing from the parent's named
            # velocity stays O(1) per point, where the stored sum grows along the chain
            return None
        (comps, G), = vec.args
        if G not in self._parent or any(e.has(*self.kin.q) for e in comps):
            return None          # checked before converting, which costs more
        try:
            c = [self.kin.to_plain(e, f"the velocity of {P}", inputs=False) for e in comps]
        except ValueError:              # an input in it: composed from the position
            return None
        if any(e.has(AppliedUndef, sm.Derivative) for e in c):
            return None
        return c, G

    def _stored_velocity(self, P, k, X, composed) -> Motion:
        """P's own velocity (_own_velocity) in X with its partials and rate, once composed
        (its value composed from the parent's) agrees with it."""
        self._check(composed, P.vel(self.N), X, f"the velocity of {P}")
        p = len(self.kin.speeds)
        c, G = self._own[P]
        value = self.turn(X, G, c)
        rate = self.turn(X, G, add([self.kin.dt(e) for e in c], cross(self.omega_of(G), c)))
        dc = [self.kin.jacobian_u(e) for e in c]
        partials = [[dc[i][j] for i in range(3)] for j in range(p)]
        partials = [self._vec(f"vp{k}_{j}", self.turn(X, G, v)) if nonzero(v) else ZERO3
                    for j, v in enumerate(partials)]
        return Motion(self._vec(f"v{k}", value), partials, self._vec(f"dv{k}", rate, INLINE_RATE), X)

    def _compose_velocity(self, P, O) -> Motion:
        checkpoint()
        p = len(self.kin.speeds)
        if O is None:
            return Motion(list(ZERO3), [ZERO3] * p, list(ZERO3), self.N)
        k = self._point_index.setdefault(P, len(self._point_index))
        base = self._vel[O]
        X = self._point_frame[P]
        value = self.turn(X, base.frame, base.value)
        if P in self._own:
            for comps, G in P._pos_dict[O].args:
                c = [self.plain(e, f"the position of {P} from {O}") for e in comps]
                cd = [self.kin.dt(e) for e in c]
                value = add(value, self.turn(X, G, add(cd, cross(self.omega(G).value, c))))
            mo = self._stored_velocity(P, k, X, value)
            self._check_stored_rate(mo, P._acc_dict.get(self.N), f"acceleration of {P}")
            return mo
        partials = [self.turn(X, base.frame, v) for v in base.partials]
        changed = set()
        rate = self.turn(X, base.frame, base.rate0)
        for comps, G in P._pos_dict[O].args:
            c = [self.plain(e, f"the position of {P} from {O}") for e in comps]
            w = self.omega(G)
            cd = [self.kin.dt(e) for e in c]
            cdd = [self.kin.dt(e) for e in cd]
            dcd = [self.kin.jacobian_u(e) for e in cd]
            value = add(value, self.turn(X, G, add(cd, cross(w.value, c))))
            for j in range(p):
                own = [dcd[i][j] for i in range(3)]
                if nonzero(w.partials[j]):
                    own = add(own, cross(w.partials[j], c))
                if nonzero(own):
                    partials[j] = add(partials[j], self.turn(X, G, own))
                    changed.add(j)
            acc = add(add(cdd, [2 * e for e in cross(w.value, cd)]),
                      add(cross(w.rate0, c), cross(w.value, cross(w.value, c))))
            rate = add(rate, self.turn(X, G, acc))
        if X != base.frame:
            changed |= {j for j in range(p) if nonzero(partials[j])}
        partials = [self._vec(f"vp{k}_{j}", v) if j in changed else v
                    for j, v in enumerate(partials)]
        mo = Motion(self._vec(f"v{k}", value), partials, self._vec(f"dv{k}", rate, INLINE_RATE), X)
        if self.N in P._vel_dict:
            self._check(mo.value, P.vel(self.N), X, f"the velocity of {P}")
        # else SymPy derives P's velocity when asked (Point.vel): a point's that stores
        # one, checked (_point_tree), plus the derivative of P's position from it, which
        # is the composition itself
        self._check_stored_rate(mo, P._acc_dict.get(self.N), f"acceleration of {P}")
        return mo
