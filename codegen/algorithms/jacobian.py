"""The parts of the analytic Jacobian of x' = [q'(x, r, t); u'], as one straight-line program.

With M(q, r, t) u' = F(x, r, t), differentiating at a state where u' is known:

    d q'/dx   = the kinematics' Jacobian                      (Jq,  nq x nx)
    M du'/dx  = dF/dx - (dM/dx) u'           =: R             (nu x nx)

and the same over the specified inputs r (Jqr, Rr). The program takes u'
as an input array (the runtime computes it first with the model's own
solve), or, the analytic derivatives' where that costs less than the
right-hand side, solves u' itself from what they form anyway (output ud;
codegen.algorithms.rnea_derivatives), and returns Jq and R; the runtime then solves
M Z = R with M's factorization (cg_jacobian). No finite differences, and no
blind differentiation of M⁻¹F.

The derivatives are forward-mode differentiation of the straight-line
program of q' and F - M u' (after its CSE; over a tree of bodies, of the
Newton–Euler program of codegen.algorithms.rnea, which gives F - M u' in O(n) without M),
not symbolic derivatives of
the expressions: each temporary's gradient over x and r is a sparse map
direction -> expression (codegen.symbolic.forward_mode), from the gradients of the
temporaries it uses. Its cost is the program's size times the
gradients' density, where symbolic differentiation would rebuild the
shared subexpressions once per state.
"""
from __future__ import annotations

import dataclasses

import sympy as sm
from sympy.core.add import _addsort
from sympy.core.function import AppliedUndef

from ..equations.intermediates import Intermediate, define
from ..symbolic.forward_mode import forward
from .rnea import inverse_program
from ..programs.program import Program, make_program
from ..progress import checkpoint
from .rnea_derivatives import rnea_derivatives
from .rnea_derivatives_solve import solve_operations

__all__ = ["jacobian_program", "parameter_jacobian_program"]


class _Tangents:
    """Gradients of a straight-line program's values, as new definitions."""

    def __init__(self, wrt: list):
        self.grad = {v: {k: sm.S.One} for k, v in enumerate(wrt)}
        self.defs = []                 # Intermediate: the gradients' entries
        self._memo = {}
        self._known = {}               # expression -> the symbol of a value or an entry

    def value(self, symbol, expr) -> None:
        """A temporary of the value program, known by its expression (and its negation's)
        to the entries that follow: the derivative of a rotated vector over its angle is
        the rotated vector crossed with the axis, whose components are values already."""
        if isinstance(expr, sm.Expr):          # not a Piecewise's condition (a relational)
            self._known.setdefault(expr, symbol)
            self._known.setdefault(_negated(expr), -symbol)

    def of(self, expr) -> dict:
        """The gradient of expr (direction -> expression)."""
        return forward([expr], self.grad, {}, self._memo)[0][1]

    def define(self, symbol, expr) -> None:
        """A temporary: its gradient, each entry a symbol of its own."""
        self.grad[symbol] = {k: self._entry(e) for k, e in self.of(expr).items()}
        self.value(symbol, expr)

    def _entry(self, e):
        """e's symbol: a known one, e itself when it is a signed symbol (left inline, so
        that the entries using it can be recognized), else a new definition."""
        if e.is_number or e.is_Symbol or (e.is_Mul and len(e.args) == 2 and e.args[0] == -1
                                          and e.args[1].is_Symbol):
            return e
        known = self._known.get(e)
        if known is None:
            known = define(self.defs, f"jd{len(self.defs)}", e)
            self.value(known, e)
        return known


def _negated(expr):
    """-expr as SymPy forms it, built from expr's terms without SymPy's flattening of
    each (which, with its assumption queries, took a quarter of the ANYmal's derivative
    program): each term's coefficient negated, the terms sorted as Add sorts them. A
    term that SymPy would distribute over (a number times a sum) is left to SymPy."""
    terms = expr.args if expr.is_Add else (expr,)
    out = []
    for t in terms:
        if t.is_Number:
            out.append(-t)
            continue
        if not t.is_Mul:
            out.append(sm.Mul._from_args((sm.S.NegativeOne, t)))
            continue
        c, rest = (t.args[0], t.args[1:]) if t.args[0].is_Number else (sm.S.One, t.args)
        if any(a.is_Add for a in rest) or not t.is_commutative:
            return -expr
        if c is sm.S.NegativeOne:
            out.append(rest[0] if len(rest) == 1 else sm.Mul._from_args(rest))
        else:
            out.append(sm.Mul._from_args((-c,) + rest))
    if not expr.is_Add:
        return out[0]
    number = [t for t in out if t.is_Number]
    rest = [t for t in out if not t.is_Number]
    _addsort(rest)
    return sm.Add._from_args(number + rest)


