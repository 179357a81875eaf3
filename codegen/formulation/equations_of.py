"""The hand-off from a formed method to the neutral equations (:func:`equations_of`): a
GibbsAppellMethod's own results, or a KanesMethod-like object's matrices read through its
interface and checked."""
from __future__ import annotations

import sympy as sm
from sympy.physics.vector import dynamicsymbols

from ..description.model import declared_order
from ..equations.equations_of_motion import EquationsOfMotion, assemble, variable_name
from ..symbolic.expressions import memo_xreplace, vanishes
from ..symbolic.simplify import pythagoras
from .appell import GibbsAppellMethod

__all__ = ["equations_of", "is_symmetric"]

t = dynamicsymbols._t


def is_symmetric(M: sm.Matrix) -> bool:
    """Exactly symmetric: structurally, else by expansion (a numeric probe rules out quickly)."""
    if not M.is_square:
        return False
    pairs = [(M[i, j], M[j, i]) for i in range(M.rows) for j in range(i) if M[i, j] != M[j, i]]
    if not pairs:
        return True
    if not vanishes([a - b for a, b in pairs], relative=True):
        return False
    return all(sm.expand(a - b) == 0 for a, b in pairs)


def equations_of(method, constants=None, specifieds=None) -> EquationsOfMotion:
    """The neutral equations of a formed GibbsAppellMethod or KanesMethod-like object: the
    one hand-off from the formulation to the equations, made by ``generate`` and ``export_*``.

    A GibbsAppellMethod hands over its own results (``to_equations``); anything else
    is read through KanesMethod's interface (``q``, ``u``, ``mass_matrix``, ``forcing``,
    ``kindiffdict()``, ``bodies``). constants, specifieds: the order of p and r; by
    default the order the model declares for the method's bodies (a Model's
    ``constants`` and ``specifieds``, carried by ``model.kwargs``: see
    codegen.description.model.declared_order), then the rest sorted by name, or all
    sorted by name where nothing is declared (a plain KanesMethod)."""
    if isinstance(method, GibbsAppellMethod):
        return method.to_equations(constants=constants, specifieds=specifieds)
    try:
        qt, ut = list(method.q), list(method.u)
        Mt, Ft = method.mass_matrix, method.forcing
        kd = method.kindiffdict()
    except (AttributeError, ValueError) as exc:
        raise TypeError(f"{method!r} does not look like a formed KanesMethod or "
                        f"GibbsAppellMethod: {exc}") from exc
    q = [sm.Dummy(variable_name(s)) for s in qt]      # Dummy: no clash with a constant's name
    u = [sm.Dummy(variable_name(s)) for s in ut]
    memo = {}
    for s, plain in zip(qt + ut, q + u):
        memo[s] = plain
    try:
        qdot_t = [kd[s.diff(t)] for s in qt]
    except KeyError as exc:
        raise ValueError(f"kindiffdict() has no entry for {exc.args[0]}") from exc
    conv = lambda e: memo_xreplace(sm.sympify(e), memo)
    qdot = [conv(e) for e in qdot_t]
    M = Mt.applyfunc(conv)
    F = Ft.applyfunc(conv)
    known = set(qt + ut)
    for e in qdot + list(F) + list(M):
        leftover = [d for d in e.atoms(sm.Derivative) if d.expr in known]
        if leftover:
            raise ValueError(f"the equations still contain {leftover[0]}")
    symmetric = is_symmetric(M)
    memo = {}             # the Gibbs-Appell formulation sums sin**2 + cos**2 itself
    M = M.applyfunc(lambda e: pythagoras(e, memo))
    F = F.applyfunc(lambda e: pythagoras(e, memo))
    names = [variable_name(s) for s in qt + ut]
    return assemble(q, u, qdot, M, F, symmetric, constants, specifieds, names,
                    f"{type(method).__name__}", None, [], None,
                    "a KanesMethod-like object (no bodies to see)",
                    declared=declared_order(getattr(method, "bodies", None)))
