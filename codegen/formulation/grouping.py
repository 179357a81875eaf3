"""Khalil's grouping of inertial parameters over a tree of joints.

A child that turns about an axis e through its reference point O (a hinge: one speed,
s = (e; 0), e an axis of its frame) carries a part that is symmetric about e and has
no inertia about it: its mass m, its first moment along e, μ e, and the inertia
λ (1 - e eᵀ) about O. That part's kinetic and potential energy depend on neither the
joint's angle nor its rate, so it moves with the parent: moved there (as its
constant inertia about the parent's reference point), every joint force stays the same
(Khalil and Kleinfinger 1987; Khalil and Dombre, "Modeling, Identification and Control
of Robots", 9.3.3), and the child keeps no mass, no first moment along e and one inertia
fewer (λ: its inertia about the first axis across e). The wrenches inside the tree change;
the joint forces, M(q) and the biases do not.

Tips first, so that a part moved into a body moves on with that body's own. Each
changed body's bias is formed again from its new inertia, b = (ω × I ω; ω × (ω × h)) +
its loads, h its first moment. Numbers only: a model's symbolic inertias keep their
own, as do a child whose axis in its parent's frame is not a constant of the formulation
and a parent that is a particle (no ω).
"""
from __future__ import annotations

import sympy as sm

from ..symbolic.spatial import skew
from ..symbolic.vec3 import add, cross, cross_kept, matvec_kept

__all__ = ["group_inertias", "first_moment"]


def group_inertias(nodes, inertias, omegas, loads) -> None:
    """Set each changed node's Wg and bg (codegen.equations.tree.TreeNode) from the
    nodes' full 6 x 6 inertias at their reference points (rows ω, v), their angular
    velocities (None for a particle) and loads at their reference points, in their
    components."""
    W = [sm.Matrix(w) for w in inertias]
    changed = set()
    for k in reversed(range(len(nodes))):
        nd, p = nodes[k], nodes[k].parent
        axis = _axis(nd)
        if p < 0 or axis is None or omegas[k] is None or omegas[p] is None \
                or not _numbers(list(W[k])):
            continue
        i = axis
        along = [sm.sympify(c) for c in nd.R[i]]       # e_i in the parent's components: Rᵀ e_i
        if not _numbers(along + list(nd.r)):
            continue
        e = [sm.S.Zero] * 3
        e[i] = sm.S.One
        m, mu = W[k][3, 3], first_moment(W[k])[i]
        j = 1 if i == 0 else 0
        lam = W[k][j, j]
        if m == 0 and mu == 0 and lam == 0:
            continue
        child = W[k] - _symmetric_part(m, mu, lam, e, [0, 0, 0])
        parent = W[p] + _symmetric_part(m, mu, lam, along, nd.r)
        rows = nodes[p].rows
        if sum(1 for c in along if c != 0) != 1 and _entries(parent, rows) - _entries(W[p], rows) \
                > _entries(W[k], nd.rows) - _entries(child, nd.rows):
            continue        # a tilted axis fills the parent in more than the child sheds
        W[k], W[p] = child, parent
        changed |= {k, p}
    for k in sorted(changed):
        nd = nodes[k]
        nd.Wg = [[W[k][i, c] for c in range(6)] for i in nd.rows]
        b = _bias(W[k], omegas[k], loads[k])
        nd.bg = [b[i] for i in nd.rows]


def first_moment(W) -> list:
    """h of W = [[I, h×], [-h×, m]]."""
    return [W[2, 4], W[0, 5], W[1, 3]]


def _axis(nd):
    """i: a one-speed node whose subspace is (±e_i; 0) in numbers; else None."""
    if len(nd.speeds) != 1 or nd.R is None:
        return None
    s = {row: sm.sympify(v[0]) for row, v in zip(nd.rows, nd.s)}
    if not _numbers(list(s.values())) or any(s.get(row, 0) != 0 for row in range(3, 6)):
        return None
    turning = [row for row in range(3) if s.get(row, 0) != 0]
    if len(turning) != 1 or abs(s[turning[0]]) != 1:
        return None
    return turning[0]


def _symmetric_part(m, mu, lam, e, r) -> sm.Matrix:
    """The spatial inertia, at a point P, of mass m with first moment mu e and inertia
    lam (1 - e eᵀ) about the point O = P + r (e, r in P's components):
    h_P = m r + mu e, I_P = I_O + m (r·r - r rᵀ) + 2 (r·mu e) - r (mu e)ᵀ - (mu e) rᵀ."""
    e, r = sm.Matrix(e), sm.Matrix(r)
    hO = mu * e
    one = sm.eye(3)
    I = lam * (one - e * e.T) + m * ((r.T * r)[0] * one - r * r.T) \
        + 2 * (r.T * hO)[0] * one - r * hO.T - hO * r.T
    h = skew(list(m * r + hO))
    return sm.Matrix(sm.BlockMatrix([[I, h], [-h, m * one]]))


def _bias(W, omega, loads) -> list:
    """b = (ω × I ω; ω × (ω × h)) + loads, as codegen.formulation.tree forms it."""
    I = W[:3, :3].tolist()
    return add(cross(omega, matvec_kept(I, omega)), loads[:3]) \
        + add(loads[3:], cross(omega, cross_kept(omega, first_moment(W))))


def _entries(W, rows) -> int:
    """The nonzero entries of W's rows: the products of W a."""
    return sum(1 for i in rows for c in range(6) if W[i, c] != 0)


def _numbers(values) -> bool:
    return all(sm.sympify(v).is_number for v in values)
