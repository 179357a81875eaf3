"""The regressor's straight-line programs (codegen.programs: one CSE each): Y, and the
base regressor Y_b (Y's base columns), over the state x and the accelerations u'."""
from __future__ import annotations

import sympy as sm

from ..equations.equations_of_motion import EquationsOfMotion
from ..programs.program import Program, make_program

__all__ = ["regressor_program", "state_names"]


def state_names(model) -> list:
    """The model's state names, [q, q_dependent, u], as the compiled model names them."""
    return [str(s.func) for s in
            list(model.q_ind) + list(model.q_dependent or []) + list(model.u_ind)]


def _inputs(formed) -> EquationsOfMotion:
    """Neutral equations that carry only the intermediates (the regressor has no M, F,
    constants or inputs of its own; the states it reads are extra inputs at their
    positions, since a run-time loop's independent speeds need not be the first)."""
    return EquationsOfMotion(q=[], u=[], qdot=[], M=sm.zeros(0, 0),
                             F=sm.zeros(0, 1), symmetric=True, constants=[], specifieds=[],
                             state_names=[], constant_names=[],
                             specified_names=[], intermediates=list(formed.intermediates))


def regressor_program(model, formed, columns=None) -> Program:
    """The program of Y (row-major, n x len(columns)) at x and u' (array "ud");
    columns: the parameters' indices kept (default all)."""
    eq = _inputs(formed)
    rows = formed.Y
    cols = range(len(rows[0])) if columns is None else columns
    exprs = [rows[j][c] for j in range(len(rows)) for c in cols]
    names = state_names(model)
    extra = [(s, "x", k, names[k]) for s, k in formed.inputs]
    speeds = formed.inputs[len(formed.inputs) - len(formed.speeds):]
    extra += [(d, "ud", j, f"ud_{names[k]}")
              for j, (d, (_, k)) in enumerate(zip(formed.accelerations, speeds))]
    return make_program(eq, [("Y", exprs)], extra_inputs=extra)
