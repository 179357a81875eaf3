"""The exact second derivatives of x' = [q'; u'], u' = M⁻¹F, as one program.

For a weight λ = [λ_q; λ_u] the Hessian of λᵀx' over the differentiated inputs z is

    H = ∇²_zz φ − CᵀU − UᵀC,   φ = λ_qᵀ q'(z) + μᵀ (F(z) − M(z) a)

with a = u' and μ = M⁻ᵀλ_u frozen, U = ∂u'/∂z (the Jacobian's u rows) and
C = ∂(Mᵀμ)/∂z. (Differentiate the gradient μᵀR, R = ∂(F − M a)/∂z: a moves by U,
μ by −M⁻ᵀC.) The program takes a and μ as inputs, so the runtime's solve (u' from
cg_rhs, μ from M's factor) stays in C and the symbolic work is only ∇²φ and C;
U comes from cg_jacobian. The structural patterns of J and H come from the same
expressions: an entry whose expression does not contain the variable is zero.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sm

from ..programs.program import Program, make_program

__all__ = ["BLOCKS", "SecondDerivatives", "second_derivative_program"]

#: the inputs of x' = f(x, r, p), in f's order
BLOCKS = ("x", "r", "p")


@dataclass
class SecondDerivatives:
    """The program and the structure of x'(z)'s first and second derivatives.

    program: inputs x, p, r and a (u'), mu (μ), lq (λ_q); outputs H (∇²φ, nd x nd
    packed lower triangle by rows) and C (∂(Mᵀμ)/∂z, nu x nd row-major).
    blocks: the differentiated input blocks, of BLOCKS; nd their total size.
    jacobian: the (row, column) pairs of ∂x'/∂z that may be nonzero (z over blocks).
    hessian: the (k, l) pairs of H that may be nonzero (both triangles).
    """
    program: Program
    blocks: tuple
    sizes: dict
    nd: int
    jacobian: set
    hessian: set


def _variables(eom, blocks) -> list:
    table = {"x": [*eom.q, *eom.u], "r": list(eom.specifieds), "p": list(eom.constants)}
    return [v for b in blocks for v in table[b]]


def _components(M, n) -> list:
    """The connected block of M's structure each speed belongs to: u'ᵢ = (M⁻¹R)ᵢ mixes
    the rows of R in its block, and no other."""
    comp = list(range(n))

    def find(i):
        while comp[i] != i:
            comp[i] = comp[comp[i]]
            i = comp[i]
        return i
    for i in range(n):
        for j in range(n):
            if M[i, j] != 0:
                comp[find(i)] = find(j)
    return [find(i) for i in range(n)]


def second_derivative_program(eom, blocks=("x", "r")) -> SecondDerivatives:
    """The second-derivative program of eom's x' over the input blocks (a tuple of
    "x", "r", "p"). Refuses run-time constraints and dependent speeds: their x' is not
    M⁻¹F of the plain inputs."""
    if eom.constraints is not None:
        raise ValueError("the model has run-time constraints: its x' is the projected "
                         "dynamics, which the second-derivative program does not cover")
    unknown = [b for b in blocks if b not in BLOCKS]
    if unknown:
        raise ValueError(f"unknown input blocks {unknown}: use some of {BLOCKS}")
    nq, nu = eom.nq, eom.nu
    # the named intermediates read through, so that differentiation sees every input
    # (the program's CSE finds the shared work again)
    defs = {}
    for item in eom.intermediates:
        defs[item.symbol] = sm.sympify(item.expr).xreplace(defs)
    M = sm.Matrix(nu, nu, lambda i, j: sm.sympify(eom.M[i, j]).xreplace(defs))
    F = [sm.sympify(eom.F[i]).xreplace(defs) for i in range(nu)]
    qdot = [sm.sympify(e).xreplace(defs) for e in eom.qdot]
    zs = _variables(eom, blocks)
    nd = len(zs)
    sizes = {"x": nq + nu, "r": len(eom.specifieds), "p": len(eom.constants)}
    a = sm.symbols(f"cgh_a0:{nu}", real=True)
    mu = sm.symbols(f"cgh_mu0:{nu}", real=True)
    lq = sm.symbols(f"cgh_lq0:{nq}", real=True)

    def reads(expr) -> set:
        expr = sm.sympify(expr)
        return {k for k, z in enumerate(zs) if expr.has(z)}

    residual = [F[i] - sum((M[i, j] * a[j] for j in range(nu)), sm.S.Zero) for i in range(nu)]
    comp = _components(M, nu)
    r_cols = [reads(e) for e in residual]
    jac = {(i, k) for i in range(nq) for k in reads(qdot[i])}
    for i in range(nu):
        for j in range(nu):
            if comp[j] == comp[i]:
                jac |= {(nq + i, k) for k in r_cols[j]}
    phi = (sum((lq[i] * qdot[i] for i in range(nq)), sm.S.Zero)
           + sum((mu[i] * residual[i] for i in range(nu)), sm.S.Zero))
    gradient = [sm.diff(phi, z) for z in zs]
    H = []
    hess = set()
    for k in range(nd):
        for l in range(k + 1):
            h = sm.diff(gradient[k], zs[l]) if gradient[k] != 0 else sm.S.Zero
            H.append(h)
            if h != 0:
                hess |= {(k, l), (l, k)}
    mtmu = [sum((M[j, i] * mu[j] for j in range(nu)), sm.S.Zero) for i in range(nu)]
    C = [sm.diff(mtmu[i], z) for i in range(nu) for z in zs]
    # CᵀU and UᵀC: (k, l) where some speed's row of C reads z_k and its row of J z_l
    for i in range(nu):
        ck = {k for k in range(nd) if C[i * nd + k] != 0}
        ul = {k for (row, k) in jac if row == nq + i}
        hess |= {(k, l) for k in ck for l in ul} | {(l, k) for k in ck for l in ul}
    extra = ([(s, "a", i, f"a_{i}") for i, s in enumerate(a)]
             + [(s, "mu", i, f"mu_{i}") for i, s in enumerate(mu)]
             + [(s, "lq", i, f"lq_{i}") for i, s in enumerate(lq)])
    program = make_program(eom, [("H", H), ("C", C)], extra_inputs=extra)
    return SecondDerivatives(program=program, blocks=tuple(blocks), sizes=sizes, nd=nd,
                             jacobian=jac, hessian=hess)
