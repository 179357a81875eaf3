"""The constraint manifold of a compiled model with run-time constraints, at one state.

The states x = [q, u] of such a model are consistent when its residuals
res(x) = [f(q, t); A(q, t) u - B(q, t)] vanish. Their first-order neighbours
are x + T dy with T an orthonormal basis of the null space of d res/dx: the
tangent space, of dimension nx - rank(d res/dx). The compiled equations solve
A u = B by the SVD at run time and are not differentiated analytically, so
here d res/dx and d x'/dx along T are central differences (step eps**(1/3)
scaled by the state, about 1e-10 relative error on smooth models).
"""
from __future__ import annotations

import numpy as np

__all__ = ["tangent_basis", "manifold_linearization", "RANK_RTOL"]

#: singular values of d res/dx below this times the largest count as zero: the
#: central differences are good to about 1e-10, far below it
RANK_RTOL = 1e-7


def _steps(x: np.ndarray) -> np.ndarray:
    return np.finfo(float).eps ** (1 / 3) * np.maximum(1.0, np.abs(x))


def _central(f, x: np.ndarray, directions: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Columns (f(x + h d) - f(x - h d)) / 2h for each column d of directions."""
    cols = [(f(x + h * d) - f(x - h * d)) / (2 * h) for d, h in zip(directions.T, steps)]
    return np.array(cols).T


def tangent_basis(residuals, x: np.ndarray) -> tuple:
    """(T, singular values of d res/dx): T (nx x m) orthonormal columns spanning
    the consistent first-order perturbations of x."""
    x = np.asarray(x, float)
    Jc = _central(residuals, x, np.eye(len(x)), _steps(x))
    _, s, Vt = np.linalg.svd(Jc)
    rank = int(np.sum(s > RANK_RTOL * s[0])) if len(s) and s[0] > 0 else 0
    return Vt[rank:].T.copy(), s


def manifold_linearization(rhs, residuals, x, nr: int, r: np.ndarray, rhs_r) -> tuple:
    """(A, B, T) of the dynamics restricted to the constraint manifold at x.

    A = J T Tᵀ, with J = d x'/dx taken along the tangent only: for a
    consistent perturbation dx (dx = T Tᵀ dx) the rate changes by A dx to
    first order, as central differences between consistent states give;
    across the constraints A is zero. B = d x'/dr. At an equilibrium the
    minimal linear model in the coordinates dy of x + T dy is
    dy' = Tᵀ A T dy + Tᵀ B dr, whose eigenvalues are A's nonzero ones (away
    from one the rates' normal part, of the size of x' times the manifold's
    curvature, is in A but not in that minimal model).
    rhs(x) and rhs_r(r) evaluate x' at x with the inputs held, and at the
    inputs r with x held."""
    x = np.asarray(x, float)
    T, _ = tangent_basis(residuals, x)
    JT = _central(rhs, x, T, np.full(T.shape[1], _steps(x).max()))
    A = JT @ T.T
    if nr:
        B = _central(rhs_r, r, np.eye(nr), _steps(r))
    else:
        B = np.zeros((len(x), 0))
    return A, B, T
