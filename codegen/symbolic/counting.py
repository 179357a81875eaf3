"""Operation counts of expressions as C evaluates them: what the plan and the formulation
compare when they choose between two forms of the same quantity."""
from __future__ import annotations

import sympy as sm

__all__ = ["operation_count"]


def operation_count(exprs) -> int:
    """Operations of expressions as C evaluates them: an n-term sum or product is
    n - 1 operations, a power or a function call one (sympy.count_ops, ten
    times slower on a large program, counts nearly the same)."""
    count = 0
    stack = list(exprs)
    while stack:
        e = stack.pop()
        if not e.args or e.is_Atom or isinstance(e, (sm.Derivative, sm.core.function.AppliedUndef)):
            continue
        if e.is_Add or e.is_Mul:
            count += len(e.args) - 1
        elif not isinstance(e, sm.Tuple):
            count += 1
        stack.extend(e.args)
    return count
