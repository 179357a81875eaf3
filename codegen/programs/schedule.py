"""The order of a straight-line program's temporaries, for the C compiler's registers.

GCC allocates registers over the statements in the order they are printed, and a long
program's spills are a large part of its instructions (HyQ's eval function: 851 of its
4,170 were moves to and from the stack). Two orders, both depth first from the
outputs: each temporary right before its first use (``depth_first``), and the same with
each temporary's operands taken in decreasing order of the registers they need, as Sethi
and Ullman order an expression tree (``ershov=True``). ``reloads`` counts the loads a
machine of a few registers would make under an order (furthest next use evicted, as
Belady's rule), so that a program can keep whichever order spills less.
"""
from __future__ import annotations

import dataclasses

import sympy as sm

__all__ = ["depth_first", "reloads", "fewer_reloads", "REGISTERS", "REORDER_BELOW"]

#: the registers ``reloads`` allocates: x86-64's 16 vector registers less two for the
#: compiler's own use (constants, copies of SSE2's two-operand form)
REGISTERS = 14


def _reads(temporaries: list) -> tuple:
    index = {sym: i for i, (sym, _) in enumerate(temporaries)}
    return index, [sorted({index[d] for d in e.free_symbols if d in index})
                   for _, e in temporaries]


def _output_reads(index: dict, outputs: list) -> list:
    return [sorted({index[d] for d in sm.sympify(e).free_symbols if d in index})
            for _, exprs in outputs for e in exprs]


def depth_first(temporaries: list, outputs: list, ershov: bool = False) -> list:
    """The temporaries in the order the outputs need them, depth first: each right
    before its first use (a body's kinematics beside its step of the passes), not all
    of the inputs' CSE first, so that fewer values are live at once. ershov: each
    temporary's operands in decreasing order of their Ershov numbers (the registers
    their evaluation needs), the largest first, as Sethi and Ullman order a tree."""
    index, deps = _reads(temporaries)
    if ershov:
        need = []
        for ops in deps:
            ranks = sorted((need[d] for d in ops), reverse=True)
            need.append(max([1] + [r + i for i, r in enumerate(ranks)]))
        deps = [sorted(ops, key=lambda d: (-need[d], d)) for ops in deps]
    done, order = [False] * len(temporaries), []
    for roots in _output_reads(index, outputs):
        if ershov:
            roots = sorted(roots, key=lambda d: (-need[d], d))
        stack = [(i, 0) for i in reversed(roots)]
        while stack:
            k, j = stack.pop()
            if done[k]:
                continue
            if j < len(deps[k]):
                stack.append((k, j + 1))
                stack.append((deps[k][j], 0))
            else:
                done[k] = True
                order.append(k)
    return [temporaries[k] for k in order]


def reloads(temporaries: list, outputs: list, registers: int = REGISTERS) -> int:
    """The loads and stores of spilled values when the temporaries, in this order, are
    evaluated on a machine of ``registers`` registers that evicts the value next read
    furthest ahead (inputs are read from memory, not counted)."""
    index, reads = _reads(temporaries)
    n = len(temporaries)
    uses = [[] for _ in range(n)]
    for t, ops in enumerate(reads):
        for d in ops:
            uses[d].append(t)
    for ops in _output_reads(index, outputs):
        for d in ops:
            uses[d].append(n)
    seen = [0] * n                       # uses[k][:seen[k]] are past

    def next_use(k, t):
        u = uses[k]
        while seen[k] < len(u) and u[seen[k]] <= t:
            seen[k] += 1
        return u[seen[k]] if seen[k] < len(u) else n + 1

    held, stored, count = set(), set(), 0
    for t in range(n):
        for d in reads[t]:
            if d not in held:
                count += 1
                held.add(d)
        held = {d for d in held if next_use(d, t) <= n}
        if uses[t]:
            held.add(t)
        while len(held) > registers:
            far = max(held, key=lambda d: (next_use(d, t), d))
            held.discard(far)
            if far not in stored:
                stored.add(far)
                count += 1
    return count


#: the reordered program is kept where it reloads at most this fraction of the order as
#: written: a few reloads fewer in the model are within what it does not see (the UR5's
#: mass matrix, 40 -> 38 simulated, ran 0.5 % more instructions reordered)
REORDER_BELOW = 0.9


def fewer_reloads(program, below: float = REORDER_BELOW):
    """program, or the same with its temporaries in the Sethi–Ullman depth-first order
    (depth_first with ershov) where that order reloads clearly less (reloads: at most below
    times as often)."""
    ordered = depth_first(program.temporaries, program.outputs, ershov=True)
    if reloads(ordered, program.outputs) < below * reloads(program.temporaries, program.outputs):
        return dataclasses.replace(program, temporaries=ordered)
    return program
