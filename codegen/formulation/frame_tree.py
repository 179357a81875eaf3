"""The frame tree, the frames the relative kinematics compose each point in, and the
numeric points their checks are made at.

codegen.formulation.relative composes each point's velocity from its parent's in the
position tree, in the components of one frame X per point. Turning a vector
between frames costs products, and turning the parent's velocity turns all
of its partial velocities too, so the choice matters: a chain of particles
in absolute angles composed in N keeps every partial velocity it shares
with its parent as the parent's symbol (O(1) new intermediates per link),
while the same chain composed in each link's frame would turn all of them
at every link (O(n) per link). ``plan_frames`` chooses X for every point of
a position tree at once, by dynamic programming over the tree, with the
cost of a turn

    0 between a frame and itself, 1 between neighbours of the frame tree,
    3 otherwise (a product of rotations)

weighted by the number of vectors turned: a point's parent's velocity
carries about as many partials as the point is deep in the tree, a
position's part and a rigid body's wanted frame (its mass centre taken in
its own frame, where its inertia is constant) as many as the point.

:class:`Probe` gives floats at one generic point for plain symbols,
SymPy's functions of time, the intermediates, and the rotation of every
frame from N.
"""
from __future__ import annotations

import random
from collections import deque

import sympy as sm

from ..symbolic.expressions import evaluate

__all__ = ["frame_tree", "plan_frames", "uncached_path", "Probe"]


def frame_tree(N) -> dict:
    """{frame: parent} over the orientation graph, breadth first from N."""
    parent, queue = {N: None}, deque([N])
    while queue:
        F = queue.popleft()
        for G in F._dcm_dict:
            if G not in parent:
                parent[G] = F
                queue.append(G)
    return parent


def _cost(frames: dict, X, Y) -> int:
    if X is None or X == Y:          # None: a point at rest, its zero velocity turns freely
        return 0
    if frames.get(X) == Y or frames.get(Y) == X:
        return 1
    return 3


def plan_frames(tree: dict, frames: dict, wanted: dict, own: dict | None = None) -> dict:
    """{point: frame} for the points of a position tree ({point: parent}, parents first,
    None for the points at rest); frames: the frame tree ({frame: parent}); wanted:
    {point: frame the formulation takes it in}; own: {point: the frames of its own
    velocity}, for the points whose velocity is not composed from their parent's (then
    their parent's frame costs them nothing). Ties go to the parent's frame, then to
    the position's own frames in their order."""
    own = own or {}
    depth, children, parts, cand = {}, {}, {}, {}
    root = next(F for F, P in frames.items() if P is None)
    for Q, O in tree.items():
        depth[Q] = 0 if O is None else depth[O] + 1
        if O is None:
            continue
        children.setdefault(O, []).append(Q)
        parts[Q] = list(own[Q]) if Q in own else [G for _, G in Q._pos_dict[O].args]
        options = parts[Q] + [frames.get(G) for G in parts[Q]] + [wanted.get(Q)] \
            + parts.get(O, [])
        # a point at its parent (a zero position) has no frame of its own: its parent's
        cand[Q] = list(dict.fromkeys(G for G in options if G is not None)) \
            or list(cand.get(O, [root]))

    def cost(Q, X):
        c = sum(_cost(frames, G, X) for G in parts[Q])
        return c + (_cost(frames, X, wanted[Q]) * (depth[Q] + 2) if Q in wanted else 0)

    def link(Q):
        """The weight of turning Q's parent's velocity into Q's frame."""
        return 0 if Q in own else depth[Q] + 1
    best = {}
    for Q in reversed(list(tree)):
        if tree[Q] is None:
            continue
        best[Q] = {X: cost(Q, X) + sum(min(_cost(frames, X, Y) * link(c) + best[c][Y]
                                           for Y in cand[c]) for c in children.get(Q, ()))
                   for X in cand[Q]}
    chosen = {}
    for Q, O in tree.items():
        if O is None:
            continue
        XO = chosen.get(O)
        weight = link(Q)
        options = ([XO] if XO in best[Q] else []) + cand[Q]
        chosen[Q] = min(options, key=lambda X: _cost(frames, XO, X) * weight + best[Q][X])
    return chosen


def uncached_path(node, parent: dict, cache) -> list:
    """node and its ancestors (parent: node -> its parent, None at a root), nearest first,
    up to the first that cache holds: what a composition down a tree computes anew."""
    path = []
    while node not in cache:
        path.append(node)
        if parent[node] is None:
            break
        node = parent[node]
    return path


class Probe:
    """Floats at one generic point for plain symbols, SymPy's functions of time, and
    the intermediates: the same value for a symbol in every expression."""

    def __init__(self, kin, seed):
        self.kin, self.seed = kin, seed
        self.memo = {}             # plain and timed atoms, intermediates, nodes -> complex
        self.done = 0              # intermediates evaluated so far
        self._rot = {}             # frame -> its rotation from N at this point (floats)
        self._parts = {}           # id of a vector's part -> (part, its value in N, size)

    def _value(self, atom) -> float:
        return random.Random(f"{self.seed}:{atom}").uniform(0.3, 1.3)

    def _start(self):
        kin, memo = self.kin, self.memo
        for s in list(kin.qs) + list(kin.speeds):
            memo[s] = complex(self._value(s))
        for s, plain_s in kin._base.items():
            memo[s] = memo[plain_s]
        if kin.has_kd:
            for qk, e in zip(kin.q, kin.qdot):
                memo[qk.diff()] = evaluate(e, memo, self._value)

    def plain(self, expr, items) -> complex:
        """expr over plain symbols and the intermediates items (in definition order)."""
        if not self.memo:
            self._start()
        while self.done < len(items):
            item = items[self.done]
            self.memo[item.symbol] = evaluate(item.expr, self.memo, self._value)
            self.done += 1
        return self.number(expr)

    def number(self, expr) -> complex:
        """expr (plain or in SymPy's functions of time) at this point."""
        value = self.memo.get(expr)
        if value is not None:
            return value
        if not self.memo:
            self._start()
        return evaluate(sm.sympify(expr), self.memo, self._value)

    def rotation(self, F, frames: dict) -> list:
        """The rotation of F from N (components in F = C components in N), floats."""
        for G in reversed(uncached_path(F, frames, self._rot)):
            P = frames[G]
            R = [[self.number(c) for c in row] for row in G._dcm_dict[P].tolist()] \
                if P is not None else [[complex(i == j) for j in range(3)] for i in range(3)]
            C = self._rot.get(P)
            self._rot[G] = R if C is None else \
                [[sum(R[i][k] * C[k][j] for k in range(3)) for j in range(3)] for i in range(3)]
        return self._rot[F]

    def in_N(self, comps, G, frames: dict) -> tuple:
        """A vector's part (components comps in G) in N's components, with the sum of
        |comps|, at this point. A part is read once: SymPy's velocity of a point down a
        chain holds its parent's parts, the same objects, and reading them again would
        make checking every point O(n²)."""
        key = (id(comps), G)
        hit = self._parts.get(key)
        if hit is None:
            c = [self.number(e) for e in comps]
            C = self.rotation(G, frames)
            v = [sum(C[k][i] * c[k] for k in range(3) if c[k] != 0) for i in range(3)]
            hit = self._parts[key] = (comps, v, sum(abs(e) for e in c))
        return hit[1], hit[2]
