"""Sums over bodies that share partial velocities: O(n) for a chain, not O(n³).

The mass matrix and dS/du' are sums over bodies of terms bilinear in a
body's partial velocities (the keys) and linear in a coefficient of the
body (its mass, inertia, m ρ, m a0, its bias):

    M_jk = sum_b f(K_j, K_k, C_b),      R_j = sum_b g(K_j, C_b)

Bodies beyond a joint share the joint's partial velocities (every link
after joint j of a chain composed in N has link j's partial velocity, the
same expression), so over the bodies that have both keys the sum is
f(K_j, K_k, sum_b C_b). Taking it body by body would cost O(b²) per body,
O(n³) for a chain, and a sum of O(n) masses in each entry of M.

Instead the bodies form a prefix tree: each body's parent is the earlier
body with the most keys, all of them the body's own (for a chain, the link
before). A body handles only the pairs with a key its parent lacks (its new
keys), with the subtree sum of the coefficients, S_b = C_b + sum of its
children's S (named intermediates, defined from the tips in). Every body
that has both keys of a pair is then counted once: at the first body on
its path to the root where one of the keys is new. Generalized forces are
the same with loads for bodies.
"""
from __future__ import annotations

import sympy as sm

__all__ = ["SharedSums"]


class SharedSums:
    """Nodes (bodies or loads) with ordered keys and a coefficient (a list of
    expressions), and cells that gather the nodes contributing to them.

    define(label, expr): an intermediate's symbol (or expr itself, where the
    caller keeps expressions inline)."""

    def __init__(self, define, label: str):
        self.define, self.label = define, label
        self._keys, self._parent, self._coefficient = [], [], []
        self._first = {}              # key -> the first node that has it
        self.cells = {}               # cell -> [nodes], in order of first contribution

    def node(self, keys: list, coefficient: list) -> tuple:
        """(index, new keys) of a new node; its new keys (in keys' order) are those
        its prefix parent lacks."""
        own = set(keys)
        candidates = sorted({self._first[k] for k in keys if k in self._first},
                            key=lambda c: (len(self._keys[c]), c), reverse=True)
        parent = next((c for c in candidates if self._keys[c] <= own), -1)
        index = len(self._keys)
        self._keys.append(own)
        self._parent.append(parent)
        self._coefficient.append(list(coefficient))
        for k in keys:
            self._first.setdefault(k, index)
        inherited = self._keys[parent] if parent >= 0 else ()
        return index, [k for k in keys if k not in inherited]

    def add(self, cell, node: int) -> None:
        self.cells.setdefault(cell, []).append(node)

    def totals(self) -> dict:
        """{cell: the coefficients summed over the nodes counted in it (a list, shared
        between cells: not to be changed)}."""
        n = len(self._keys)
        children = [[] for _ in range(n)]
        for b in range(n):
            if self._parent[b] >= 0:
                children[self._parent[b]].append(b)
        subtree = [None] * n
        for b in reversed(range(n)):           # children come after their parents
            total = self._coefficient[b]
            if children[b]:
                total = [self.define(f"{self.label}{b}_{i}",
                                     sm.Add(c, *[subtree[k][i] for k in children[b]]))
                         for i, c in enumerate(total)]
            subtree[b] = total
        # a cell of one node (each of a chain's n²/2 cells of M) shares that node's list
        return {cell: subtree[nodes[0]] if len(nodes) == 1 else
                [sm.Add(*parts) for parts in zip(*[subtree[b] for b in nodes])]
                for cell, nodes in self.cells.items()}
