"""The mass-matrix solve M u' = F as a straight-line program (LDLᵀ, unrolled).

For a symmetric M of known size and known structural zeros, the factorization
M = L D Lᵀ and the two triangular solves are written out entry by entry:

    w_ij = M_ij - sum_{k<j} w_ik L_jk,   L_ij = w_ij / d_j      (j < i)
    d_i  = M_ii - sum_{k<i} w_ik L_ik
    y_i  = F_i - sum_{k<i} L_ik y_k,     u'_i = y_i / d_i - sum_{k>i} L_ki u'_k

Why unrolled: the loop version (cg_cholesky_solve in the runtime's
cg_linalg.c) spends most of its time on loop control and on a serial chain
through each row; straight-line code with no square roots measures about
twice as fast at 9 to 21 unknowns. Terms that are structurally zero (a zero
of M, and the fill-in that follows from it) never appear, so a branched
system pays only for its nonzeros.

The pivots d_i go to an output array: the caller (the runtime's
cg_dynamics.c) compares each with its diagonal entry, so the program itself
stays branch-free.
"""
from __future__ import annotations

import sympy as sm

from ..programs.program import Input, Program

__all__ = ["ldl_program", "ldl_factor", "ldl_solve", "elimination_order"]


def _terms(pairs):
    # unevaluated: sympy's flattening and sorting would cost more than the rest
    return [sm.Mul(a, b, evaluate=False) for a, b in pairs if a != 0 and b != 0]


def _minus(base, terms):
    """base - sum(terms), unevaluated."""
    if not terms:
        return base
    neg = [sm.Mul(sm.S.NegativeOne, t, evaluate=False) for t in terms]
    return sm.Add(*([base] if base != 0 else []), *neg, evaluate=False)


class _TooLarge(Exception):
    pass


def ldl_factor(a: dict, n: int, define, tag: str = "", positive: bool = False):
    """L D Lᵀ of a symmetric n x n matrix given as {(i, j): entry} for j <= i
    (a missing entry is a structural zero), each quantity written through
    define(label, expr), which returns what later expressions use (a symbol,
    or the expression itself if it is trivial). Returns (L, d, inv): L[i, j]
    for j < i (0 where it stays zero), the pivots d and their reciprocals;
    None if a pivot is zero by structure. positive: each reciprocal as
    1 / max(d, 0), infinite where a pivot is not positive, for a caller whose matrix
    must be positive definite and whose finiteness check then reports it."""
    w, L, d, inv = {}, {}, [], []
    for i in range(n):
        for j in range(i):
            wij = _minus(a.get((i, j), sm.S.Zero), _terms((w[i, k], L[j, k]) for k in range(j)))
            w[i, j] = define(f"{tag}w{i}_{j}", wij)
            L[i, j] = (define(f"{tag}l{i}_{j}", sm.Mul(w[i, j], inv[j], evaluate=False))
                       if w[i, j] != 0 else sm.S.Zero)
        d.append(define(f"{tag}d{i}", _minus(a.get((i, i), sm.S.Zero),
                                             _terms((w[i, k], L[i, k]) for k in range(i)))))
        if d[i] == 0:
            return None
        inv.append(define(f"{tag}e{i}", sm.Pow(sm.Max(d[i], 0) if positive else d[i], -1,
                                                evaluate=False)))
    return L, d, inv


def _scaled(e, c):
    return e if c == 1 else sm.Mul(e, c, evaluate=False)


def lu_factor(a: dict, n: int, define, tag: str = ""):
    """L U of a general n x n matrix {(i, j): entry} (missing: structural zero), without
    pivoting, each quantity through define (see ldl_factor). Returns (L, U, inv): L[i, j]
    for j < i (unit diagonal), U[i, j] for j >= i, inv[i] = 1 / U[i, i]; None if a pivot
    is zero by structure."""
    L, U, inv = {}, {}, []
    for i in range(n):
        for j in range(i, n):
            U[i, j] = define(f"{tag}u{i}_{j}", _minus(sm.sympify(a.get((i, j), 0)),
                                                      _terms((L[i, k], U[k, j]) for k in range(i))))
        if U[i, i] == 0:
            return None
        inv.append(sm.S.One / U[i, i] if U[i, i].is_number
                   else define(f"{tag}v{i}", sm.Pow(U[i, i], -1, evaluate=False)))
        for r in range(i + 1, n):
            w = _minus(a.get((r, i), sm.S.Zero), _terms((L[r, k], U[k, i]) for k in range(i)))
            L[r, i] = define(f"{tag}m{r}_{i}", _scaled(w, inv[i])) \
                if w != 0 else sm.S.Zero
    return L, U, inv