#: the default (jacobian=None) builds the Jacobian while its derivative program stays
#: within auto_limit definitions: AUTO_RATIO times the statements of the model's own
#: programs (eval, M, the solve or the recursion, inverse dynamics), and at least
#: AUTO_LIMIT, so that its build grows like the model's. Over a chain it grows as n² (the
#: Jacobian's n² entries): the pendulum on a cart gets it by default up to n = 43. Ask
#: for it with jacobian=True. At most AUTO_CAP definitions by default: past it the
#: derivative program's compile dominates the build (the Atlas, 4,641, gets it; the
#: Talos, 5,823, does not).
AUTO_LIMIT, AUTO_RATIO, AUTO_CAP = 1000, 1.6, 5000


def auto_limit(programs: dict) -> int:
    """The default's limit on the derivative program's definitions, from the model's own
    programs built so far (codegen.algorithms.plan.build_programs)."""
    own = sum(len(p.temporaries) for p in programs.values())
    return max(AUTO_LIMIT, min(int(AUTO_RATIO * own), AUTO_CAP))


def jacobian_program(eom, limit: int | None = None, rhs_operations: int | None = None
                     ) -> Program | None:
    """Outputs Jq, R (over the states) and Jqr, Rr (over the specified inputs), row-major;
    input array ud (u'), or with the analytic derivatives where solving u' costs less than
    the right-hand side's rhs_operations (rnea_derivatives.solve_operations) output ud
    (u', solved by the program: the runtime then calls no right-hand side first). Only
    for models without run-time constraints. None when the derivative program would
    exceed limit definitions."""
    nx, nr = eom.nq + eom.nu, len(eom.specifieds)
    return _derivative_program(eom, list(eom.q) + list(eom.u) + list(eom.specifieds),
                               [("Jq", "qd", 0, nx), ("R", "res", 0, nx),
                                ("Jqr", "qd", nx, nr), ("Rr", "res", nx, nr)], limit,
                               rhs_operations)


def parameter_jacobian_program(eom) -> Program:
    """Outputs Jqp (nq x np) and Rp (nu x np), the same parts over the constants p:
    the parameter sensitivities d x'/dp = [Jqp; M^-1 Rp]."""
    n = len(eom.constants)
    return _derivative_program(eom, list(eom.constants),
                               [("Jqp", "qd", 0, n), ("Rp", "res", 0, n)], None)


def _values(eom) -> tuple:
    """(u' symbols, program): q' ("qd") and the dynamics' residual F - M u' at the given
    u' ("res"), whose derivative is R. Over a tree of bodies the residual is minus the
    Newton–Euler program's tau (codegen.algorithms.rnea: O(n), a fraction of M's and F's
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
    1,644 for 1,380), and costs a walk over the program where forming the derivatives
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
#: the limit: it errs high (by up to 45 % on the pendulum on a cart), as it does not see
#: the entries found among the values
_BOUND_MARGIN = 1.6


#: an analytic derivative program (codegen.algorithms.rnea_derivatives) of at most this many
#: operations is compared with forward mode's, and the smaller kept: on a small tree the
#: analytic one's cost per joint can outweigh its savings per pair; past it, forward
#: mode's build is long and has not been smaller on any robot measured
COMPARE_BELOW = 4000

#: up to this many speeds forward mode alone: there the analytic program's build (its
#: check at two points included) costs more than its fewer operations save (the 4-link
#: pendulum on a cart: twice forward mode's build time, for 12 % fewer operations)
FORWARD_ONLY_SPEEDS = 5


def _derivative_program(eom, wrt: list, groups: list, limit, rhs_operations=None
                        ) -> Program | None:
    """The derivatives over wrt of q' ("qd") and of F - M u' ("res"), as output arrays
    [(name, of, first direction, count)]; None past limit definitions. Over q, u and r of
    a tree that fits, the analytic derivatives (_analytic_program) where they have fewer
    operations (with u' solved where that costs less than rhs_operations, the
    right-hand side's, which forward mode's program then needs first), else forward
    mode over the value program."""
    if wrt == list(eom.q) + list(eom.u) + list(eom.specifieds) and eom.nu > FORWARD_ONLY_SPEEDS:
        solve = rhs_operations is not None and solve_operations(eom) < rhs_operations
        analytic = _analytic_program(eom, wrt, groups, solve)
        if analytic is not None:
            program, count = analytic
            if limit is not None and count > limit:
                return None
            if program.operation_count > COMPARE_BELOW:
                return program
            forward = _forward_program(eom, wrt, groups, limit)
            rhs = rhs_operations if solve else 0
            return forward if forward is not None and \
                forward.operation_count + rhs < program.operation_count else program
    return _forward_program(eom, wrt, groups, limit)


def _forward_program(eom, wrt: list, groups: list, limit) -> Program | None:
    """_derivative_program's by forward mode over the value program (_values)."""
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
    defs, arrays = _inline_single_uses(kept + tangents.defs, arrays)
    return make_program(plain, arrays, extra_inputs=extra, extra_intermediates=defs)


