"""Symbolic helpers shared by the formulation's stages.

- ``memo_xreplace`` and ``dag_atoms`` walk an expression DAG once per
  shared node (SymPy's own walks visit a shared node once per occurrence).
- ``numeric_probe`` and ``generic_values``: deterministic, generic numbers
  for the symbols of expressions. Checks that hold or fail for almost all
  values (a stored velocity that is its position's derivative, a transport,
  a symmetric or singular matrix) are decided at such points instead of by
  simplification: ``vanishes`` is the one test "these expressions are zero",
  ``probe_matrix`` gives a matrix and a rank tolerance there.
- ``LazyMatrix``: a matrix formed on first use (the formulation's mass
  matrix, which the build of a tree of bodies never reads).
"""
from __future__ import annotations

import cmath

import numpy as np
import sympy as sm
from sympy.core.function import AppliedUndef

__all__ = ["memo_xreplace", "dag_atoms", "numeric_probe", "generic_values", "vanishes",
           "probe_matrix", "evaluate", "as_number", "VANISH_TOL", "LazyMatrix"]

#: |value| at or below this (times the size of its terms, for relative tests) is zero
VANISH_TOL = 1e-9


def memo_xreplace(expr, memo):
    """xreplace that remembers every node it rebuilt, across calls sharing memo."""
    hit = memo.get(expr)
    if hit is not None:
        return hit
    if not expr.args or expr.is_Atom:
        out = expr
    else:
        args = [memo_xreplace(a, memo) for a in expr.args]
        out = expr if all(a is b for a, b in zip(args, expr.args)) else expr.func(*args)
    memo[expr] = out
    return out


def dag_atoms(exprs, kinds, skip=()) -> set:
    """The subexpressions of exprs that are instances of kinds, each shared node
    visited once (``atoms`` walks a shared subexpression once per occurrence);
    nodes of the types in skip are neither taken nor entered."""
    seen, found = set(), set()
    stack = [sm.sympify(e) for e in exprs]
    while stack:
        e = stack.pop()
        if e in seen or isinstance(e, skip):
            continue
        seen.add(e)
        if isinstance(e, kinds):
            found.add(e)
        stack.extend(a for a in e.args if a not in seen)
    return found


_FUNCTIONS = {sm.sin: cmath.sin, sm.cos: cmath.cos, sm.tan: cmath.tan, sm.exp: cmath.exp,
              sm.log: cmath.log, sm.sinh: cmath.sinh, sm.cosh: cmath.cosh,
              sm.tanh: cmath.tanh, sm.asin: cmath.asin, sm.acos: cmath.acos,
              sm.atan: cmath.atan}
_LEAVES = (sm.Symbol, AppliedUndef, sm.Derivative)


def evaluate(expr, memo: dict, leaf) -> complex:
    """expr as a Python complex, each shared node evaluated once (memo: node -> value,
    kept across calls); leaf(atom) gives a symbol's, a function of time's or a
    derivative's value. SymPy's own arithmetic on Floats costs a hundred times more:
    the relative kinematics check every composed velocity at two points this way.
    Nodes other than sums, products, powers and the elementary functions are
    evaluated by SymPy with their leaves' values substituted."""
    stack = [expr]
    while stack:
        e = stack[-1]
        if e in memo:
            stack.pop()
            continue
        if isinstance(e, _LEAVES):
            memo[e] = complex(leaf(e))
            stack.pop()
            continue
        if not e.args:
            memo[e] = complex(e)
            stack.pop()
            continue
        known = e.is_Add or e.is_Mul or e.is_Pow or type(e) in _FUNCTIONS
        if known:
            pending = [a for a in e.args if a not in memo]
            if pending:
                stack.extend(pending)
                continue
        stack.pop()
        if not known:
            values = {a: sm.sympify(evaluate(a, memo, leaf)) for a in dag_atoms([e], _LEAVES)}
            memo[e] = complex(e.xreplace(values).evalf())
            continue
        vals = [memo[a] for a in e.args]
        if e.is_Add:
            v = sum(vals)
        elif e.is_Mul:
            v = vals[0]
            for x in vals[1:]:
                v *= x
        else:
            try:
                v = _power(vals[0], e.exp, vals[1]) if e.is_Pow else _FUNCTIONS[type(e)](*vals)
            except (ValueError, ZeroDivisionError, OverflowError):   # log(0), 0 ** -0.5
                v = complex(float("nan"), 0.0)
        memo[e] = v
    return memo[expr]


def _power(base: complex, exp, value: complex) -> complex:
    """base ** exp; an integer exponent by products (exact signs, no branch cut)."""
    if exp.is_Integer:
        if base == 0 and exp < 0:
            return complex(float("inf"), 0.0)
        return base ** int(exp)
    if base == 0:
        return 0j
    if base.imag == 0 and base.real > 0:
        return complex(base.real ** value) if value.imag == 0 else base ** value
    return base ** value