def lu_solve(factors, b: list, define, label: str, transposed: bool = False) -> list:
    """A⁻¹ b (or A⁻ᵀ b) from lu_factor's factors of A."""
    L, U, inv = factors
    n = len(b)
    if not transposed:          # L y = b, then U x = y
        y = []
        for i in range(n):
            y.append(define(f"{label}y{i}", _minus(b[i], _terms((L[i, k], y[k]) for k in range(i)))))
        x = [None] * n
        for i in reversed(range(n)):
            x[i] = define(f"{label}{i}", _scaled(_minus(y[i], _terms((U[i, k], x[k])
                                                                     for k in range(i + 1, n))),
                                                inv[i]))
        return x
    y = []                      # Uᵀ y = b, then Lᵀ x = y
    for i in range(n):
        y.append(define(f"{label}y{i}", _scaled(_minus(b[i], _terms((U[k, i], y[k])
                                                                    for k in range(i))), inv[i])))
    x = [None] * n
    for i in reversed(range(n)):
        x[i] = define(f"{label}{i}", _minus(y[i], _terms((L[k, i], x[k]) for k in range(i + 1, n))))
    return x


def ldl_solve(factors, b: list, define, y_label: str, x_label: str) -> list:
    """(L D Lᵀ)^-1 b from ldl_factor's factors, by the two triangular solves."""
    L, _, inv = factors
    n = len(b)
    y = []
    for i in range(n):
        y.append(define(f"{y_label}{i}", _minus(b[i], _terms((L[i, k], y[k]) for k in range(i)))))
    x = [None] * n
    for i in reversed(range(n)):
        # the x computed last (x[i + 1]) subtracted last: the chain of subtractions (of
        # fused multiply-adds, in cg_math.h's AVX2 copy) runs while it is computed
        x[i] = define(f"{x_label}{i}", _minus(sm.Mul(y[i], inv[i], evaluate=False), _terms(
            (L[k, i], x[k]) for k in reversed(range(i + 1, n)))))
    return x


def _fill(nonzero: set, n: int) -> int:
    """The structural nonzeros of L (below the diagonal) that L D Lᵀ of an n x n matrix
    with the given nonzeros {(i, j): j < i} leaves, in this order."""
    L = set()
    for i in range(n):
        for j in range(i):
            if (i, j) in nonzero or any((i, k) in L and (j, k) in L for k in range(j)):
                L.add((i, j))
    return len(L)


def elimination_order(nonzero: set, n: int) -> list:
    """The order of the unknowns for L D Lᵀ: as given, or reversed where that leaves fewer
    nonzeros in L. Over a tree of bodies whose speeds come parent first, the reversed
    order (leaves first: Featherstone's L Dᵀ L, "Efficient factorization of the
    joint-space inertia matrix for branched kinematic trees", IJRR 2005) leaves none
    beyond M's own, where root first fills in every branch below a joint (a free-floating
    base's six columns fill all of M)."""
    reverse = {(n - 1 - j, n - 1 - i) for i, j in nonzero}
    return list(reversed(range(n))) if _fill(reverse, n) < _fill(nonzero, n) else list(range(n))


def ldl_program(mass: list, nu: int, limit: int) -> Program | None:
    """The unrolled solve of a symmetric M given as its packed lower triangle
    (row by row), or None when it would exceed limit multiply-adds (Options.unrolled_limit).
    The unknowns are eliminated in elimination_order's order.

    Inputs: M (the packed entries that are not structurally zero) and F.
    Outputs: F (overwritten by u') and D (the pivots, each at its unknown's index)."""
    zero = [sm.sympify(e) == 0 for e in mass]
    order = elimination_order({(i, j) for i in range(nu) for j in range(i)
                               if not zero[i * (i + 1) // 2 + j]}, nu)
    at = {v: k for k, v in enumerate(order)}          # an unknown's place in the order
    inputs, names, temps = [], {}, []
    a = {}
    for i in range(nu):
        for j in range(i + 1):
            k = i * (i + 1) // 2 + j
            if not zero[k]:
                s = sm.Symbol(f"a{k}", real=True)
                a[max(at[i], at[j]), min(at[i], at[j])] = s
                names[s] = str(s)
                inputs.append(Input(str(s), "M", k, f"M[{i}][{j}]"))
    b = []
    for i in range(nu):
        s = sm.Symbol(f"b{i}", real=True)
        names[s] = str(s)
        inputs.append(Input(str(s), "F", i, f"F[{i}]"))
        b.append(s)
    count = 0

    def define(label, expr):
        nonlocal count
        count += len(expr.args) if expr.is_Add else 1     # multiply-adds, about
        if count > limit:
            raise _TooLarge        # stop early: the rest would only grow
        if expr == 0 or expr.is_Symbol:
            return expr
        s = sm.Symbol(label, real=True)
        names[s] = label
        temps.append((s, expr))
        return s

    try:
        factors = ldl_factor(a, nu, define)
        if factors is None:
            return None          # singular by structure: the loop version reports it
        x = ldl_solve(factors, [b[v] for v in order], define, "y", "u")
    except _TooLarge:
        return None
    return Program(inputs=inputs, names=names, temporaries=temps,
                   outputs=[("F", [x[at[i]] for i in range(nu)]),
                            ("D", [factors[1][at[i]] for i in range(nu)])])
