"""The column dependencies of an exact rational stack, fast: elimination modulo primes,
the coefficients recovered as rationals, then checked in exact arithmetic.

Columns that are independent modulo a prime are independent over ℚ, so the pivots of a
stack reduced modulo a prime are independent columns; several primes agree on the largest
rank, which is the rank over ℚ unless each prime divides one of the stack's minors. The
coefficients R of the other columns (Y = Y[:, pivots] R) come from their residues
modulo the primes, combined (Chinese remainders) and reconstructed as fractions of
bounded size (Wang's rational reconstruction). Then they are checked over ℚ: random
integer combinations v of the stack's rows must satisfy v[others] = v[pivots] R exactly.
What passes that check is exact; what does not falls back to the row echelon form over
ℚ, which is slower on deep trees (Atlas's 300 columns) but needs no luck.
"""
from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import sympy as sm

__all__ = ["modular_dependencies", "PRIMES", "residues", "rref_mod"]

#: primes below 2³¹: products of two residues fit numpy's int64
PRIMES = []
_p = 2 ** 31
for _ in range(12):
    _p = sm.prevprime(_p)
    PRIMES.append(int(_p))


class _BadPrime(ValueError):
    """A denominator the prime divides."""


def residues(rows, prime: int) -> np.ndarray:
    """The Fractions of rows modulo prime (_BadPrime if it divides a denominator)."""
    out = np.empty((len(rows), len(rows[0])), dtype=np.int64)
    for i, row in enumerate(rows):
        for j, f in enumerate(row):
            d = f.denominator % prime
            if d == 0:
                raise _BadPrime(prime)
            out[i, j] = f.numerator % prime * pow(d, -1, prime) % prime
    return out


def rref_mod(A: np.ndarray, prime: int):
    """(pivots, the reduced rows) of A modulo prime."""
    A = A.copy()
    pivots, r = [], 0
    for c in range(A.shape[1]):
        if r == len(A):
            break
        nz = np.nonzero(A[r:, c])[0]
        if not len(nz):
            continue
        k = r + nz[0]
        A[[r, k]] = A[[k, r]]
        A[r] = A[r] * pow(int(A[r, c]), -1, prime) % prime
        col = A[:, c].copy()
        col[r] = 0
        A = (A - (col[:, None] * A[r][None, :]) % prime) % prime
        pivots.append(c)
        r += 1
    return pivots, A[:r]


def _rational(a: int, m: int):
    """The fraction n/d with n ≡ a d (mod m), |n|, d < sqrt(m/2), or None."""
    bound = int((m // 2) ** 0.5)
    r0, r1, t0, t1 = m, a % m, 0, 1
    while r1 > bound:
        q = r0 // r1
        r0, r1, t0, t1 = r1, r0 - q * r1, t1, t0 - q * t1
    if t1 == 0 or abs(t1) > bound:
        return None
    return Fraction(r1, t1)


def _holds(rows, pivots, R, rng) -> bool:
    """v[others] = v[pivots] R over ℚ for two random integer combinations v of the rows."""
    p = len(rows[0])
    others = [c for c in range(p) if c not in set(pivots)]
    for _ in range(2):
        c = [rng.randint(-1000, 1000) for _ in rows]
        v = [sum((ci * row[j] for ci, row in zip(c, rows)), Fraction(0)) for j in range(p)]
        for j in others:
            if v[j] != sum((v[pc] * R[i][j] for i, pc in enumerate(pivots)), Fraction(0)):
                return False
    return True


def modular_dependencies(rows: list, seed: int = 0):
    """(pivots, R) of rows (lists of Fractions), R as rows of Fractions, or None where the
    primes do not give checked coefficients (the caller then reduces over ℚ)."""
    rng = random.Random(seed)
    found = []
    for prime in PRIMES:
        try:
            found.append((prime, *rref_mod(residues(rows, prime), prime)))
        except _BadPrime:
            continue
        if len(found) < 2:
            continue
        rank = max(len(piv) for _, piv, _ in found)
        same = [(pr, piv, red) for pr, piv, red in found if len(piv) == rank]
        pivots = min(piv for _, piv, _ in same)
        same = [(pr, red) for pr, piv, red in same if piv == pivots]
        modulus, combined = 1, None
        for pr, red in same:
            red = red.astype(object)
            if combined is None:
                combined = red % pr
            else:     # Chinese remainders: x ≡ combined (modulus), x ≡ red (pr)
                inv = pow(modulus, -1, pr)
                combined = combined + modulus * (((red - combined) % pr) * inv % pr)
            modulus *= pr
        R = [[_rational(int(a), modulus) for a in row] for row in combined]
        if any(x is None for row in R for x in row):
            continue
        if _holds(rows, pivots, R, rng):
            return pivots, R
    return None
