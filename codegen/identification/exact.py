"""The base parameters, exact: the regressor's rank and its column dependencies from
rational arithmetic at random rational states, with no tolerance.

Y's entries are rational functions of the states' sines and cosines, the speeds, the
accelerations and the model's numbers. At a state whose sines and cosines are rational
(s = 2t/(1+t²), c = (1−t²)/(1+t²) for a rational t) and with the numbers taken as the
exact decimals they were written as, every entry is an exact rational. Regressors stacked
from enough such states have the rank of Y as a function (its structural rank) unless the
states were picked on a proper algebraic subset, which random states miss with probability
one; more states never lower it, and a further batch is checked not to raise it. The
pivot columns (the base parameters' leading ones, the earliest independent columns) and
each other column as an exact combination of them come from elimination modulo primes
with the combinations checked over ℚ (codegen.identification.modular), or else from the
reduced row echelon form over ℚ.
"""
from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import sympy as sm
from sympy.polys.domains import QQ
from sympy.polys.matrices import DomainMatrix

from .algebraic import split_row
from .modular import PRIMES, modular_dependencies, residues, rref_mod

__all__ = ["RationalProgram", "exact_dependencies"]


def exact_number(value) -> Fraction:
    """A float as the decimal it prints as (0.1575 -> 63/400), a Rational as itself."""
    if isinstance(value, (sm.Rational, int)):
        return Fraction(int(sm.Rational(value).p), int(sm.Rational(value).q))
    return Fraction(repr(float(value)))


class RationalProgram:
    """A program (codegen.programs.Program) of Y evaluated in exact arithmetic: sin(q) and
    cos(q) of each coordinate q become inputs of their own, numbers Fractions, and the
    program is compiled once to Python code over Fractions."""

    def __init__(self, program, q_symbols):
        self.q = list(q_symbols)
        trig, self.sines = {}, []
        for k, q in enumerate(self.q):
            s, c = sm.Dummy(f"s{k}"), sm.Dummy(f"c{k}")
            trig[sm.sin(q)], trig[sm.cos(q)] = s, c
            self.sines.append((s, c))
        names, lines = {}, []
        read = {i.name for i in program.inputs}
        self._inputs = {o: n for o, n in program.names.items() if n in read}
        for o, n in self._inputs.items():
            names[o] = n
        for k, (s, c) in enumerate(self.sines):
            names[s], names[c] = f"s_{k}", f"c_{k}"
        code = _Code(names)
        for sym, expr in program.temporaries:
            lines.append(f"    {code.local(sym)} = {code(expr.xreplace(trig))}")
        outs = [code(e.xreplace(trig)) for _, exprs in program.outputs for e in exprs]
        lines.append(f"    return [{', '.join(outs)}]")
        args = (list(self._inputs.values()) + [f"s_{k}" for k in range(len(self.q))]
                + [f"c_{k}" for k in range(len(self.q))])
        namespace = {"F": Fraction, "sgn": lambda v: (v > 0) - (v < 0)}
        exec(f"def f({', '.join(args)}):\n" + "\n".join(lines), namespace)
        self._f = namespace["f"]
        self._arrays = {o: (i.array, i.index) for i in program.inputs
                        for o, n in self._inputs.items() if n == i.name}

    def __call__(self, arrays: dict, angles: list) -> list:
        """Y's entries at arrays {"x": [...], "ud": [...]} of Fractions, each coordinate's
        (sin, cos) given by angles [(s, c)] (rational, s² + c² = 1)."""
        args = [arrays[a][i] for a, i in (self._arrays[o] for o in self._inputs)]
        args += [s for s, _ in angles] + [c for _, c in angles]
        return self._f(*args)


