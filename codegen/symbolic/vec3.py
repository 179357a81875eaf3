"""3-vectors and 3 x 3 matrices as lists of SymPy expressions.

The formulation takes every vector in components of one frame, so its dot
and cross products are plain sums of products. ``dot`` skips structural
zeros, so that products of sparse partial velocities stay short.
"""
from __future__ import annotations

import sympy as sm

__all__ = ["add", "cross", "dot", "matvec", "transpose", "matmul", "ZERO3", "nonzero",
           "times_kept", "matvec_kept", "cross_kept"]

#: the zero vector, shared: a vector that is this object is zero without a look at it
ZERO3 = (sm.S.Zero, sm.S.Zero, sm.S.Zero)


def nonzero(v) -> bool:
    """v (a 3-vector, or None for none) is not zero by structure."""
    return v is not None and v is not ZERO3 and any(c != 0 for c in v)


def dot(a, b):
    """a . b, structural zeros skipped."""
    return sm.Add(*[sm.Mul(x, y) for x, y in zip(a, b) if x != 0 and y != 0])


def cross(a, b):
    """a x b."""
    return [a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0]]


def add(a, b):
    """a + b, entry by entry."""
    return [x + y for x, y in zip(a, b)]


def matvec(R, v):
    """R v for R given by rows."""
    return [dot(R[i], v) for i in range(3)]


def transpose(R):
    """Rᵀ of R given by rows."""
    return [[R[j][i] for j in range(3)] for i in range(3)]


def matmul(A, B):
    """A B of matrices given by rows."""
    return [[dot(A[i], [B[k][j] for k in range(3)]) for j in range(3)] for i in range(3)]


def times_kept(c, e):
    """c e, a number times a sum kept as a product: SymPy would distribute it, and a
    joint's ω component (its speed plus its parent's, inline) costs one product, not one
    per term."""
    c = sm.sympify(c)
    if c.is_number and isinstance(e, sm.Add):
        if c.is_extended_negative:      # the CSE would take -1 out and distribute c
            c, e = -c, sm.Add(*[-a for a in e.args])
        return sm.Mul(c, e, evaluate=False)
    return c * e


def matvec_kept(R, v):
    """R v (R by rows), numbers times sums kept (times_kept)."""
    return [sm.Add(*[times_kept(x, y) for x, y in zip(row, v) if x != 0 and y != 0]) for row in R]


def cross_kept(a, b):
    """a × b, b's numbers times a's sums kept (times_kept)."""
    return [times_kept(b[2], a[1]) + times_kept(-b[1], a[2]),
            times_kept(b[0], a[2]) + times_kept(-b[2], a[0]),
            times_kept(b[1], a[0]) + times_kept(-b[0], a[1])]       # a difference would distribute
