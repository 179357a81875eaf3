"""The parts of the analytic Jacobian of x' = [q'(x, r, t); u'], as one straight-line program.

With M(q, r, t) u' = F(x, r, t), differentiating at a state where u' is known:

    d q'/dx   = the kinematics' Jacobian                      (Jq,  nq x nx)
    M du'/dx  = dF/dx - (dM/dx) u'           =: R             (nu x nx)

and the same over the specified inputs r (Jqr, Rr). The program takes u'
as an input array (the runtime computes it first with the model's own
solve) and returns Jq and R; the runtime then solves M Z = R with M's
factorization (cg_jacobian). So the Jacobian is analytic: symbolic
derivatives of the parts, through one CSE, with no finite differences and
no blind differentiation of M⁻¹F. Derivatives pass through the model's
intermediates (the dependent speeds' solve) by the chain rule, each
intermediate's derivative an intermediate of its own (forward mode).
"""
from __future__ import annotations

import sympy as sm

from .constraints import Intermediate
from .kernel import Program, make_program

__all__ = ["jacobian_program"]


def jacobian_program(eom) -> Program:
    """Outputs Jq, R (over the states) and Jqr, Rr (over the specified inputs), row-major;
    input array ud (u'). Only for models without run-time constraints."""
    states = list(eom.q) + list(eom.u)
    wrt = states + list(eom.specifieds)
    known = {item.symbol for item in eom.intermediates}
    d, new = {}, []             # (intermediate, k) -> its derivative's symbol

    def total(expr, k, v):
        """d expr / d v, through the intermediates defined so far."""
        expr = sm.sympify(expr)
        out = expr.diff(v) if expr.has(v) else sm.S.Zero
        for s in expr.free_symbols & known:
            ds = d.get((s, k))
            if ds is not None:
                out += expr.diff(s) * ds
        return out
    for item in eom.intermediates:
        for k, v in enumerate(wrt):
            der = total(item.expr, k, v)
            if der != 0:
                sym = sm.Dummy(f"d{k}_{item.name}")
                new.append(Intermediate(sym, der, f"d{k}_{item.name}"))
                d[item.symbol, k] = sym
    nu = eom.nu
    ud = [sm.Dummy(f"ud{j}") for j in range(nu)]
    M = eom.M
    # residual of the dynamics at the given u': its derivative is R
    res = [eom.F[i] - sm.Add(*[M[i, j] * ud[j] for j in range(nu) if M[i, j] != 0])
           for i in range(nu)]

    def rows(exprs, variables, offset):
        return [total(e, offset + k, v) for e in exprs for k, v in enumerate(variables)]
    nx = len(states)
    groups = [("Jq", rows(eom.qdot, states, 0)), ("R", rows(res, states, 0)),
              ("Jqr", rows(eom.qdot, eom.specifieds, nx)), ("Rr", rows(res, eom.specifieds, nx))]
    extra = [(s, "ud", j, f"cg_ud{j}") for j, s in enumerate(ud)]
    return make_program(eom, groups, extra_inputs=extra, extra_intermediates=new)
