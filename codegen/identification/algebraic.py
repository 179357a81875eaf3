"""Exact arithmetic in a number field ℚ(α) = ℚ[x]/(m(x)), for states on a closed loop.

A loop's closure has, at rational independent coordinates, dependent coordinates whose
sines and cosines are algebraic, not rational (a four-bar's two circles meet at points
with a square root). ``closure_point`` solves the closure exactly (a lex Gröbner basis in
shape position, then one irreducible factor of its univariate polynomial as m), and
``Algebraic`` numbers evaluate the regressor's program there with no rounding. A row of
such numbers, r = Σ_i r_i α^i with r_i rational, is split into its k rational rows r_i:
for a rational π, r·π = 0 exactly when every r_i·π = 0, because 1, α, …, α^{k−1} are
independent over ℚ. So the rational stack of split rows has the same column dependencies.
"""
from __future__ import annotations

import random
from fractions import Fraction

import mpmath
import sympy as sm

__all__ = ["NumberField", "Algebraic", "closure_point", "split_row"]


def _trim(c):
    while c and c[-1] == 0:
        c.pop()
    return c


def _polymod(a, m):
    """a mod m, coefficient lists lowest degree first (m monic)."""
    a = _trim(list(a))
    k = len(m) - 1
    while len(a) > k:
        lead, shift = a[-1], len(a) - 1 - k
        for i in range(k + 1):
            a[shift + i] -= lead * m[i]
        a.pop()
        _trim(a)
    return a


class NumberField:
    """ℚ[x]/(m(x)), m monic irreducible over ℚ (lowest coefficient first); ``root`` one of
    its roots as an mpmath number, for signs (Coulomb friction's sign(u))."""

    def __init__(self, monic: list, root):
        self.m, self.k, self.root = [Fraction(c) for c in monic], len(monic) - 1, root

    def element(self, coeffs) -> "Algebraic":
        return Algebraic(_polymod([Fraction(c) for c in coeffs], self.m), self)


class Algebraic:
    """An element of a NumberField; +, −, ×, / and integer powers with ints, Fractions
    and each other, exactly."""
    __slots__ = ("c", "field")

    def __init__(self, coeffs, field):
        self.c, self.field = coeffs, field

    def _lift(self, other):
        if isinstance(other, Algebraic):
            return other.c
        if isinstance(other, (int, Fraction)):
            return [Fraction(other)] if other else []
        return None

    def __add__(self, other):
        o = self._lift(other)
        if o is None:
            return NotImplemented
        n = max(len(self.c), len(o))
        s = [(self.c[i] if i < len(self.c) else 0) + (o[i] if i < len(o) else 0)
             for i in range(n)]
        return Algebraic(_trim(s), self.field)

    __radd__ = __add__

    def __neg__(self):
        return Algebraic([-a for a in self.c], self.field)

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        o = self._lift(other)
        if o is None:
            return NotImplemented
        if len(o) <= 1:
            return Algebraic(_trim([a * o[0] for a in self.c]) if o else [], self.field)
        prod = [Fraction(0)] * (len(self.c) + len(o) - 1) if self.c else []
        for i, a in enumerate(self.c):
            if a:
                for j, b in enumerate(o):
                    prod[i + j] += a * b
        return Algebraic(_polymod(prod, self.field.m), self.field)

    __rmul__ = __mul__

    def inverse(self) -> "Algebraic":
        """1/self by the extended Euclidean algorithm over ℚ[x] (m irreducible)."""
        if not self.c:
            raise ZeroDivisionError("division by an algebraic zero")
        r0, r1 = list(self.field.m), list(self.c)
        s0, s1 = [], [Fraction(1)]
        while len(r1) > 1:
            q, r = _divmod(r0, r1)
            r0, r1 = r1, r
            s0, s1 = s1, _trim(_sub(s0, _mul(q, s1)))
        return Algebraic(_polymod([a / r1[0] for a in s1], self.field.m), self.field)

    def __truediv__(self, other):
        if isinstance(other, Algebraic):
            return self * other.inverse()
        return self * (Fraction(1) / Fraction(other))

    def __rtruediv__(self, other):
        return self.inverse() * other

    def __pow__(self, e: int):
        if e < 0:
            return self.inverse() ** -e
        out, base = Algebraic([Fraction(1)], self.field), self
        while e:
            if e & 1:
                out = out * base
            base, e = base * base, e >> 1
        return out

    def value(self):
        """The number at the field's root (mpmath, 50 digits)."""
        with mpmath.workdps(50):
            return sum(a.numerator / mpmath.mpf(a.denominator) * self.field.root ** i
                       for i, a in enumerate(self.c))

    def _sign(self) -> int:
        if not self.c:
            return 0
        v = self.value()
        if mpmath.im(v) != 0 or abs(v) < mpmath.mpf(10) ** -40:
            raise ValueError("the sign of an algebraic number that is not clearly real")
        return 1 if v > 0 else -1

    def __gt__(self, other):
        return (self - other)._sign() > 0

    def __lt__(self, other):
        return (self - other)._sign() < 0

    def __float__(self):
        return float(mpmath.re(self.value()))


