"""The parts of the analytic Jacobian of x' = [q'(x, r, t); u'], as one straight-line program.

With M(q, r, t) u' = F(x, r, t), differentiating at a state where u' is known:

    d q'/dx   = the kinematics' Jacobian                      (Jq,  nq x nx)
    M du'/dx  = dF/dx - (dM/dx) u'           =: R             (nu x nx)

and the same over the specified inputs r (Jqr, Rr). The program takes u'
as an input array (the runtime computes it first with the model's own
solve) and returns Jq and R; the runtime then solves M Z = R with M's
factorization (cg_jacobian). No finite differences, and no blind
differentiation of M⁻¹F.

The derivatives are forward-mode differentiation of the straight-line
program of q' and F - M u' (after its CSE; over a tree of bodies, of the
Newton–Euler program of codegen.inverse, which gives F - M u' in O(n) without M),
not symbolic derivatives of
the expressions: each temporary's gradient over x and r is a sparse map
direction -> expression (codegen.forward), from the gradients of the
temporaries it uses. Its cost is the program's size times the
gradients' density, where symbolic differentiation would rebuild the
shared subexpressions once per state.
"""
from __future__ import annotations

import dataclasses

import sympy as sm
from sympy.core.function import AppliedUndef

from .constraints import Intermediate, define
from .forward import forward
from .inverse import inverse_program
from .program import Input, Program, live_temporaries, make_program, operation_count
from .progress import checkpoint
# the forward recursion's inputs and passes, shared (as codegen.inverse shares them)
from .recursive import _inward, _outward, _tree_inputs

__all__ = ["jacobian_program", "parameter_jacobian_program", "column_solve_program"]


class _Tangents:
    """Gradients of a straight-line program's values, as new definitions."""

    def __init__(self, wrt: list):
        self.grad = {v: {k: sm.S.One} for k, v in enumerate(wrt)}
        self.defs = []                 # Intermediate: the gradients' entries
        self._memo = {}


    def of(self, expr) -> dict:
        """The gradient of expr (direction -> expression)."""
        return forward([expr], self.grad, {}, self._memo)[0][1]

    def define(self, symbol, expr) -> None:
        """A temporary: its gradient, each entry a symbol of its own."""
        self.grad[symbol] = {k: define(self.defs, f"jd{len(self.defs)}", e)
                             for k, e in self.of(expr).items()}


#: the default (jacobian=None) builds the Jacobian while its derivative program stays
#: within this many definitions. The pendulum on a cart has 700 at n = 12 and 1,800 at
#: n = 20, where the Jacobian would triple the build (1.2 s -> 3.7 s); the Whipple
#: bicycle has 1,600, spatial_chain(4) 7,200. Ask for it with jacobian=True.
AUTO_LIMIT = 1000


def jacobian_program(eom, limit: int | None = None) -> Program | None:
    """Outputs Jq, R (over the states) and Jqr, Rr (over the specified inputs), row-major;
    input array ud (u'). Only for models without run-time constraints. None when the
    derivative program would exceed limit definitions."""
    nx, nr = eom.nq + eom.nu, len(eom.specifieds)
    return _derivative_program(eom, list(eom.q) + list(eom.u) + list(eom.specifieds),
                               [("Jq", "qd", 0, nx), ("R", "res", 0, nx),
                                ("Jqr", "qd", nx, nr), ("Rr", "res", nx, nr)], limit)


def parameter_jacobian_program(eom) -> Program:
    """Outputs Jqp (nq x np) and Rp (nu x np), the same parts over the constants p:
    the parameter sensitivities d x'/dp = [Jqp; M^-1 Rp]."""
    n = len(eom.constants)
    return _derivative_program(eom, list(eom.constants),
                               [("Jqp", "qd", 0, n), ("Rp", "res", 0, n)], None)


def _values(eom) -> tuple:
    """(u' symbols, program): q' ("qd") and the dynamics' residual F - M u' at the given
    u' ("res"), whose derivative is R. Over a tree of bodies the residual is minus the
    Newton–Euler program's tau (codegen.inverse: O(n), a fraction of M's and F's
    definitions, as the analytic derivatives of Carpentier and Mansard differentiate
    the RNEA); else M and F themselves."""
    nu = eom.nu
    program = inverse_program(eom, with_qd=True)
    if program is not None:
        by_name = {n: o for o, n in program.names.items()}
        out = dict(program.outputs)
        return [by_name[f"cg_ud{j}"] for j in range(nu)], dataclasses.replace(
            program, outputs=[("qd", out["qd"]), ("res", [-e for e in out["tau"]])])
    ud = [sm.Dummy(f"ud{j}") for j in range(nu)]
    M = eom.M
    res = [eom.F[i] - sm.Add(*[M[i, j] * ud[j] for j in range(nu) if M[i, j] != 0])
           for i in range(nu)]
    extra = [(s, "ud", j, f"cg_ud{j}") for j, s in enumerate(ud)]
    return ud, make_program(eom, [("qd", list(eom.qdot)), ("res", res)], extra_inputs=extra)


