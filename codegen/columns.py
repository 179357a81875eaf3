"""The Jacobian's solve M Z = R over a tree of bodies, column by column, as one
straight-line program (the generated "columns" function): M⁻¹ B for the derivative
programs' R (codegen.jacobian), by the articulated-body recursion or by the factors of
the composite-rigid-body M, where it costs less than the runtime's dense solve."""
from __future__ import annotations

import sympy as sm

# the forward recursion's inputs and passes, shared (as codegen.inverse shares them)
from .composite import composite_mass
from .program import Input, Program, live_temporaries, operation_count
from .recursive import _inward, _outward, _tree_inputs
from .solve import ldl_factor, ldl_solve

__all__ = ["column_solve_program"]


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