def _analytic_program(eom, wrt, groups, solve: bool = False) -> tuple | None:
    """(program, definitions): the same outputs over q, u and r from the Newton–Euler
    residual's analytic derivatives (codegen.algorithms.rnea_derivatives), with solve u' too
    (output ud), or None where the tree does not fit."""
    tangents = _Tangents(wrt)
    found = rnea_derivatives(eom, tangents, solve)
    if found is False:                  # the solve of u' failed its check: without it
        return _analytic_program(eom, wrt, groups)
    if found is None:
        return None
    ud, temporaries, dtau, ddq, count, factor = found
    of = {"qd": ddq, "res": [[-e for e in row] for row in dtau]}
    arrays = [(name, [row[first + k] for row in of[which] for k in range(count)])
              for name, which, first, count in groups]
    kept = [Intermediate(s, e, f"jv{i}") for i, (s, e) in enumerate(temporaries)]
    extra = [] if solve else [(s, "ud", j, f"cg_ud{j}") for j, s in enumerate(ud)]
    layout = None
    if solve:
        # u', and M's factor for the columns function (codegen.algorithms.jacobian_columns), which then
        # solves R without forming it again
        order, (L, _, inv) = factor
        positions = tuple((i, j) for i in range(len(order)) for j in range(i) if L[i, j] != 0)
        arrays = [("ud", list(ud)), ("L", [L[k] for k in positions] + list(inv))] + arrays
        layout = (tuple(order), positions)
    defs, arrays = _inline_single_uses(kept + tangents.defs, arrays)
    program = make_program(dataclasses.replace(eom, intermediates=[]), arrays,
                           extra_inputs=extra, extra_intermediates=defs)
    return dataclasses.replace(program, factor_layout=layout), count + len(tangents.defs)


def _inline_single_uses(defs: list, arrays: list) -> tuple:
    """(defs, arrays) with each definition used once spliced into its user: the same
    operations in fewer statements (the iiwa's 1,460 for 1,721), which keeps more
    derivative programs within codegen.emit.layout's PART_LIMIT, emitted as one
    function whose temporaries the compiler keeps in registers. A sum is not spliced
    into a product with a number: SymPy would distribute the number."""
    uses, user = {}, {}
    for d in defs:
        for a in _symbols(d.expr):
            uses[a] = uses.get(a, 0) + 1
            user[a] = d.expr
    for _, exprs in arrays:
        for e in exprs:
            for a in _symbols(e):
                uses[a] = uses.get(a, 0) + 1
                user[a] = e
    spliced = {d.symbol for d in defs if uses.get(d.symbol) == 1
               and (not d.expr.is_Add or _splices(d.symbol, user[d.symbol]))}
    out, inline = [], {}

    def spliced_into(expr):
        return expr.xreplace({a: inline[a] for a in expr.free_symbols if a in inline}) \
            if inline else expr
    for d in defs:
        expr = spliced_into(d.expr)
        if d.symbol in spliced:
            inline[d.symbol] = expr
        else:
            out.append(Intermediate(d.symbol, expr, d.name))
    return out, [(name, [spliced_into(e) for e in exprs]) for name, exprs in arrays]


def _symbols(expr) -> list:
    """The symbols of expr, each as often as it occurs."""
    return [a for a in sm.preorder_traversal(expr) if a.is_Symbol]


def _splices(symbol, expr) -> bool:
    """Whether a sum's symbol can be replaced by its definition in expr at the same
    operations: not as the factor of a number (Mul(2, a + b) distributes)."""
    for node in sm.preorder_traversal(expr):
        if node.is_Mul and symbol in node.args and any(a.is_number for a in node.args):
            return False
    return True
