"""Common subexpressions in time linear in the program: the expression DAG, shared.

SymPy's ``cse`` compares every sum and product with every other to find
shared sub-sums and sub-products, and its cost grows faster than the square
of the program: 7 s for the 40-link pendulum's programs, minutes beyond.
Here the expressions are walked once as a DAG (SymPy's expressions are
hashed by value, so equal subexpressions are one node), every node used
twice or more becomes a temporary, and the rest stay inline. Before that,
each node is read in the form that shares most (as SymPy's ``opt_cse``
does): a product with a negative coefficient as the negation of the
positive product, a negative power as the inverse of the positive one, so
that x y and -x y, x² and 1/x² share their work.

Sub-products and sub-sums shared by several products or sums (l m in
l m cos q and l m sin q) are then found by pairs (``_common_pairs``): the
most frequent pair of arguments, counted over all products (sums) of a few
arguments, becomes a node of its own, round after round while one occurs
twice. Each round is linear in the program.

Nothing depends on hashing order: nodes are visited in the order of the
expressions and of their arguments, so the same expressions give the same
temporaries, in the same order, under any PYTHONHASHSEED.
"""
from __future__ import annotations

import sympy as sm
from sympy.core.function import AppliedUndef

from ..progress import checkpoint

__all__ = ["cse"]

#: of a product's (sum's) arguments that others share, the pairs of at most this many
#: (the most shared) are counted
PAIR_ARGUMENTS = 8


class _Node:
    """A node of the DAG in its sharing form: how to build it from its arguments."""
    __slots__ = ("func", "args")

    def __init__(self, func, args):
        self.func, self.args = func, args


def _neg(x):
    """-x, a product's coefficient negated in place (-3*y, not -(3*y))."""
    if x.is_Mul and x.args[0].is_Number:
        c = -x.args[0]
        return sm.Mul(*x.args[1:], evaluate=False) if c == 1 and len(x.args) > 2 else \
            x.args[1] if c == 1 else sm.Mul(c, *x.args[1:], evaluate=False)
    return sm.Mul(sm.S.NegativeOne, x, evaluate=False)


def _inv(x):
    return sm.Pow(x, sm.S.NegativeOne)


def _leaf(e) -> bool:
    return e.is_Atom or isinstance(e, (AppliedUndef, sm.Derivative))


def _view(e) -> _Node:
    """e as the node that shares most: -(x y) for -x y, 1/(x²) for x⁻²."""
    if e.is_Mul:
        c, rest = e.as_coeff_Mul()
        if c.is_negative and rest != 1:
            return _Node(_neg, ((-c) * rest if c != -1 else rest,))
    elif e.is_Pow and e.exp.is_negative and e.exp.is_number:
        return _Node(_inv, (e.base if e.exp == -1 else sm.Pow(e.base, -e.exp),))
    return _Node(e.func, e.args)


def _graph(exprs):
    """(views, uses, order): each node's view, how often it is used, and the nodes in
    post-order (arguments first) from exprs in order."""
    views, uses, order = {}, {}, []
    for root in exprs:
        if _leaf(root):
            continue
        uses[root] = uses.get(root, 0) + 1
        if root in views:
            continue
        views[root] = _view(root)
        stack = [(root, iter(views[root].args))]
        while stack:
            node, args = stack[-1]
            for a in args:
                if _leaf(a):
                    continue
                uses[a] = uses.get(a, 0) + 1
                if a not in views:
                    views[a] = _view(a)
                    stack.append((a, iter(views[a].args)))
                    break
            else:
                stack.pop()
                order.append(node)
    return views, uses, order


class _Numbers(dict):
    """node -> whether it is a number (sqrt(3)/2 too), each node asked once: SymPy's
    is_number walks the whole expression every time."""

    def __missing__(self, e):
        value = self[e] = bool(e.is_Number or e.is_NumberSymbol
                               or (e.args and not isinstance(e, (AppliedUndef, sm.Derivative))
                                   and not e.is_Symbol and all(self[a] for a in e.args)))
        return value


