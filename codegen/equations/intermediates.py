"""Named intermediates: symbol = expression, computed once by the generated code. The
formulation defines them, the equations carry them (``EquationsOfMotion.intermediates``) and
the programs read them, so the type lives here, below all three."""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sm

__all__ = ["Intermediate", "define"]


@dataclass(frozen=True)
class Intermediate:
    """symbol = expr, computed once by the generated code; name labels it in C."""
    symbol: sm.Symbol
    expr: sm.Expr
    name: str


def define(intermediates: list, name: str, expr):
    """expr itself if a number or a symbol, else the symbol of a new intermediate named
    name, defined by expr and appended to intermediates."""
    expr = sm.sympify(expr)
    if expr.is_number or expr.is_Symbol:
        return expr
    s = sm.Dummy(name)
    intermediates.append(Intermediate(s, expr, name))
    return s
