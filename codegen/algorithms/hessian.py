"""The exact second derivatives of x' = [q'; u'], u' = M⁻¹F, as one program.

For a weight λ = [λ_q; λ_u] the Hessian of λᵀx' over the differentiated inputs z is

    H = ∇²_zz φ − CᵀU − UᵀC,   φ = λ_qᵀ q'(z) + μᵀ (F(z) − M(z) a)

with a = u' and μ = M⁻ᵀλ_u frozen, U = ∂u'/∂z (the Jacobian's u rows) and
C = ∂(Mᵀμ)/∂z. (Differentiate the gradient μᵀR, R = ∂(F − M a)/∂z: a moves by U,
μ by −M⁻ᵀC.) The program takes a and μ as inputs, so the runtime's solve (u' from
cg_rhs, μ from M's factor) stays in C and the symbolic work is only ∇²φ and C;
U comes from cg_jacobian.

φ is formed as a straight-line program (over a tree of bodies the Newton–Euler
program of codegen.algorithms.rnea, φ = λ_qᵀq' − μᵀτ(q, u, a); else the model's
M, F and q' after one CSE), its gradient by reverse mode (codegen.symbolic.reverse_mode:
the adjoints of the temporaries, O(program)), and H and C by forward mode over that
adjoint program (codegen.symbolic.forward_mode, each derivative a definition of its
own: O(nd × program)). The adjoint of a is ∂φ/∂a = −Mᵀμ, so C is minus its
derivative, without forming M. Reading the intermediates through and differentiating
the expressions symbolically instead rebuilt the shared work once per variable
(the iiwa: 258 s and 9,557 temporaries; this way about 5 s and 2,526). The
structural pattern of J comes from which inputs each temporary depends on, that of H
from the entries that are not zero.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sm
from sympy.core.function import AppliedUndef

from ..equations.intermediates import Intermediate
from ..programs.program import Program, make_program
from ..symbolic.forward_mode import forward
from ..symbolic.reverse_mode import adjoints
from .rnea import inverse_program

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


def _value_program(eom) -> tuple:
    """(a's symbols, [("qd", q'), ("res", F − M a)], the temporaries those read): the
    Newton–Euler program's (res = −τ) over a tree of bodies, else the model's M and F."""
    nu = eom.nu
    program = inverse_program(eom, with_qd=True)
    if program is not None:
        by_name = {n: o for o, n in program.names.items()}
        out = dict(program.outputs)
        return [by_name[f"cg_ud{j}"] for j in range(nu)], [("qd", out["qd"]), (
            "res", [-e for e in out["tau"]])], program.temporaries
    a = list(sm.symbols(f"cgh_a0:{nu}", real=True))
    M = eom.M
    res = [eom.F[i] - sm.Add(*[M[i, j] * a[j] for j in range(nu) if M[i, j] != 0])
           for i in range(nu)]
    extra = [(s, "a", j, f"a_{j}") for j, s in enumerate(a)]
    program = make_program(eom, [("qd", list(eom.qdot)), ("res", res)], extra_inputs=extra)
    return a, program.outputs, program.temporaries


def _depends(temporaries: list, zs: list) -> dict:
    """Each input's and temporary's set of the zs it depends on, as a bit mask."""
    mask = {z: 1 << k for k, z in enumerate(zs)}
    for symbol, expr in temporaries:
        m = 0
        for s in expr.free_symbols | expr.atoms(AppliedUndef, sm.Derivative):
            m |= mask.get(s, 0)
        mask[symbol] = m
    return mask


def _columns(expr, mask: dict, nd: int) -> set:
    """The indices of the zs expr depends on."""
    m = 0
    for s in expr.free_symbols | expr.atoms(AppliedUndef, sm.Derivative):
        m |= mask.get(s, 0)
    return {k for k in range(nd) if m >> k & 1}


class _Tangents:
    """Forward mode over a straight-line program: each temporary's gradient over the zs,
    each entry a definition of its own (or a number or a signed symbol)."""

    def __init__(self, zs: list):
        self.grad = {z: {k: sm.S.One} for k, z in enumerate(zs)}
        self.defs = []
        self._memo = {}

    def of(self, expr) -> dict:
        """The gradient of expr (direction -> expression)."""
        return forward([expr], self.grad, {}, self._memo)[0][1]

    def define(self, symbol, expr) -> None:
        """A temporary symbol = expr: its gradient, for the expressions that read it."""
        self.grad[symbol] = {k: self._entry(e) for k, e in self.of(expr).items()}

    def _entry(self, e):
        """e's symbol: e itself if it costs nothing to repeat, else a new definition."""
        if e.is_number or e.is_Symbol or (e.is_Mul and len(e.args) == 2
                                          and e.args[0].is_number and e.args[1].is_Symbol):
            return e
        symbol = sm.Dummy(f"ht{len(self.defs)}")
        self.defs.append(Intermediate(symbol, e, f"ht{len(self.defs)}"))
        return symbol


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
    zs = _variables(eom, blocks)
    nd = len(zs)
    sizes = {"x": nq + nu, "r": len(eom.specifieds), "p": len(eom.constants)}
    mu = sm.symbols(f"cgh_mu0:{nu}", real=True)
    lq = sm.symbols(f"cgh_lq0:{nq}", real=True)
    a, outputs, temporaries = _value_program(eom)
    qdot, residual = dict(outputs)["qd"], dict(outputs)["res"]

    mask = _depends(temporaries, zs)
    comp = _components(eom.M, nu)
    r_cols = [_columns(e, mask, nd) for e in residual]
    jac = {(i, k) for i in range(nq) for k in _columns(qdot[i], mask, nd)}
    for i in range(nu):
        for j in range(nu):
            if comp[j] == comp[i]:
                jac |= {(nq + i, k) for k in r_cols[j]}

    phi = sm.Add(*[lq[i] * qdot[i] for i in range(nq)], *[mu[i] * residual[i] for i in range(nu)])
    adjoint_defs, gradient = adjoints(temporaries, phi, zs + list(a), "hb")
    # ∂φ/∂a = −Mᵀμ: C is minus its derivative
    gradient, mtmu = gradient[:nd], [-g for g in gradient[nd:]]
    tangents = _Tangents(zs)
    for symbol, expr in list(temporaries) + adjoint_defs:
        tangents.define(symbol, expr)
    H = []
    hess = set()
    for k in range(nd):
        row = tangents.of(gradient[k])
        for l in range(k + 1):
            h = row.get(l, sm.S.Zero)
            H.append(h)
            if h != 0:
                hess |= {(k, l), (l, k)}
    C = []
    for i in range(nu):
        row = tangents.of(mtmu[i])
        C += [row.get(k, sm.S.Zero) for k in range(nd)]
    # CᵀU and UᵀC: (k, l) where some speed's row of C reads z_k and its row of J z_l
    for i in range(nu):
        ck = {k for k in range(nd) if C[i * nd + k] != 0}
        ul = {k for (row, k) in jac if row == nq + i}
        hess |= {(k, l) for k in ck for l in ul} | {(l, k) for k in ck for l in ul}
    extra = ([(s, "a", i, f"a_{i}") for i, s in enumerate(a)]
             + [(s, "mu", i, f"mu_{i}") for i, s in enumerate(mu)]
             + [(s, "lq", i, f"lq_{i}") for i, s in enumerate(lq)])
    # the value and adjoint programs' temporaries become definitions of this one (the
    # intermediates among them), all in one more CSE with the derivatives
    defs = ([Intermediate(s, e, f"hv{i}") for i, (s, e) in enumerate(temporaries)]
            + [Intermediate(s, e, f"hb{i}") for i, (s, e) in enumerate(adjoint_defs)]
            + tangents.defs)
    plain = replace(eom, intermediates=[])
    program = make_program(plain, [("H", H), ("C", C)], extra_inputs=extra,
                           extra_intermediates=defs)
    return SecondDerivatives(program=program, blocks=tuple(blocks), sizes=sizes, nd=nd,
                             jacobian=jac, hessian=hess)
