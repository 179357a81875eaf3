"""Sine and cosine pairs: which arguments a function takes both of, computed once (sincos),
where they are last read, and the loop that computes a parted function's coordinates' pairs."""
from __future__ import annotations

import sympy as sm

__all__ = ["trig_plan", "trig_numbers", "trig_loop", "TRIG_LOOP_PAIRS", "HOIST_TRIG", "HOIST_MOST"]


def trig_plan(statements: list, loop_args=frozenset(), hoist: bool = False) -> tuple:
    """(plan, last): the sin/cos pairs to compute before each statement (ordered_statements's,
    numbered in that order): {statement: [[arg] or [arg, arg]]};
    and the last statement reading each value: {(arg, "s" or "c"): statement}.

    Each argument gets one evaluation, placed before its first use. Two
    arguments share one cg_sincos2 (two SSE2 lanes): the one needed now and
    the next one in order of first use whose inputs are already defined.
    The arguments in loop_args (an even number of them at most, in order of first use)
    are paired first, all before statement 0 (trig_loop's). hoist: every argument of the
    inputs alone (a coordinate) before statement 0 as well, paired in order of first use,
    where they are at most HOIST_MOST."""
    index_of = {st[0]: i for i, st in enumerate(statements) if st[0] is not None}
    first, ready, last = {}, {}, {}
    for i, (_, e, _, _) in enumerate(statements):
        for node in sm.preorder_traversal(e):
            if isinstance(node, (sm.sin, sm.cos)):
                arg = node.args[0]
                last[arg, "s" if isinstance(node, sm.sin) else "c"] = i
                if arg not in first:
                    first[arg] = i
                    ready[arg] = max((index_of[s] for s in arg.free_symbols if s in index_of),
                                     default=-1)
    early = [a for a in first if a in loop_args]
    early = early[:len(early) // 2 * 2]
    if hoist:
        hoisted = [a for a in first if ready[a] < 0 and a not in early]
        early += hoisted if len(hoisted) <= HOIST_MOST else []
    plan = {0: [early[j:j + 2] for j in range(0, len(early), 2)]} if early else {}
    pending = [a for a in first if a not in early]      # in order of first use
    for arg, i in first.items():
        if arg not in pending:
            continue                        # computed early, as another's partner
        pending.remove(arg)
        partner = next((b for b in pending if ready[b] < i), None)
        if partner is not None:
            pending.remove(partner)
        plan.setdefault(i, []).append([arg] if partner is None else [arg, partner])
    return plan, last


def trig_numbers(plan: dict) -> dict:
    """{arg: k}: the sin/cos arguments numbered in the order they are computed (the
    C names cg_s<k>, cg_c<k>)."""
    return {arg: k for k, arg in enumerate(arg for i in sorted(plan) for group in plan[i]
                                           for arg in group)}


def trig_loop(pairs: list, numbers: dict, slots: dict, names: dict, reads: dict) -> dict:
    """The sin and cos of a parted function's coordinates (pairs of x's symbols), computed
    by one loop at the start of its first part into their slots (function.j2's trig_loop):
    one copy of cg_sincos2's code (about 600 bytes at -Os) instead of one per pair, in code
    that the instruction cache does not hold (Talos's inverse dynamics has 16 pairs)."""
    return dict(count=len(pairs), array="x",
                angles=[reads[names[a]].index for pair in pairs for a in pair],
                slots=[slots[numbers[a], kind] for pair in pairs for a in pair for kind in "sc"])


#: a parted function whose coordinates' sin/cos pairs are at least this many computes them
#: in one loop (trig_loop); fewer stay inline, each before its first use
TRIG_LOOP_PAIRS = 2

#: the kinds whose sin/cos pairs of coordinates all come first (trig_plan's hoist), so
#: that the processor overlaps their long chains of dependent operations with one another
#: instead of waiting on each at its first use. Measured per call at the base flags (same
#: instructions within 4 %): inverse dynamics 8-13 % less time (UR5, HyQ, iiwa, Solo12),
#: the mass matrix 9 % (UR5) and 14 % (HyQ), the UR5's dense eval 8 %; the recursion
#: (tree) ran 3 % longer on the iiwa and Solo12, and keeps each pair at its first use
HOIST_TRIG = frozenset({"eval", "mass", "inverse_dynamics"})

#: hoisted only up to this many arguments: their values then live through the function
#: (Atlas's inverse dynamics, 30 coordinates: 2.8 % more instructions and 6 % more time
#: hoisted; HyQ's and Solo12's, 12: 8 and 10 % less time)
HOIST_MOST = 16
