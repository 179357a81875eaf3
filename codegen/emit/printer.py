"""The C printer: SymPy's C99 printer with a program's C names for its inputs, integer powers
as products (never ``pow``) and sines and cosines read from their pairs."""
from __future__ import annotations

import re

import sympy as sm
from sympy.printing.c import C99CodePrinter

__all__ = ["CPrinter", "IDENTIFIER", "shared_coefficients"]


class CPrinter(C99CodePrinter):
    """C99 with the program's C names for its inputs and integer powers as products."""

    _MAX_UNROLL = 4

    def __init__(self, names, scratch=None):
        # order="none": the canonical term order costs a third of the printing;
        # no math macros: M_PI and the like are POSIX, not C99 (the standalone C is strict)
        super().__init__({"full_prec": False, "order": "none", "math_macros": {}})
        self._names = names
        self.trig = {}        # argument -> k: sin, cos of it are cg_s<k>, cg_c<k>
        self.scratch = scratch or {}   # (k, "s" or "c") -> its slot w[i] (a parted function)

    def trig_value(self, k, kind):
        """The C name of the sine ("s") or cosine ("c") of the k-th argument."""
        return self.scratch.get((k, kind), f"cg_{kind}{k}")

    def expression(self, expr) -> str:
        """expr in C: the printer's own dispatch, without doprint's per-call set-up
        (assignments, unsupported-function bookkeeping), a third of the cost."""
        return self._print(expr)

    def _print_sin(self, expr):
        return self._trig_name(expr, "s") or super()._print_Function(expr)

    def _print_cos(self, expr):
        return self._trig_name(expr, "c") or super()._print_Function(expr)

    def _trig_name(self, expr, kind):
        k = self.trig.get(expr.args[0])
        return None if k is None else self.trig_value(k, kind)

    def _print_Symbol(self, expr):
        name = self._names.get(expr)
        return name if name is not None else super()._print_Symbol(expr)

    _print_Dummy = _print_Symbol

    def _print_NumberSymbol(self, expr):
        return repr(float(expr))             # pi, E: the double nearest, inline

    def _print_Function(self, expr):
        name = self._names.get(expr)
        return name if name is not None else super()._print_Function(expr)

    def _print_Pack(self, expr):
        return f"(cg_v2){{{self._print(expr.args[0])}, {self._print(expr.args[1])}}}"

    def _print_Lane(self, expr):
        return f"{self._print(expr.args[0])}[{int(expr.args[1])}]"

    def _print_Derivative(self, expr):
        name = self._names.get(expr)
        if name is None:
            raise ValueError(f"{expr} is neither a state nor a specified input")
        return name

    def _print_Add(self, expr):
        grouped = shared_coefficients(expr)
        return super()._print_Add(grouped) if grouped.is_Add else self._print(grouped)

    def _print_Pow(self, expr):
        b, e = expr.base, expr.exp
        if e.is_Integer and e != 0:
            n = abs(int(e))
            if n == 1 and not b.is_Symbol:     # 1/x of a compound x (M's guarded pivot: 1/fmax(0, d))
                return f"1.0/{self.parenthesize(b, 1000)}"
            if b.is_Symbol and n <= self._MAX_UNROLL:
                prod = "*".join([self._print(b)] * n)
            elif n == 2:
                prod = f"cg_sq({self._print(b)})"
            elif n == 3:
                prod = f"cg_cube({self._print(b)})"
            else:
                return f"cg_powi({self._print(b)}, {int(e)})"
            if e < 0:
                return f"1.0/({prod})" if n > 1 else f"1.0/{self.parenthesize(b, 1000)}"
            return f"({prod})" if n > 1 and b.is_Symbol else prod
        if e == sm.S.Half:
            return f"sqrt({self._print(b)})"
        if e == -sm.S.Half:
            return f"1.0/sqrt({self._print(b)})"
        return f"pow({self._print(b)}, {self._print(e)})"


IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def shared_coefficients(expr: sm.Add) -> sm.Expr:
    """expr with each number that several of its terms share taken out once, unevaluated:
    c a - c b + d -> c (a - b) + d, one multiplication fewer per term. SymPy distributes a
    number over a sum, so its expressions come this way (0.35 (t + 0.3) - 0.35 t'), and C
    may not factor it (not associative in floating point). A number alone is a term of its
    own, never a factor (0.5 a + 0.5 b + 0.5 -> 0.5 (a + b) + 0.5)."""
    keys, groups = [], {}
    for term in expr.args:
        c, rest = term.as_coeff_Mul()
        key = abs(c) if c.is_Number and abs(c) != 1 and rest != 1 else None
        keys.append((key, c, rest))
        if key is not None:
            groups.setdefault(key, []).append((c, rest))
    if all(len(g) < 2 for g in groups.values()):
        return expr
    terms, done = [], set()
    for term, (key, c, rest) in zip(expr.args, keys):
        if key is None or len(groups[key]) < 2:
            terms.append(term)
        elif key not in done:
            done.add(key)
            group = groups[key]
            sign = -1 if all(c < 0 for c, _ in group) else 1
            inner = sm.Add(*[rest if (c > 0) == (sign > 0) else -rest for c, rest in group],
                           evaluate=False)
            terms.append(sm.Mul(sign * key, inner, evaluate=False))
    return sm.Add(*terms, evaluate=False) if len(terms) > 1 else terms[0]
