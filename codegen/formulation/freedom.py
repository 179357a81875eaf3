"""The freedom check: do run-time constraints leave the mechanism any motion?

The constraints A(q, t) u = B(q, t) leave no motion where A has full column
rank. That is judged on the constraint manifold f(q, t) = 0, not at a
generic point: off the manifold A can have full rank where the mechanism
moves (Bricard's mechanism: 5 rows of rank 4 on the manifold, 5 at a
generic point). So a consistent configuration is looked for first.

The search gives the same answer on every machine. Levenberg–Marquardt runs
in plain Python floats: exact sums (``math.fsum``), a Cholesky solve of the
small damped normal equations, no BLAS whose kernels round differently, from
fixed generic starts (the probe's coordinates, then a Kronecker sequence with
the square roots of primes). It converges to a residual relative to the
size of each constraint's terms and gradient, and the rank is decided with
margins far above round-off:

- a singular value counts as zero below ``RANK_RTOL`` of the largest, or
  below 1e3 sqrt(residual) of it: where constraints meet tangentially
  (redundant rows) a configuration with relative residual e lies about
  sqrt(e) from the manifold, and a singular value that is zero on the
  manifold is about as large there;
- so a mechanism is refused only where A's rank is full by a wide margin
  (the rigid variant of Bricard's: its smallest singular value is 1e-2 of
  the largest, the threshold 1e-5 at most).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sm

from ..symbolic.expressions import numeric_probe

__all__ = ["check_freedom", "consistent_configuration", "RANK_RTOL"]

#: a singular value of A at or below this fraction of the largest is zero
RANK_RTOL = 1e-9
#: a configuration is consistent where every |f_i| is at most this fraction of the
#: size of f_i's terms plus its gradient's (the scale of the constraint)
RESIDUAL_RTOL = 1e-12
_POINTS = 3           # generic points (values of the constants and of t)
_STARTS = 8           # starts of the coordinates at each point
_ITERATIONS = 100     # iterations of one start
_POLISH = 8           # iterations past convergence, while they lower the residual


def check_freedom(A: sm.Matrix, f: list, fq: sm.Matrix, qs: list) -> None:
    """Refuse constraints A u = B, with configuration constraints f(q, t) = 0 among
    them (fq: their Jacobian over qs), that leave no motion: ValueError naming the
    rank and where it was judged. Where no consistent configuration is found, a
    generic one is all there is to judge."""
    f = sm.Matrix(f)
    where = "a consistent configuration"
    found = consistent_configuration(f, fq, qs) if f.rows else (numeric_probe(A), 0.0)
    if found is None:
        found = numeric_probe(A, f), 0.0
        where = "a generic configuration (none consistent found)"
    point, residual = found
    An = np.array(A.xreplace(point).evalf(), dtype=float)
    if not An.size or not np.all(np.isfinite(An)):
        return                        # nothing to judge there: the run time reports it
    s = np.linalg.svd(An, compute_uv=False)
    rtol = max(RANK_RTOL, 1e3 * math.sqrt(residual))
    rank = int(np.sum(s > rtol * s.max())) if s.max() > 0 else 0
    if rank >= A.cols:
        raise ValueError(f"the {A.rows} constraints leave zero degrees of freedom for the "
                         f"{A.cols} speeds (rank {rank} at {where}): the system cannot move")


def consistent_configuration(f: sm.Matrix, fq: sm.Matrix, qs: list):
    """(point, residual): numeric_probe's values with the coordinates moved onto
    f = 0 and the largest relative residual there (see RESIDUAL_RTOL), or None
    when no start reaches it. fq: f's Jacobian over qs."""
    q = [s for s in qs if s in f.free_symbols]
    columns = [qs.index(s) for s in q]
    others = sorted(f.free_symbols - set(q), key=str)
    J = [[fq[i, j] for j in columns] for i in range(f.rows)]
    terms = [sm.Add.make_args(e) for e in f]      # f_i summed exactly from its terms
    compiled = sm.lambdify([q, others], [[a for row in terms for a in row], J], "math")
    for point in range(_POINTS):
        probe = numeric_probe(f, point=point)
        values = [float(probe[s]) for s in others]

        def evaluate(x):
            """(f, J, scale) at coordinates x, or None where not finite."""
            try:
                flat, Jx = compiled(x, values)
                flat, Jx = [float(v) for v in flat], [[float(v) for v in row] for row in Jx]
            except (ArithmeticError, ValueError, TypeError):
                return None
            r, scale, k = [], [], 0
            for row, grad in zip(terms, Jx):
                part, k = flat[k:k + len(row)], k + len(row)
                r.append(math.fsum(part))
                scale.append(math.fsum(abs(v) for v in part) + math.fsum(abs(v) for v in grad))
            if not all(math.isfinite(v) for v in r + scale):
                return None
            return r, Jx, scale
        for start in _starts([float(probe[s]) for s in q]):
            found = _levenberg_marquardt(evaluate, start)
            if found is not None:
                x, residual = found
                return {**probe, **{s: sm.Float(v) for s, v in zip(q, x)}}, residual
    return None