def _candidates(views, order, number):
    """{node: its arguments that other products (sums) share}, for products and sums of
    three or more arguments: at most PAIR_ARGUMENTS of them, the most shared first."""
    shared = {}
    for e in order:
        v = views[e]
        if v.func in (sm.Mul, sm.Add) and len(v.args) > 1:
            for a in v.args:
                if not number[a]:
                    shared[v.func, a] = shared.get((v.func, a), 0) + 1
    out = {}
    for e in order:
        v = views[e]
        if v.func in (sm.Mul, sm.Add) and len(v.args) > 2:
            args = [a for a in v.args if not number[a] and shared[v.func, a] > 1]
            if len(args) > PAIR_ARGUMENTS:
                args = sorted(args, key=lambda a: -shared[v.func, a])[:PAIR_ARGUMENTS]
            if len(args) > 1:
                out[e] = args
    return out


def _post_order(views, exprs) -> list:
    """The nodes reachable from exprs through their views, arguments first."""
    order, seen = [], set()
    for root in exprs:
        if _leaf(root) or root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(views[root].args))]
        while stack:
            node, args = stack[-1]
            for a in args:
                if not _leaf(a) and a not in seen:
                    seen.add(a)
                    stack.append((a, iter(views[a].args)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def _common_pairs(views, uses, order, exprs, number):
    """Shared pairs of arguments of products and sums made nodes of their own, round
    after round (see the module docstring); views, uses and order updated in place."""
    while True:
        checkpoint()
        candidates = _candidates(views, order, number)
        count = {}
        for e in order:          # a product (sum) of two is a pair already made
            v = views[e]
            if v.func in (sm.Mul, sm.Add) and len(v.args) == 2 and not number[v.args[0]]:
                count[v.func, frozenset(v.args)] = 1
        for e, args in candidates.items():
            f = views[e].func
            for i in range(len(args)):
                for j in range(i + 1, len(args)):
                    key = (f, frozenset((args[i], args[j])))
                    count[key] = count.get(key, 0) + 1
        shared = [k for k, c in count.items() if c > 1]
        if not shared:
            return
        shared.sort(key=lambda k: -count[k])      # stable: ties keep their first use
        rank = {k: i for i, k in enumerate(shared)}
        for e in order:
            args = candidates.get(e)
            best = None
            if args is not None:
                f = views[e].func
                for i in range(len(args)):
                    for j in range(i + 1, len(args)):
                        r = rank.get((f, frozenset((args[i], args[j]))))
                        if r is not None and (best is None or r < best[0]):
                            best = (r, args[i], args[j])
            if best is not None:
                _, a, b = best
                v = views[e]
                pair = v.func(a, b)
                if pair not in views:
                    views[pair] = _Node(v.func, (a, b))
                    uses[pair] = 0
                    for x in (a, b):
                        if not _leaf(x):
                            uses[x] += 1
                uses[pair] += 1
                for x in (a, b):
                    if not _leaf(x):
                        uses[x] -= 1
                rest = list(v.args)
                rest.remove(a)
                rest.remove(b)
                views[e] = _Node(v.func, tuple([pair] + rest))
        order[:] = _post_order(views, exprs)    # a pair made before may come later


def cse(exprs, symbols):
    """(temporaries [(symbol, expr)], the reduced exprs), as ``sympy.cse(order='none')``
    gives them: every subexpression used more than once computed once, before its
    first use. symbols: an iterator of fresh symbols for the temporaries."""
    exprs = [sm.sympify(e) for e in exprs]
    views, uses, order = _graph(exprs)
    number = _Numbers()
    _common_pairs(views, uses, order, exprs, number)
    built, temps = {}, []
    for i, e in enumerate(order):
        if i % 2000 == 0:
            checkpoint()
        v = views[e]
        args = [built.get(a, a) for a in v.args]
        if v.func in (sm.Add, sm.Mul):
            if any(a.func is v.func for a in args):     # an inline pair: spliced
                args = [b for a in args for b in (a.args if a.func is v.func else (a,))]
            # unevaluated: the arguments are canonical already, and SymPy's flattening
            # and sorting would cost most of the CSE's time; numbers go first, as in
            # SymPy's own order, so that the C printer finds the coefficient
            args.sort(key=lambda a: not number[a])
            value = v.func(*args, evaluate=False)
        else:
            value = v.func(*args)
        if uses[e] > 1 and not _leaf(value):
            s = next(symbols)
            temps.append((s, value))
            value = s
        built[e] = value
    return temps, [built.get(e, e) for e in exprs]
