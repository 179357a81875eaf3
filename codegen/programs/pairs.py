"""Programs over pairs of doubles (codegen.algorithms.lanes): the pair of two scalars (Pack),
one lane of a pair (Lane), each printed in C by codegen.emit.printer (cg_v2, cg_math.h), and a
program's values in Python, pairs included."""
from __future__ import annotations

import functools
import operator

import numpy as np
import sympy as sm

__all__ = ["Pack", "Lane", "program_values"]


class Pack(sm.Function):
    """The pair (a, b): a in the first lane, b in the second."""
    nargs = 2
    is_number = False


class Lane(sm.Function):
    """Lane i (0 or 1) of the pair v."""
    nargs = 2


def program_values(program, inputs) -> np.ndarray:
    """The outputs of program (its Pack and Lane too) at inputs ({input object: value}), in
    Python: the check of a pairing, and a test's."""
    values = dict(inputs)

    def value(e):
        if e in values:
            return values[e]
        if e.is_Number:
            return float(e)
        parts = [value(a) for a in e.args]
        if isinstance(e, Pack):
            return np.array(parts)
        if isinstance(e, Lane):
            return parts[0][int(e.args[1])]
        if e.is_Add or e.is_Mul:
            return functools.reduce(operator.add if e.is_Add else operator.mul, parts)
        if e.is_Pow:
            return parts[0] ** parts[1]
        if isinstance(e, (sm.sin, sm.cos)):
            return (np.sin if isinstance(e, sm.sin) else np.cos)(parts[0])
        raise ValueError(f"no value for {type(e).__name__} {e}")
    for s, e in program.temporaries:
        values[s] = value(e)
    return np.array([value(sm.sympify(e)) for _, exprs in program.outputs for e in exprs])