def _starts(first: list) -> list:
    """first, then _STARTS - 1 generic points of [-pi, pi)^n: the Kronecker sequence
    k sqrt(p_i) mod 1 over the primes p_i (sqrt is exact-rounded: the same everywhere)."""
    primes, n = [], 2
    while len(primes) < len(first):
        if all(n % p for p in primes):
            primes.append(n)
        n += 1
    return [first] + [[math.pi * (2.0 * ((k * math.sqrt(p)) % 1.0) - 1.0) for p in primes]
                      for k in range(1, _STARTS)]


def _relative(r: list, scale: list) -> float:
    return max((abs(a) / b if b > 0 else abs(a) for a, b in zip(r, scale)), default=0.0)


def _levenberg_marquardt(evaluate, x: list):
    """(x, residual) with evaluate's f(x) = 0 to RESIDUAL_RTOL, then polished while the
    residual falls, or None. evaluate(x) -> (f, J, scale) or None."""
    now = evaluate(x)
    if now is None:
        return None
    cost, damping, polish = math.fsum(v * v for v in now[0]), 1e-3, 0
    for _ in range(_ITERATIONS):
        converged = _relative(now[0], now[2]) <= RESIDUAL_RTOL
        if converged and polish == _POLISH:
            break
        r, J, _ = now
        n = len(x)
        JtJ = [[math.fsum(row[i] * row[j] for row in J) for j in range(n)] for i in range(n)]
        g = [math.fsum(row[i] * v for row, v in zip(J, r)) for i in range(n)]
        while True:
            step = _cholesky_solve([[JtJ[i][j] + (damping * max(JtJ[i][i], 1e-300) if i == j
                                                  else 0.0) for j in range(n)] for i in range(n)],
                                   [-v for v in g])
            trial = None if step is None else [a + b for a, b in zip(x, step)]
            new = None if trial is None else evaluate(trial)
            if new is not None and math.fsum(v * v for v in new[0]) < cost:
                x, now, cost = trial, new, math.fsum(v * v for v in new[0])
                damping = max(damping / 3.0, 1e-15)
                break
            if converged:                           # polished as far as it goes
                return x, _relative(now[0], now[2])
            damping *= 4.0
            if damping > 1e12:
                return None                         # stuck where f is not zero
        polish += converged
    residual = _relative(now[0], now[2])
    return (x, residual) if residual <= RESIDUAL_RTOL else None


def _cholesky_solve(A: list, b: list):
    """A⁻¹ b for a symmetric positive definite A (lists), or None if a pivot is not > 0."""
    n = len(b)
    L = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = A[i][j] - math.fsum(L[i][k] * L[j][k] for k in range(j))
            if i == j:
                if not s > 0.0:
                    return None
                L[i][i] = math.sqrt(s)
            else:
                L[i][j] = s / L[j][j]
    y = [0.0] * n
    for i in range(n):
        y[i] = (b[i] - math.fsum(L[i][k] * y[k] for k in range(i))) / L[i][i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - math.fsum(L[k][i] * x[k] for k in range(i + 1, n))) / L[i][i]
    return x