class _Code:
    """SymPy expressions as Python code over Fractions; anything but +, ×, integer
    powers, rationals and names is refused (it has no exact rational value)."""

    def __init__(self, names):
        self.names = dict(names)

    def local(self, sym):
        return self.names.setdefault(sym, f"t{len(self.names)}")

    def __call__(self, e) -> str:
        if e in self.names:
            return self.names[e]
        if e.is_Integer:
            return f"{int(e)}"
        if e.is_Rational:
            return f"F({e.p}, {e.q})"
        if e.is_Float:
            x = exact_number(e)
            return f"F({x.numerator}, {x.denominator})"
        if e.is_Add:
            return "(" + " + ".join(self(a) for a in e.args) + ")"
        if e.is_Mul:
            return "(" + " * ".join(self(a) for a in e.args) + ")"
        if isinstance(e, sm.sign):
            return f"sgn({self(e.args[0])})"
        if e.is_Pow and e.exp.is_Integer:
            base = self(e.base)
            return f"({base} ** {int(e.exp)})" if e.exp > 0 else f"(F(1) / {base} ** {-int(e.exp)})"
        raise ValueError(f"{e} has no exact rational value at rational states (the exact "
                         f"base parameters need sines and cosines of the coordinates alone)")


def random_point(rng: random.Random, nx: int, nq: int, nu: int):
    """(arrays, angles): random small rationals for x and u', and each coordinate's
    rational (sin, cos)."""
    def r():
        return Fraction(rng.randint(-9, 9), rng.randint(1, 9))
    angles = []
    for _ in range(nq):
        t = r()
        angles.append((2 * t / (1 + t * t), (1 - t * t) / (1 + t * t)))
    return {"x": [r() for _ in range(nx)], "ud": [r() for _ in range(nu)]}, angles


def exact_dependencies(evaluate, nx: int, n: int, p: int, nq: int, seed: int = 0,
                       point=None):
    """(pivots, R, samples, spread): the pivot columns of Y, R (rank x p, Fractions) with
    Y = Y[:, pivots] R at every state, the states used, and the ratio of the stack's
    rank-th singular value to its first in floating point (a check of the model's
    numbers: far below 1 means dependencies broken only by rounding, see
    docs/identification.md). evaluate(arrays, angles) gives Y's n·p entries (row-major).
    States are added in batches until a batch leaves the rank where it was. point(rng):
    a random exact state (arrays, angles), or None to draw again (default: rational,
    random_point); a state on a closed loop has algebraic entries, and each row of Y
    is split into rational rows (codegen.identification.algebraic.split_row)."""
    if point is None:
        def point(r):
            return random_point(r, nx, nq, n)
    rng = random.Random(seed)
    batch = max(2, -(-p // max(n, 1)))
    rows, floats, samples, rank = [], [], 0, -1
    while True:
        for _ in range(batch):
            Y = _draw(evaluate, point, rng)
            for j in range(n):
                for row in split_row(Y[j * p:(j + 1) * p]):
                    rows.append(row)
                    floats.append([float(v) for v in row])
        samples += batch
        # the rank modulo a prime, for the batches: a lower bound of the rank over ℚ
        found = len(rref_mod(_mod(rows, PRIMES[0]), PRIMES[0])[0])
        if found == rank:
            break
        rank = found
    exact = modular_dependencies(rows, seed)
    pivots, R = exact if exact is not None else rref_pivots(rows, p)
    s = np.linalg.svd(np.array(floats)[:, pivots], compute_uv=False) if pivots else [1.0]
    return pivots, R, samples, float(s[-1] / s[0])


def _draw(evaluate, point, rng, tries: int = 20) -> list:
    """Y at a random exact state; a state where Y is not defined (a dependent-speed solve
    singular there: a division by zero) or no state at all is drawn again."""
    for _ in range(tries):
        drawn = point(rng)
        if drawn is not None:
            try:
                return evaluate(*drawn)
            except ZeroDivisionError:
                pass
    raise NotImplementedError(f"no exact state found in {tries} draws where the regressor "
                              f"is defined (on a closed loop: the closure's equations at "
                              f"those points were not in shape position)")


def _mod(rows, prime):
    """The rows modulo prime (rows whose denominators it divides dropped)."""
    kept = [r for r in rows if all(f.denominator % prime for f in r)]
    return residues(kept, prime)


def rref_pivots(rows: list, p: int):
    """(pivots, the rref's nonzero rows as lists of Fractions) of a stack over ℚ."""
    rows = [[QQ(f.numerator, f.denominator) for f in r] for r in rows]
    M = DomainMatrix(rows, (len(rows), p), QQ)
    R, pivots = M.rref()
    dense = R.to_Matrix()
    return list(pivots), [[Fraction(int(x.p), int(x.q)) for x in dense.row(i)]
                          for i in range(len(pivots))]
