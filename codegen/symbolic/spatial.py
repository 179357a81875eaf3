"""Spatial algebra on SymPy matrices: the cross-product matrix and the 6 x 6 transform of
spatial vectors (angular; linear) between frames."""
from __future__ import annotations

import sympy as sm

from .vec3 import add, cross, dot

__all__ = ["skew", "spatial_transform", "mcross", "fcross", "add6"]


def skew(r) -> sm.Matrix:
    """r× as a matrix: skew(r) v = r × v."""
    return sm.Matrix([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])


def spatial_transform(R, r) -> sm.Matrix:
    """X = [[R, 0], [-R r×, R]]: (ω; v) of a body from its parent's, v_k = R (v_p + ω_p × r)."""
    R = R.tolist() if isinstance(R, sm.MatrixBase) else [list(row) for row in R]
    rx = [[sm.S.Zero, -r[2], r[1]], [r[2], sm.S.Zero, -r[0]], [-r[1], r[0], sm.S.Zero]]
    if all(R[i][j] == (sm.S.One if i == j else sm.S.Zero) for i in range(3) for j in range(3)):
        B = [[-e for e in row] for row in rx]                   # particles: R = 1
    else:         # products of lists: SymPy's matrix product costs ms a call (n = 400: 1 s)
        B = [[dot([-e for e in R[i]], [rx[k][j] for k in range(3)]) for j in range(3)]
             for i in range(3)]
    zero = [sm.S.Zero] * 3
    return sm.Matrix([list(R[i]) + zero for i in range(3)] + [B[i] + list(R[i]) for i in range(3)])


def mcross(m, n):
    """Motion cross product m × n (spatial motions (ω; v))."""
    return cross(m[:3], n[:3]) + add(cross(m[:3], n[3:]), cross(m[3:], n[:3]))


def fcross(m, f):
    """Force cross product m ×* f (f = (moment; force))."""
    return add(cross(m[:3], f[:3]), cross(m[3:], f[3:])) + cross(m[:3], f[3:])


def add6(*vs):
    return [sm.Add(*[v[i] for v in vs]) for i in range(6)]
