"""What the Newton–Euler derivatives (codegen.algorithms.rnea_derivatives) add when they
also solve u': M from the derivatives' own composite inertias in the root's frame, its L D Lᵀ
without fill-in and the solve (``solve_ud``), the operations that costs, read from the
tree's structure alone (``solve_operations``), and the numeric checks of the formed
program against the tree's Newton–Euler residual at generic points."""
from __future__ import annotations

import random

import sympy as sm

from ..symbolic.expressions import evaluate
from ..symbolic.vec3 import dot
from .ldlt import ldl_factor, ldl_solve
from .rnea import inverse_program

__all__ = ["solve_operations", "solve_ud", "paths", "residual_vanishes", "agrees_with_newton_euler",
           "CHECK_TOL"]


#: relative agreement of the tree's residual and this one's at the generic points
CHECK_TOL = 1e-9


def paths(nodes) -> dict:
    """node -> the nodes from its root to it (itself last)."""
    path = {}
    for k, nd in enumerate(nodes):
        path[k] = ([] if nd.parent < 0 else path[nd.parent]) + [k]
    return path


#: operations solve_operations counts: a dot product of 6-vectors (M's entry, a bias),
#: a multiply-add of the factor or its solves, and a body's split of its acceleration
#: (a0 and A apart: their sums and Y A)
_DOT, _MADD, _SPLIT = 11, 2, 60


def solve_operations(eom) -> int:
    """About the operations rnea_derivatives(solve=True) adds: M's entries and the
    bias as dot products, the factor (no fill-in: row j holds the speeds on j's path)
    and its two solves, and each body's split; from the structure alone, to weigh
    against the right-hand side the Jacobian then does not call."""
    nodes = eom.tree.nodes if eom.tree is not None else []
    above, count = {}, 0
    for k, nd in enumerate(nodes):
        above[k] = (0 if nd.parent < 0 else above[nd.parent] + len(nodes[nd.parent].speeds))
        for c in range(len(nd.speeds)):
            row = above[k] + c                  # the entries of the factor's row, off D
            count += _DOT * (row + 2) + _MADD * (row * (row + 1) // 2 + 2 * row + 1)
        count += _SPLIT
    return count


def solve_ud(nodes, world, YS, Fc0, Q, define) -> tuple | None:
    """(u', (order, factors)): u' of M u' = -tau0 (per speed, in eom.u's order), the
    speed of each of the factor's rows and ldl_factor's factors; None if M's factor has a
    pivot zero by structure: M's entries by the composite-rigid-body algorithm in the
    root's frame, <S_i, Yc_j S_j> for i on j's path (Yc S: the derivatives' YS), tau0 the
    residual at u' = 0 (Fc0), M factored L D Lᵀ in an order that takes every joint
    before the joints above it, which over a tree has no fill-in (as codegen.algorithms.jacobian_columns'
    factors)."""
    nu = len(Q)
    order = [j for k in reversed(range(len(nodes))) for j in reversed(nodes[k].speeds)]
    row = {j: i for i, j in enumerate(order)}
    entries, bias, path = {}, [None] * nu, paths(nodes)
    for k, nd in enumerate(nodes):
        for c, j in enumerate(nd.speeds):
            bias[row[j]] = -(dot(world.S[k][c], Fc0[k]) - Q[j])
            for i in path[k]:
                for e, r in enumerate(nodes[i].speeds):
                    if i != k or e <= c:
                        entries[max(row[j], row[r]), min(row[j], row[r])] = \
                            dot(world.S[i][e], YS[k, c])
    # a pivot that is not positive (parameters of no rigid body) makes u' infinite: the
    # runtime's finiteness check then reports the mass matrix (cg_jacobian)
    factors = ldl_factor({key: e for key, e in entries.items() if e != 0}, nu, define, "wm",
                         positive=True)
    if factors is None:
        return None
    x = ldl_solve(factors, bias, define, "wy", "wz")
    return [x[row[j]] for j in range(nu)], (order, factors)


def residual_vanishes(define, tau) -> bool:
    """Whether the residual vanishes at the solved u' at two generic points (relative to
    the size of its terms): the check of solve_ud's M and bias, as agrees_with_newton_euler checks tau."""
    for point in range(2):
        memo = {}
        values = _evaluated(define.temps, tau, _generic_point(4321 + point)[2], memo)
        scale = 1.0 + max(abs(v) for v in memo.values())
        if not all(abs(v) <= CHECK_TOL * scale for v in values):     # nan too
            return False
    return True


def agrees_with_newton_euler(eom, define, tau, ud) -> bool:
    """Whether tau equals the tree's Newton–Euler residual (codegen.algorithms.rnea) at two
    generic points: the check that the bias is v×* W v plus loads fixed in the bodies,
    each root moves with s u and gravity is the roots' acceleration."""
    reference = inverse_program(eom)
    theirs = dict(reference.outputs)["tau"]
    by_name = {n: o for o, n in reference.names.items()}
    for point in range(2):
        rng, leaves, leaf = _generic_point(1234 + point)
        for j, s in enumerate(ud):
            leaves[s] = leaves[by_name[f"cg_ud{j}"]] = rng.uniform(-1, 1)
        mine = _evaluated(define.temps, tau, leaf)
        other = _evaluated(reference.temporaries, theirs, leaf)
        scale = 1.0 + max(abs(x) for x in other)
        if not all(abs(x - y) <= CHECK_TOL * scale for x, y in zip(mine, other)):  # nan too
            return False
    return True


def _generic_point(seed) -> tuple:
    """(rng, leaves, leaf): a generic point, each input's value drawn once (in [0.3, 1.3])
    as leaf meets it."""
    rng, leaves = random.Random(seed), {}

    def leaf(atom):
        if atom not in leaves:
            leaves[atom] = rng.uniform(0.3, 1.3)
        return leaves[atom]
    return rng, leaves, leaf


def _evaluated(temporaries, exprs, leaf, memo=None) -> list:
    """exprs as complex numbers after the temporaries, leaf giving each input's value;
    memo: a dict to hold the temporaries' values, for a caller that weighs them too."""
    memo = {} if memo is None else memo
    for s, e in temporaries:
        memo[s] = evaluate(e, memo, leaf)
    return [evaluate(sm.sympify(e), memo, leaf) for e in exprs]
