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
from sympy.core.add import _addsort
from sympy.core.function import AppliedUndef

from .constraints import Intermediate, define
from .forward import forward
from .inverse import inverse_program
from .program import Input, Program, live_temporaries, make_program, operation_count
from .progress import checkpoint
# the forward recursion's inputs and passes, shared (as codegen.inverse shares them)
from .composite import composite_mass
from .recursive import _inward, _outward, _tree_inputs
from .solve import ldl_factor, ldl_solve

__all__ = ["jacobian_program", "parameter_jacobian_program", "column_solve_program"]


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
#: AUTO_LIMIT, so that its build grows like the model's. The robots' take 0.9 to 1.3
#: times their own (iiwa 1,380 for 1,351, Solo12 3,396 for 3,309, UR5 838 for 655), the
#: pendulum on a cart's 0.6 at n = 12, 0.9 at 20 and 1.9 at 50, where forward mode over
#: a chain grows as n² (the Jacobian's n² entries): built by default to n of about 35.
#: Ask for it with jacobian=True. At most AUTO_CAP definitions by default: past it the
#: derivative program's compile dominates the build (the Atlas: 25 s without, 77 s with it,
#: against issue 31's 60 s; the iiwa 1.9 s and 4.6 s).
AUTO_LIMIT, AUTO_RATIO, AUTO_CAP = 1000, 1.5, 4000


def auto_limit(programs: dict) -> int:
    """The default's limit on the derivative program's definitions, from the model's own
    programs built so far (codegen.plan.build_programs)."""
    own = sum(len(p.temporaries) for p in programs.values())
    return max(AUTO_LIMIT, min(int(AUTO_RATIO * own), AUTO_CAP))


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
#: the limit (it errs high by 15 to 20 % on robots, 45 % on the pendulum on a cart: it
#: does not see the entries found among the values)
_BOUND_MARGIN = 1.6


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
    defs, arrays = _inline_single_uses(kept + tangents.defs, arrays)
    return make_program(plain, arrays, extra_inputs=extra, extra_intermediates=defs)


def _inline_single_uses(defs: list, arrays: list) -> tuple:
    """(defs, arrays) with each definition used once spliced into its user: the same
    operations in fewer statements (the iiwa's 1,460 for 1,721, the 20-link pendulum's
    1,203 for about 2,000), which keeps more derivative programs within codegen.emit's
    PART_LIMIT, emitted as one function whose temporaries the compiler keeps in
    registers. A sum is not spliced into a product with a number: SymPy would
    distribute the number."""
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


def column_solve_program(eom) -> Program | None:
    """M⁻¹ B for a block of columns B (nu x w) over a tree of bodies, unrolled: the solve
    of the Jacobian's R (cg_jacobian), whose runtime alternative, the dense Cholesky
    factorization and its solve with loops, costs nu³/6 multiply-adds and then nu² per
    column, most of them on loop control at a robot's sizes. Of two ways, the one of
    fewer operations over the 2 nu columns of R:

    - the articulated-body recursion (_by_recursion): its inward pass with the bias
      h = 0 and the joint forces Q = b gives the bias p̃ = the share of b alone, its
      outward pass u' = M⁻¹ b: the articulated inertias once, then O(n) per column (the
      long chains);
    - M by the composite-rigid-body algorithm, factored L D Lᵀ once in reversed order
      (leaves first: a tree's factor has no fill-in, Featherstone's LTDL), then the two
      triangular solves per column over the factor's nonzeros (_by_factors; the
      branched robots, where legs are independent), while the factorization stays
      within FACTOR_LIMIT operations.

    Outputs B (nu), read from the input array B (nu), column by column: the
    temporaries free of B come first, computed once (emit: the loop's body is the
    rest). None without a tree, with run-time constraints, under COLUMN_MIN_SPEEDS
    speeds, or where neither has fewer operations per column than the dense solve
    (_column_pays)."""
    if eom.tree is None or eom.constraints is not None or eom.nu < COLUMN_MIN_SPEEDS:
        return None
    nx, best = eom.nq + eom.nu, None
    for how in (_by_recursion, _by_factors) if eom.nu <= FACTOR_SPEEDS else (_by_recursion,):
        made = _split(eom, how)
        if made is None or (how is _by_factors and made[1] > FACTOR_LIMIT):
            continue
        # by operation_count (a - b*c three): counted as the C runs them (two), Talos
        # would take the factors, 22 % fewer operations and 10 % fewer instructions per
        # Jacobian (callgrind), but 8 % slower per call: their once part, twice the
        # recursion's, is straight-line code fetched cold on every call
        if best is None or made[1] + nx * made[2] < best[1] + nx * best[2]:
            best = made
    return best[0] if best is not None and _column_pays(best[2], eom.nu) else None


#: below this many speeds the dense solve is a few hundred instructions and the model
#: gets no column solve (measured to pay from the UR5's six)
COLUMN_MIN_SPEEDS = 6

#: the most operations the composite-rigid-body M and its factor may take in the
#: column solve's once part (_by_factors), and the most speeds it is tried for (a
#: dense factor grows as nu³/6: about 10,000 multiply-adds at 40 speeds)
FACTOR_LIMIT, FACTOR_SPEEDS = 20000, 40


def _by_recursion(eom, define, S, W, h, T, b) -> list | None:
    nodes = eom.tree.nodes
    passed = _inward(nodes, S, W, [[0] * len(v) for v in h], b, T, define)
    return None if passed is None else _outward(nodes, T, passed[0], eom.nu, define)


def _by_factors(eom, define, S, W, h, T, b) -> list | None:
    nu = eom.nu
    mass = composite_mass(eom.tree.nodes, S, W, T, define, nu)
    # reversed: row i of the factored matrix is speed nu - 1 - i
    entry = {(i, j): mass[a * (a + 1) // 2 + c] for i in range(nu) for j in range(i + 1)
             for a, c in [(nu - 1 - j, nu - 1 - i)]}
    factors = ldl_factor({k: e for k, e in entry.items() if e != 0}, nu, define, "cm")
    if factors is None:
        return None
    return ldl_solve(factors, b[::-1], define, "cy", "cz")[::-1]


def _split(eom, how) -> tuple | None:
    """(program, operations once, operations per column) of M⁻¹ b by how."""
    prog, define, _, S, W, h, _, T = _tree_inputs(eom)
    nu = eom.nu
    b = [sm.Dummy(f"b{j}") for j in range(nu)]
    for j, s in enumerate(b):
        define.names[s] = f"cg_b{j}"
        define.used.add(f"cg_b{j}")
    out = how(eom, define, S, W, h, T, b)
    if out is None:
        return None
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
    temps = once + per
    used = set()
    for e in [e for _, e in temps] + out:
        used |= e.free_symbols
    read = {define.names[o] for o in used if o in define.names}
    inputs = [i for i in prog.inputs if i.name in read]
    inputs += [Input(f"cg_b{j}", "B", j, f"B[{j}]") for j, s in enumerate(b) if s in used]
    program = Program(inputs=inputs, names=define.names, temporaries=temps, outputs=outputs)
    return (program, operation_count([e for _, e in once]),
            operation_count([e for _, e in per] + out))


def _column_pays(per_column: int, nu: int) -> bool:
    """Operations per column against the dense solve's instructions per column: its
    forward and back substitution, nu² multiply-adds in loops, measured (callgrind) at
    3.2 nu² instructions at 21 speeds and 8.8 nu² at 6, besides the factorization's
    nu³/6 once; the unrolled solve runs about one instruction per operation."""
    return per_column < 3 * nu * nu
