"""Reverse-mode differentiation of a straight-line program, as more definitions.

The gradient of one scalar φ of a program's temporaries and leaves costs a small
multiple of the program (each operation's partials, once), where forward mode costs
the program times the number of directions. The adjoint of each temporary the
gradient reaches becomes a definition of its own, read by the adjoints of the
temporaries before it; within one temporary's expression the adjoints stay
expressions, except one passed to several arguments (then a definition too, so that
it is formed once).

One user: the exact second derivatives (codegen.algorithms.hessian), forward mode over
the adjoint program (forward over reverse).
"""
from __future__ import annotations

import sympy as sm
from sympy.core.function import AppliedUndef

__all__ = ["adjoints"]


def adjoints(temporaries: list, phi, wrt: list, prefix: str = "ad") -> tuple:
    """(definitions, gradient) of the scalar phi over the leaves wrt.

    temporaries: [(symbol, expr)] in order, each reading leaves and the ones before it;
    phi: an expression over both. definitions: the adjoints [(Dummy named prefix and a
    number, expr)], each after the ones it reads; gradient: ∂φ/∂w of each w of wrt, an
    expression over the temporaries and definitions (zero where φ does not read w)."""
    active = set(wrt)
    for symbol, expr in temporaries:
        if not _leaves(expr).isdisjoint(active):
            active.add(symbol)
    sweep = _Sweep(active, prefix)
    sweep.run(sm.sympify(phi), sm.S.One)
    for symbol, expr in reversed(temporaries):
        weight = sm.Add(*sweep.acc.pop(symbol, []))
        if weight != 0:
            sweep.run(expr, sweep.define(weight))
    return sweep.defs, [sm.Add(*sweep.acc.get(w, [])) for w in wrt]


def _leaves(expr) -> set:
    """The symbols, functions of time and derivatives expr reads."""
    return expr.free_symbols | expr.atoms(AppliedUndef, sm.Derivative)


def _trivial(w) -> bool:
    """Whether w costs nothing to repeat: a number, a symbol or a signed symbol."""
    return w.is_number or w.is_Symbol or (w.is_Mul and len(w.args) == 2
                                          and w.args[0].is_number and w.args[1].is_Symbol)


class _Sweep:
    """The adjoints' definitions so far and the terms of the temporaries' adjoints."""

    def __init__(self, active: set, prefix: str):
        self.active, self.prefix = active, prefix
        self.acc = {}                  # leaf or temporary -> the terms of its adjoint
        self.defs = []
        self._reads = {}               # node -> whether it reads an active leaf

    def define(self, expr):
        """expr itself if it costs nothing to repeat, else a new definition's symbol."""
        if _trivial(expr):
            return expr
        symbol = sm.Dummy(f"{self.prefix}{len(self.defs)}")
        self.defs.append((symbol, expr))
        return symbol

    def reads(self, node) -> bool:
        """Whether node depends on an active leaf or temporary (memoized over nodes)."""
        found = self._reads.get(node)
        if found is None:
            if node in self.active:
                found = True
            elif node.is_Atom:
                found = False
            else:
                found = any(self.reads(a) for a in node.args)
            self._reads[node] = found
        return found

    def run(self, expr, weight) -> None:
        """Add weight·∂expr/∂s to the adjoint terms of each active leaf or temporary s."""
        if not self.reads(expr):
            return
        order = self._order(expr)
        adj = {expr: [weight]}
        for node in order:
            terms = adj.pop(node)
            w = terms[0] if len(terms) == 1 else sm.Add(*terms)
            if node in self.active:
                self.acc.setdefault(node, []).append(w)
                continue
            moving = [i for i, a in enumerate(node.args) if self.reads(a)]
            if len(moving) > 1 and not _trivial(w):
                # formed once, not once per argument's partial
                w = self.define(w)
            for arg, d in self._partials(node, moving):
                adj.setdefault(arg, []).append(w if d == 1 else w * d)

    def _order(self, expr) -> list:
        """The active nodes of expr, each before its arguments (reverse post-order)."""
        post, seen, stack = [], set(), [(expr, False)]
        while stack:
            node, done = stack.pop()
            if done:
                post.append(node)
                continue
            if node in seen:
                continue
            seen.add(node)
            stack.append((node, True))
            if node not in self.active:
                stack.extend((a, False) for a in reversed(node.args)
                             if a not in seen and self.reads(a))
        return post[::-1]

    def _partials(self, node, moving) -> list:
        """[(argument, ∂node/∂argument)] over the moving arguments; a node of another
        kind (a Piecewise and the like) gives the partials over its active leaves."""
        args = node.args
        if node.is_Add:
            return [(args[i], sm.S.One) for i in moving]
        if node.is_Mul:
            return [(args[i], sm.Mul(*(args[:i] + args[i + 1:]))) for i in moving]
        if node.is_Pow:
            b, x = args
            out = [(b, x * b ** (x - 1))] if 0 in moving else []
            return out + ([(x, node * sm.log(b))] if 1 in moving else [])
        if isinstance(node, sm.Function) and not isinstance(node, AppliedUndef):
            try:
                return [(args[i], node.fdiff(i + 1)) for i in moving]
            except sm.core.function.ArgumentIndexError:
                pass
        leaves = sorted((s for s in _leaves(node) if s in self.active), key=sm.default_sort_key)
        return [(s, node.diff(s)) for s in leaves]
