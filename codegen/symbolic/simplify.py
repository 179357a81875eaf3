"""Exact, cheap simplifications: sin² + cos² pairs of one sum summed (``pythagoras``), and the
short form of a product of partial velocities users compare the mass matrix with (``tidy``)."""
from __future__ import annotations

import sympy as sm

from .counting import operation_count

__all__ = ["pythagoras", "tidy"]


def pythagoras(expr, memo: dict):
    """expr with each pair a*sin(x)**2 + a*cos(x)**2 of one sum replaced by a.

    Exact and without expansion: a body's partial velocity written in a
    rotating frame gives l**2*(sin(q)**2 + cos(q)**2) on the diagonal of M,
    which would otherwise cost five operations per entry at run time."""
    out = memo.get(expr)
    if out is not None:
        return out
    out = expr
    if expr.args and not expr.is_Atom:
        args = [pythagoras(a, memo) for a in expr.args]
        if expr.is_Add:
            args = _pair_squares(args)
        if args != list(expr.args):
            out = expr.func(*args)
    memo[expr] = out
    return out


def _pair_squares(terms: list) -> list:
    """terms with each pair rest*sin(x)**k + rest*cos(x)**2*... summed: for every
    factor sin(x)**k or cos(x)**k (k >= 2) of a term, its rest is the term
    divided by sin(x)**2 (cos(x)**2); a sin and a cos term with equal rests
    add up to the rest."""
    keys, index = [], {}
    for k, term in enumerate(terms):
        factors = sm.Mul.make_args(term)
        own = []
        for i, f in enumerate(factors):
            if f.is_Pow and f.exp.is_Integer and f.exp >= 2 and isinstance(f.base, (sm.sin, sm.cos)):
                rest = sm.Mul(*(factors[:i] + (f.base**(f.exp - 2),) + factors[i + 1:]))
                key = (type(f.base), f.base.args[0], rest)
                own.append(key)
                index.setdefault(key, []).append(k)
        keys.append(own)
    done, replaced = set(), {}
    for k, own in enumerate(keys):
        for kind, x, rest in own:
            if k in done or kind is not sm.sin:
                continue
            partner = next((j for j in index.get((sm.cos, x, rest), ()) if j != k and j not in done),
                           None)
            if partner is not None:
                done |= {k, partner}
                replaced[k] = rest
    return [replaced.get(k, term) for k, term in enumerate(terms) if k not in done or k in replaced]


#: partial-velocity products up to this many operations are expanded by _tidy
EXPAND_LIMIT = 80


def tidy(e, memo):
    """A short product of partial velocities expanded, its sin**2 + cos**2 pairs
    summed (they come from rotating components; Kane's dot products of unit
    vectors avoid them): the mass matrix in the short form users compare with.
    Longer products are left as they are (expanding them costs more than it saves)."""
    if operation_count([e]) <= EXPAND_LIMIT:
        e = e.expand(power_exp=False, power_base=False, log=False)
    return pythagoras(e, memo)
