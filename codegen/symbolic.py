"""Symbolic helpers shared by the formulation's stages.

``vanishes`` is the one numeric-probe test "these expressions are zero":
checks that hold or fail for almost all values (a stored velocity that is
its position's derivative, a transport, a symmetric matrix) are decided at
generic points instead of by simplification.
"""
from __future__ import annotations

import sympy as sm

from .kinematics import generic_values

__all__ = ["vanishes"]


def vanishes(exprs, numeric=generic_values, tol: float = 1e-9) -> bool:
    """All of exprs are zero at two generic points (|value| <= tol).

    numeric(exprs, point) gives their values at generic point 0 or 1: by
    default numeric_probe's values for every symbol; Motions.numeric also
    evaluates the intermediates the expressions are written over."""
    exprs = [sm.sympify(e) for e in exprs if e != 0]
    if not exprs:
        return True
    for k in range(2):
        for v in numeric(exprs, k):
            v = sm.sympify(v)
            if not v.is_number or abs(complex(v)) > tol:
                return False
    return True