def numeric_probe(*exprs, point: int = 0) -> dict:
    """Deterministic, generic numbers for every symbol and function of time in exprs.

    For checks that hold or fail for almost all values (singular, symmetric,
    rank): a probe rules out quickly what an exact check would grind through.
    point: which of several such points (0, 1, ...), for a check at more than one.
    """
    atoms = set()
    for e in exprs:
        atoms |= e.free_symbols | set(e.atoms(AppliedUndef))
    return {s: sm.Float(0.3 + 0.0713 * k + 0.113 * point)
            for k, s in enumerate(sorted(atoms, key=str))}


def generic_values(exprs, point: int = 0) -> list:
    """exprs at numeric_probe's generic point (SymPy numbers)."""
    vals = numeric_probe(*exprs, point=point)
    return [e.xreplace(vals).evalf() for e in exprs]


def vanishes(exprs, numeric=generic_values, tol: float = VANISH_TOL,
             relative: bool = False) -> bool:
    """All of exprs are zero at two generic points: |value| <= tol, or with relative
    |value| <= tol (1 + the sum of its terms' sizes), the test for a difference of
    large terms, whose round-off grows with them.

    numeric(exprs, point) gives their values at generic point 0 or 1: by
    default numeric_probe's values for every symbol; Motions.numeric also
    evaluates the intermediates the expressions are written over. A value
    that is not a finite number does not vanish."""
    exprs = [sm.sympify(e) for e in exprs if e != 0]
    if not exprs:
        return True
    terms = [sm.Add.make_args(e) if relative else (e,) for e in exprs]
    flat = [a for group in terms for a in group]
    for k in range(2):
        values = iter(numeric(flat, k))
        for group in terms:
            parts = [as_number(next(values)) for _ in group]
            if None in parts:
                return False
            scale = 1.0 + sum(abs(v) for v in parts) if relative else 1.0
            if not abs(sum(parts)) <= tol * scale:      # nan: not zero
                return False
    return True


def as_number(value):
    """value (a Python or a SymPy number) as a complex, None if it is not a number."""
    if isinstance(value, (int, float, complex)):
        return complex(value)
    value = sm.sympify(value)
    if not value.is_number:
        return None
    try:
        return complex(value)
    except TypeError:           # zoo and the like
        return None


def probe_matrix(K: sm.Matrix, point: int = 0):
    """(K at numeric_probe's point as floats, a tolerance for its rank), or None where
    an entry is not a finite number there. The tolerance is 1e-10 times the size of
    the terms, not of their sums (sin**2 + cos**2 - 1 is zero) and the rows, so
    that an exact zero that round-off makes 1e-16 is never a rank."""
    probe = numeric_probe(K, point=point)
    try:
        Kn = np.array(K.xreplace(probe).evalf(), dtype=float)
        scale = max((abs(float(a.xreplace(probe).evalf())) for e in K
                     for a in sm.Add.make_args(e)), default=0.0)
    except TypeError:
        return None
    if not np.all(np.isfinite(Kn)):
        return None
    return Kn, 1e-10 * max(scale, 1e-300) * max(K.rows, 1)


class LazyMatrix:
    """A SymPy matrix formed by form() on first use, then read like the matrix itself
    (indexing, iteration, its attributes and methods). The mass matrix of a large tree
    is n² expressions that cost far more to form than the model's build, which computes
    M by the composite-rigid-body algorithm (codegen.algorithms.crba) and never reads them."""

    def __init__(self, form, shape: tuple, symbols=None):
        """symbols: a superset of the matrix's free symbols, known without forming it."""
        self._form, self.shape, self._value = form, tuple(shape), None
        self.symbols = symbols

    @property
    def free_symbols(self) -> set:
        return set(self.symbols) if self.symbols is not None and not self.formed \
            else self.value.free_symbols

    @property
    def formed(self) -> bool:
        return self._value is not None

    @property
    def value(self) -> sm.Matrix:
        if self._value is None:
            self._value, self._form = self._form(), None
        return self._value

    @property
    def rows(self) -> int:
        return self.shape[0]

    @property
    def cols(self) -> int:
        return self.shape[1]

    def xreplace(self, rule) -> "LazyMatrix":
        """Lazily too: the replaced matrix is formed when it is read."""
        return LazyMatrix(lambda: self.value.xreplace(rule), self.shape,
                          None if self.symbols is None else
                          set().union(*[sm.sympify(e).xreplace(rule).free_symbols
                                        for e in self.symbols]))

    def __getitem__(self, key):
        return self.value[key]

    def __iter__(self):
        return iter(self.value)

    def __len__(self) -> int:
        return self.shape[0] * self.shape[1]

    def __eq__(self, other):
        return self.value == (other.value if isinstance(other, LazyMatrix) else other)

    __hash__ = None

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_form", "_value"):
            raise AttributeError(name)
        return getattr(self.value, name)

    def _sympy_(self):
        return self.value

    def __array__(self, dtype=None, copy=None):     # sm.Matrix(lazy), np.array(lazy)
        return np.array(self.value.tolist(), dtype=dtype or object)

    def __repr__(self) -> str:
        return repr(self.value)
