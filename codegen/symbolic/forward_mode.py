"""Forward-mode differentiation over SymPy expression DAGs.

Each distinct subexpression is visited once: its value (at a point, or the
expression itself) and its gradient, a sparse map direction -> expression,
formed from its arguments'. Symbolic differentiation instead rebuilds every
shared subexpression once per variable; on the equations of multibody
systems, which share most of their subexpressions, that is the difference
between seconds and minutes.

Two users: the linearization at an operating point (codegen.formulation.linearize, the
gradients over [q, u, u', r] evaluated at the point) and the generated
Jacobian (codegen.algorithms.jacobian, the gradients of a straight-line program's
temporaries, seeded with the gradients of the temporaries before them).
"""
from __future__ import annotations

import sympy as sm
from sympy.core.function import AppliedUndef, ArgumentIndexError

__all__ = ["forward"]


def _add(grads: dict, g: dict, factor) -> None:
    """The terms factor * g[i] of each direction's derivative, summed once in _node: a
    sum grown term by term would flatten its terms again at each."""
    for i, d in g.items():
        grads.setdefault(i, []).append(d if factor == 1 else factor * d)


def forward(exprs, seeds: dict, point: dict, memo: dict) -> list:
    """[(value, gradient)] of each of exprs.

    seeds: the gradients of the leaves (symbols, functions of time or their
    derivatives) that have one; other leaves have none. point maps leaves to
    values (numbers or expressions); leaves it leaves out stay as they are.
    memo carries the visited nodes across calls with the same seeds (new
    seeds may be added for leaves not yet visited) and point."""
    for root in exprs:
        stack = [(sm.sympify(root), False)]
        while stack:
            e, done = stack.pop()
            if e in memo:
                continue
            if e in seeds or e.is_Atom or isinstance(e, (AppliedUndef, sm.Derivative)):
                memo[e] = (point.get(e, e), seeds.get(e, {}))
                continue
            if not done:
                stack.append((e, True))
                stack.extend((a, False) for a in e.args if a not in memo)
                continue
            memo[e] = _node(e, [memo[a] for a in e.args], seeds, point)
    return [memo[sm.sympify(e)] for e in exprs]


def _node(e, args, seeds, point):
    """Value and gradient of e from its arguments' (values, gradients)."""
    vals = [v for v, _ in args]
    grads = {}
    same = all(v is a for v, a in zip(vals, e.args))        # nothing substituted below
    if e.is_Add:
        value = e if same else sm.Add(*vals)
        for _, g in args:
            _add(grads, g, 1)
    elif e.is_Mul:
        value = e if same else sm.Mul(*vals)
        k = len(vals)
        prefix, suffix = [sm.S.One] * (k + 1), [sm.S.One] * (k + 1)
        for i in range(k):
            prefix[i + 1] = prefix[i] * vals[i]
            suffix[k - 1 - i] = suffix[k - i] * vals[k - 1 - i]
        for i, (_, g) in enumerate(args):
            if g:
                _add(grads, g, prefix[i] * suffix[i + 1])
    elif e.is_Pow:
        (b, gb), (x, gx) = args
        value = e if same else b ** x
        if gb:
            _add(grads, gb, x * b ** (x - 1))
        if gx:
            _add(grads, gx, value * sm.log(b))
    elif isinstance(e, sm.Function):
        value = e if same else e.func(*vals)
        for k, (_, g) in enumerate(args):
            if not g:
                continue
            try:
                d = value.fdiff(k + 1) if isinstance(value, sm.Function) else \
                    e.fdiff(k + 1).xreplace(dict(zip(e.args, vals)))
            except ArgumentIndexError:
                d = e.fdiff(k + 1).xreplace(dict(zip(e.args, vals)))
            _add(grads, g, d)
    else:                     # Piecewise and the like: differentiate symbolically, then evaluate
        value = e.xreplace(point)
        for v, g in seeds.items():
            if g and e.has(v):
                d = e.diff(v).xreplace(point)
                if d != 0:
                    _add(grads, g, d)
    summed = ((j, terms[0] if len(terms) == 1 else sm.Add(*terms)) for j, terms in grads.items())
    return value, {j: d for j, d in summed if d != 0}