def definitions_bound(values: Program, wrt: list) -> int:
    """About how many definitions the derivative program of values over wrt takes, from
    the structure alone (which directions each temporary depends on): an entry is
    counted unless it is one symbol's, passed through a sum. It errs high (the iiwa's:
    1,824 for 1,724), and costs a walk over the program where forming the derivatives
    costs a second."""
    index = {w: k for k, w in enumerate(wrt)}
    dirs = {w: 1 << k for k, w in enumerate(wrt)}
    count = 0
    for symbol, expr in values.temporaries:
        carriers = [a for a in expr.free_symbols | expr.atoms(AppliedUndef) if dirs.get(a)]
        mask = 0
        for a in carriers:
            mask |= dirs[a]
        dirs[symbol] = mask
        passed = set(expr.args) if expr.is_Add else {expr}
        for k in range(len(wrt)):
            those = [a for a in carriers if dirs[a] >> k & 1]
            if those and not (len(those) == 1 and those[0] in passed and those[0] not in index):
                count += 1
    return count


#: the derivative program is not even tried when definitions_bound says this many times
#: the limit (it errs high by a few per cent on robots)
_BOUND_MARGIN = 1.5


def _derivative_program(eom, wrt: list, groups: list, limit) -> Program | None:
    """The derivatives over wrt of q' ("qd") and of F - M u' ("res"), as output arrays
    [(name, of, first direction, count)]; None past limit definitions."""
    ud, values = _values(eom)
    if limit is not None and definitions_bound(values, wrt) > _BOUND_MARGIN * limit:
        return None
    extra = [(s, "ud", j, f"cg_ud{j}") for j, s in enumerate(ud)]
    tangents = _Tangents(wrt)
    for k, (symbol, expr) in enumerate(values.temporaries):
        if k % 200 == 0:
            checkpoint()
        tangents.define(symbol, expr)
        if limit is not None and len(tangents.defs) > limit:
            return None
    outputs = dict(values.outputs)

    def rows(exprs, first, count):
        out = []
        for e in exprs:
            g = tangents.of(e)
            out += [g.get(first + k, sm.S.Zero) for k in range(count)]
        return out
    arrays = [(name, rows(outputs[of], first, count)) for name, of, first, count in groups]
    # the value program's temporaries become definitions of the derivative program
    # (its intermediates among them), all in one more CSE with the partials
    kept = [Intermediate(s, e, f"jv{i}") for i, (s, e) in enumerate(values.temporaries)]
    plain = dataclasses.replace(eom, intermediates=[])
    return make_program(plain, arrays, extra_inputs=extra,
                        extra_intermediates=kept + tangents.defs)


def column_solve_program(eom) -> Program | None:
    """M⁻¹ B for a block of columns B (nu x w) by the articulated-body recursion, O(n) per
    column where a factorization of the dense M costs O(n³) and its solve O(n²) per
    column: the solve of the Jacobian's R (cg_jacobian), for a model whose recursion
    costs fewer operations per column than the dense solve's n² multiply-adds
    (_column_pays). The recursion's inward pass with the bias h = 0 and the joint forces
    Q = b gives the bias p̃ = the share of b alone, and its outward pass u' = M⁻¹ b: the
    articulated inertias (from the state) are computed once, the passes over b per
    column. Outputs B (nu), read from the input array B (nu), column by column: the
    temporaries free of B come first, computed once (emit: the loop's body is the
    rest). None without a tree, with run-time constraints, or where it does not pay."""
    if eom.tree is None or eom.constraints is not None:
        return None
    prog, define, _, S, W, h, _, T = _tree_inputs(eom)
    nodes, nu = eom.tree.nodes, eom.nu
    b = [sm.Dummy(f"b{j}") for j in range(nu)]
    for j, s in enumerate(b):
        define.names[s] = f"cg_b{j}"
        define.used.add(f"cg_b{j}")
    passed = _inward(nodes, S, W, [[0] * len(v) for v in h], b, T, define)
    if passed is None:
        return None
    out = _outward(nodes, T, passed[0], nu, define)
    outputs = [("B", out)]
    temps = live_temporaries(define.temps, outputs)
    # those free of b first (none depends on one that is not), then the column's
    column, once, per = set(b), [], []
    for sym, expr in temps:
        if expr.free_symbols & column:
            column.add(sym)
            per.append((sym, expr))
        else:
            once.append((sym, expr))
    if not _column_pays(operation_count([e for _, e in per] + out), nu):
        return None
    temps = once + per
    used = set()
    for e in [e for _, e in temps] + out:
        used |= e.free_symbols
    read = {define.names[o] for o in used if o in define.names}
    inputs = [i for i in prog.inputs if i.name in read]
    inputs += [Input(f"cg_b{j}", "B", j, f"B[{j}]") for j, s in enumerate(b) if s in used]
    return Program(inputs=inputs, names=define.names, temporaries=temps, outputs=outputs)


def _column_pays(per_column: int, nu: int) -> bool:
    """The recursion's operations per column against the dense solve's (a forward and a
    back substitution: nu² multiply-adds, without the factorization's nu³/6 once)."""
    return per_column < 2 * nu * nu