def _sub(a, b):
    n = max(len(a), len(b))
    return [(a[i] if i < len(a) else 0) - (b[i] if i < len(b) else 0) for i in range(n)]


def _mul(a, b):
    if not a or not b:
        return []
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def _divmod(a, b):
    """(quotient, remainder) of polynomials over ℚ."""
    a, q = list(a), [Fraction(0)] * max(1, len(a) - len(b) + 1)
    while len(_trim(a)) >= len(b):
        shift, f = len(a) - len(b), a[-1] / b[-1]
        q[shift] = f
        for i, c in enumerate(b):
            a[shift + i] -= f * c
        a.pop()
    return _trim(q), a


def split_row(row: list) -> list:
    """A row of Fractions and Algebraics as rows of Fractions: itself if all are rational,
    else its k coefficient rows (module docstring)."""
    fields = [v.field for v in row if isinstance(v, Algebraic)]
    if not fields:
        return [[Fraction(v) for v in row]]
    k = fields[0].k
    out = [[Fraction(0)] * len(row) for _ in range(k)]
    for j, v in enumerate(row):
        coeffs = v.c if isinstance(v, Algebraic) else ([Fraction(v)] if v else [])
        for i, a in enumerate(coeffs):
            out[i][j] = a
    return out


def _rational(rng):
    return Fraction(rng.randint(-9, 9), rng.randint(1, 9))


def closure_point(polys, independent, dependent, rng: random.Random, bare=(), bare_dep=()):
    """{symbol: Fraction or Algebraic} on the closure polys = 0 (SymPy polynomials in
    each angle's (s, c) symbols, with s² + c² = 1, and in the bare coordinates' own
    symbols): the independent ones at random rational points (the angles by half-angle
    tangents), the dependent ones solved exactly. The solution is written over one
    primitive element z, a random integer combination of the unknowns, so that the lex
    Gröbner basis is [v − g_v(z), m(z)] (the shape lemma); None where it is not (another
    point is then drawn)."""
    values = {}
    for s, c in independent:
        t = _rational(rng)
        values[s], values[c] = 2 * t / (1 + t * t), (1 - t * t) / (1 + t * t)
    for b in bare:
        values[b] = _rational(rng)
    subs = {k: sm.Rational(v.numerator, v.denominator) for k, v in values.items()}
    gens = [v for pair in dependent for v in pair] + list(bare_dep)
    if not gens:
        return values
    z = sm.Dummy("z")
    system = [sm.expand(p.xreplace(subs)) for p in polys]
    system += [s ** 2 + c ** 2 - 1 for s, c in dependent]
    system.append(z - sum(rng.randint(1, 9) * v for v in gens))
    G = list(sm.groebner([e for e in system if e != 0], *gens, z, order="lex",
                         domain=sm.QQ))
    if len(G) != len(gens) + 1 or G[-1].free_symbols != {z}:
        return None
    factors = [f for f, _ in sm.factor_list(G[-1], z)[1] if sm.degree(f, z) > 0]
    factor = sm.Poly(rng.choice(factors), z)
    coeffs = [Fraction(int(sm.Rational(a).p), int(sm.Rational(a).q))
              for a in reversed(factor.all_coeffs())]
    monic = [a / coeffs[-1] for a in coeffs]
    with mpmath.workdps(50):
        roots = mpmath.polyroots([mpmath.mpf(a.numerator) / a.denominator
                                  for a in reversed(monic)], maxsteps=200, extraprec=200)
    real = [r for r in roots if abs(mpmath.im(r)) < 1e-30]
    field = NumberField(monic, mpmath.re(real[0]) if real else roots[0])
    alpha = field.element([0, 1]) if field.k > 1 else Fraction(-monic[0])
    for g, var in zip(G[:-1], gens):
        P = sm.Poly(g, var)
        if P.degree() != 1 or not P.LC().is_Rational:
            return None
        rest = sm.expand(-(g - P.LC() * var) / P.LC())
        if not rest.free_symbols <= {z}:
            return None
        value = Fraction(0)
        for (e,), a in sm.Poly(rest, z).terms():
            value = value + Fraction(int(a.p), int(a.q)) * alpha ** e
        values[var] = value
    return values
