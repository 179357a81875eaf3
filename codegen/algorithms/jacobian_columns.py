"""The Jacobian's solve M Z = R over a tree of bodies, column by column, as one
straight-line program (the generated "columns" function): M⁻¹ B for the derivative
programs' R (codegen.algorithms.jacobian), by the articulated-body recursion or by the factors of
the composite-rigid-body M, where it costs less than the runtime's dense solve."""
from __future__ import annotations

import copy

import sympy as sm

# the forward recursion's inputs and passes, shared (as codegen.algorithms.rnea shares them)
from .crba import composite_mass
from ..programs.program import Input, Program, live_temporaries
from ..symbolic.counting import operation_count
from .tree_passes import inward, outward, tree_inputs
from .ldlt import ldl_factor, ldl_solve

__all__ = ["column_solve_program"]


def column_solve_program(eom, supports: list | None = None, given: tuple | None = None
                         ) -> Program | None:
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
    rest). With supports (the rows each column of the Jacobian's R can be nonzero in,
    state_supports), the columns whose support is small also get bodies of their own
    (column_groups): each reads only its support's rows, the others being zeros by
    structure (a column over a joint's coordinate or speed is zero off the joints on
    its path to the root and in its subtree), which saves the recursion's inward pass
    or the first triangular solve off them; the function takes them when the runtime
    says B is R (its state argument). None without a tree, with run-time constraints, under COLUMN_MIN_SPEEDS
    speeds, or where neither has fewer operations per column than the dense solve
    (_column_pays). given: the factor_layout of a Jacobian's program that leaves M's
    factor in its output L (codegen.algorithms.jacobian): then the solves read it from the input
    array L (_Given), and nothing is formed once."""
    if eom.tree is None or eom.constraints is not None or eom.nu < COLUMN_MIN_SPEEDS:
        return None
    nx, best = eom.nq + eom.nu, None
    groups = column_groups(supports, eom.nu) if supports else []
    # R's columns that are zero by structure (a floating base's position: the dynamics do
    # not change with it) are solved by no body: their zeros are the solution already
    zero = frozenset(c for c, s in enumerate(supports) if not s) if groups else frozenset()
    hows = (_Given(given),) if given is not None else \
        (_by_recursion, _by_factors) if eom.nu <= FACTOR_SPEEDS else (_by_recursion,)
    for how in hows:
        made = _split(eom, how, groups, zero)
        if made is None or (how is _by_factors and made[1] > FACTOR_LIMIT):
            continue
        if groups and made[3] > (1 - GROUPS_SAVE) * nx * made[2]:
            made = _split(eom, how)               # the groups do not pay: one body
        # by operation_count (a - b*c counts three), not as the C runs them (two): so
        # counted, a robot like the Talos would take the factors, whose once part, twice
        # the recursion's, is straight-line code fetched cold on every call and ran
        # slower for fewer instructions. With R's groups (column_groups) the factors are
        # taken, and are the faster (Talos's column solve: 106k instructions against 136k)
        if best is None or made[1] + made[3] < best[1] + best[3]:
            best = made
    return best[0] if best is not None and _column_pays(best[2], eom.nu) else None


def state_supports(jacobian: Program, nu: int, nx: int) -> list:
    """The rows each column of R (the Jacobian program's nu x nx output, row-major) can
    be nonzero in: those whose entry is not zero by structure."""
    R = dict(jacobian.outputs)["R"]
    return [frozenset(i for i in range(nu) if R[i * nx + c] != 0) for c in range(nx)]


#: the share of the operations over R's columns the groups must save to be kept: a
#: column taken out of the dense body's runs of four leaves others to run alone, which
#: costs more than a small saving (the UR5's one zero column cost it 10 % more
#: instructions)
GROUPS_SAVE = 0.1

#: the most bodies of their own a column solve takes beside its dense one, and the
#: largest share of the rows a column's support may have to get one: each body is
#: code of the size of the dense one's share of those rows, so that past four bodies
#: the operations they save no longer pay for the code they add (docs/design.md,
#: "Measured")
GROUPS, GROUP_SHARE = 4, 0.7


def column_groups(supports: list, nu: int) -> list:
    """[(support, columns)]: the columns of R in at most GROUPS groups with small
    supports (the rest stay with the dense body), merged greedily at the least increase
    of columns times rows (their union's)."""
    by_support = {}
    for c, s in enumerate(supports):
        if s and len(s) <= GROUP_SHARE * nu:         # an empty one: no solve (zero)
            by_support.setdefault(s, []).append(c)
    groups = sorted(by_support.items(), key=lambda g: (sorted(g[0]), g[1]))
    while len(groups) > max(GROUPS, 1):
        best = None
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                (sa, ca), (sb, cb) = groups[a], groups[b]
                grown = len(sa | sb) * (len(ca) + len(cb)) - len(sa) * len(ca) - len(sb) * len(cb)
                if best is None or grown < best[0]:
                    best = (grown, a, b)
        _, a, b = best
        merged = (groups[a][0] | groups[b][0], sorted(groups[a][1] + groups[b][1]))
        groups = [g for k, g in enumerate(groups) if k not in (a, b)] + [merged]
    return [(s, cols) for s, cols in sorted(groups, key=lambda g: g[1])
            if len(s) <= GROUP_SHARE * nu]


#: below this many speeds the dense solve is a few hundred instructions and the model
#: gets no column solve (measured to pay from the UR5's six)
COLUMN_MIN_SPEEDS = 6

#: the most operations the composite-rigid-body M and its factor may take in the
#: column solve's once part (_by_factors), and the most speeds it is tried for (a
#: dense factor grows as nu³/6: about 10,000 multiply-adds at 40 speeds)
FACTOR_LIMIT, FACTOR_SPEEDS = 20000, 40


def _by_recursion(eom, define, S, W, h, T, b) -> list | None:
    nodes = eom.tree.nodes
    passed = inward(nodes, S, W, [[0] * len(v) for v in h], b, T, define)
    return None if passed is None else outward(nodes, T, passed[0], eom.nu, define)


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


def _split(eom, how, groups=(), zero=frozenset()) -> tuple | None:
    """(program, operations once, operations per column of the dense body, operations
    over R's nx columns) of M⁻¹ b by how, with a body of its own per group
    (column_groups): output B<g> (B1, B2, ...) from inputs cg_b<j>_g<g>; the columns in
    zero (R's zero columns) in no body."""
    prog, define, _, S, W, h, _, T = tree_inputs(eom)
    nu, nx = eom.nu, eom.nq + eom.nu
    bodies = []                       # (suffix, output name, b, out)
    shared = _Shared(define)
    for g, (support, _) in enumerate([(None, None)] + list(groups)):
        suffix = f"_g{g}" if g else ""
        b = [sm.Dummy(f"b{j}{suffix}") if support is None or j in support else sm.S.Zero
             for j in range(nu)]
        for j, s in enumerate(b):
            if s != 0:
                define.names[s] = f"cg_b{j}{suffix}"
                define.used.add(f"cg_b{j}{suffix}")
        shared.zeros = bool(g)
        out = how(eom, shared, S, W, h, [shared.transport(t) for t in T], b) if groups \
            else how(eom, define, S, W, h, T, b)
        if out is None:
            return None
        bodies.append((suffix, f"B{g}" if g else "B", b, out))
    outputs = [(name, out) for _, name, _, out in bodies]
    temps = live_temporaries(define.temps, outputs)
    # those free of b first (none depends on one that is not), then each body's
    once, per = [], [[] for _ in bodies]
    column = [{s for s in b if s != 0} for _, _, b, _ in bodies]
    for sym, expr in temps:
        owner = next((g for g, c in enumerate(column) if expr.free_symbols & c), None)
        if owner is None:
            once.append((sym, expr))
        else:
            column[owner].add(sym)
            per[owner].append((sym, expr))
    temps = once + [t for body in per for t in body]
    used = set()
    for e in [e for _, e in temps] + [e for _, out in outputs for e in out]:
        used |= e.free_symbols
    read = {define.names[o] for o in used if o in define.names}
    inputs = [i for i in prog.inputs if i.name in read]
    if isinstance(how, _Given):
        inputs += how.inputs(used)
    for suffix, _, b, _ in bodies:
        inputs += [Input(f"cg_b{j}{suffix}", "B", j, f"B[{j}]") for j, s in enumerate(b)
                   if s != 0 and s in used]
    per_column = [operation_count([e for _, e in body] + out)
                  for body, (_, _, _, out) in zip(per, bodies)]
    grouped = sum(len(cols) for _, cols in groups)
    dense = [c for c in range(nx) if c not in {c for _, cols in groups for c in cols} | zero]
    program = Program(inputs=inputs, names=define.names, temporaries=temps, outputs=outputs,
                      column_groups=[("B", dense)] + [(name, cols) for (_, name, _, _), (_, cols)
                                                      in zip(bodies[1:], groups)]
                      if groups else [])
    over_state = (nx - grouped - len(zero)) * per_column[0] + sum(
        len(cols) * n for (_, cols), n in zip(groups, per_column[1:]))
    return program, operation_count([e for _, e in once]), per_column[0], over_state


class _Given:
    """_split's how where M's factor is given: its entries read from the input array L in
    the Jacobian program's layout (codegen.programs.program.Program.factor_layout: the speed of
    each of the factor's rows, the nonzero positions of its L; then the reciprocal
    pivots), then the two triangular solves."""

    def __init__(self, layout):
        self.order, self.positions = layout
        self.row = {j: i for i, j in enumerate(self.order)}
        self.symbols = [sm.Symbol(f"cg_L{k}", real=True)
                        for k in range(len(self.positions) + len(self.order))]
        given, n = dict(zip(self.positions, self.symbols)), len(self.order)
        self.factors = ({(i, j): given.get((i, j), sm.S.Zero) for i in range(n)
                         for j in range(i)}, None, self.symbols[len(self.positions):])

    def __call__(self, eom, define, S, W, h, T, b):
        base = define.define if isinstance(define, _Shared) else define
        for s in self.symbols:              # the inputs' names, in this solve's program
            base.names[s] = s.name
            base.used.add(s.name)
        x = ldl_solve(self.factors, [b[j] for j in self.order], define, "cy", "cz")
        return [x[self.row[j]] for j in range(len(self.order))]

    def inputs(self, used) -> list:
        """The Input of each entry the solves read."""
        return [Input(f"cg_L{k}", "L", k, f"L[{k}]") for k, s in enumerate(self.symbols)
                if s in used]


class _Shared:
    """Definitions shared by the bodies of a column solve (_split): a quantity defined
    again under the same label and expression (the articulated inertias, M's factor)
    is the one defined first; those of a column's entries differ by their b."""

    def __init__(self, define):
        self.define, self.known, self.zeros = define, {}, False

    def __call__(self, label, expr):
        expr = sm.sympify(expr)
        known = self.known.get((label, expr))
        if known is not None:
            return known
        if self.zeros and expr.has(sm.S.Zero):
            # a group's rows off its support are zeros, which the solves' products
            # (unevaluated, codegen.algorithms.ldlt) would carry as 0*d
            expr = _without_zeros(expr)
        s = self.known[label, expr] = self.define(label, expr)
        return s

    def transport(self, t):
        """A transport of the tree's inputs (codegen.algorithms.tree_passes) defining
        through self."""
        if t is None:
            return None
        t = copy.copy(t)
        t.define = self
        return t


def _without_zeros(expr):
    """expr with its products by zero and its zero terms gone, the rest as it was built
    (evaluating it would let SymPy distribute numbers over sums: more operations)."""
    if expr.is_Atom:
        return expr
    args = [_without_zeros(a) for a in expr.args]
    if expr.is_Mul:
        return sm.S.Zero if any(a == 0 for a in args) else expr.func._from_args(args)
    if expr.is_Add:
        args = [a for a in args if a != 0]
        return sm.S.Zero if not args else args[0] if len(args) == 1 \
            else expr.func._from_args(args)
    return expr.func(*args, evaluate=False) if args != list(expr.args) else expr


def _column_pays(per_column: int, nu: int) -> bool:
    """Operations per column against the dense solve's instructions per column: its
    forward and back substitution, nu² multiply-adds in loops, measured (callgrind) at
    3.2 nu² instructions at 21 speeds and 8.8 nu² at 6, besides the factorization's
    nu³/6 once; the unrolled solve runs about one instruction per operation."""
    return per_column < 3 * nu * nu
