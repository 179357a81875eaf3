"""A flexible body's share of the Gibbs–Appell equations over the model's speeds.

The body's terms (:mod:`codegen.flexible.terms`) are written over its own
accelerations A = [a_O; alpha; eta''] in components of its frame B. The model's
speeds u enter through the motions of B's origin and of B itself, and through the
kinematic equations of the modal coordinates:

    A = Gamma u' + A0,   Gamma = dA/du' (6 + n rows, one column per speed),

Gamma's rows the partial velocities of O, the partial angular velocities of B and
the partials of eta' (all in B), A0 the rates at u' = 0 (a_O, alpha and eta''
with u' = 0). With the body's M_b, h_b and Q_b, S_body = 1/2 A^T M_b A + A^T h_b
gives, by the chain rule,

    M += Gamma^T M_b Gamma,   dS/du'|0 += Gamma^T (M_b A0 + h_b),   Q += Gamma^T Q_b.

Both formulations call :func:`flexible_share` with the motions they read (the
code generator's components or the public vectors rotated into B), so the body
enters each the same way.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sm
from sympy.physics.vector import dynamicsymbols

from .body import FlexibleBody

__all__ = ["Share", "flexible_share", "modal_rows"]


@dataclass
class Share:
    """One body's terms over the speeds: M (dict (j, k) -> entry, j <= k), R = dS/du'
    at u' = 0 and Q (lists over the speeds), and what S needs (Gamma, A0, M_b, h_b)."""
    M: dict
    R: list
    Q: list
    Gamma: list             # 6 + n rows, each a list over the speeds
    A0: list
    Mb: sm.Matrix
    hb: sm.Matrix

    def gibbs_appell_function(self, ud) -> sm.Expr:
        """1/2 A^T M_b A + A^T h_b with A = Gamma ud + A0 (ud over the speeds)."""
        A = [sm.Add(a0, *[g * d for g, d in zip(row, ud) if g != 0 and d != 0])
             for row, a0 in zip(self.Gamma, self.A0)]
        A = sm.Matrix(A)
        return ((A.T * self.Mb * A)[0] / 2 + (A.T * self.hb)[0])


def modal_rows(kin, body: FlexibleBody):
    """(eta, eta', partials of eta' per mode over the speeds, eta'' at u' = 0) on plain
    symbols: the modal coordinates must be coordinates of the model and their rates
    follow from its kinematic equations."""
    t = dynamicsymbols._t
    coordinates = set(kin.q)
    missing = [str(q) for q in body.q if q not in coordinates]
    if missing:
        raise ValueError(f"the modal coordinates {', '.join(missing)} of flexible body "
                         f"{body.name!r} are not coordinates of the model: list body.q in "
                         f"q_ind and body.u in u_ind, with body.kd_eqs() among the kd_eqs")
    eta = [kin.to_plain(q, f"the modes of {body.name}") for q in body.q]
    etad = [kin.to_plain(q.diff(t), f"the modal rates of {body.name}", inputs=False)
            for q in body.q]
    partials = [kin.jacobian_u(e) for e in etad]
    aux0 = dict.fromkeys(kin.uas, 0)
    etad = [e.xreplace(aux0) for e in etad] if aux0 else etad
    return eta, etad, partials, [kin.dt(e) for e in etad]


def flexible_share(body: FlexibleBody, kin, origin, frame, gravity) -> Share:
    """The body's share (module docstring).

    origin, frame: (partials per speed (3 components each), value, rate at u' = 0) of
    the velocity of body.origin and the angular velocity of body.frame in N, all in
    components of body.frame; gravity: its 3 components there, or None."""
    p = len(kin.speeds)
    eta, etad, etad_partials, etadd0 = modal_rows(kin, body)
    (v_partials, _, a0), (w_partials, w, alpha0) = origin, frame
    bt = body.terms(w, eta, etad, gravity)
    n6 = 6 + body.n
    Gamma = ([[v_partials[j][a] for j in range(p)] for a in range(3)]
             + [[w_partials[j][a] for j in range(p)] for a in range(3)]
             + [list(row) for row in etad_partials])
    A0 = list(a0) + list(alpha0) + list(etadd0)
    cols = {j: [a for a in range(n6) if Gamma[a][j] != 0] for j in range(p)}
    cols = {j: rows for j, rows in cols.items() if rows}
    Mb = bt.M
    # M_b times each column of Gamma, over the rows that column has
    MG = {j: [sm.Add(*[Mb[a, b] * Gamma[b][j] for b in rows if Mb[a, b] != 0])
              for a in range(n6)] for j, rows in cols.items()}
    M = {}
    speeds = sorted(cols)
    for i, j in enumerate(speeds):
        for k in speeds[i:]:
            entry = sm.Add(*[Gamma[a][j] * MG[k][a] for a in cols[j]])
            if entry != 0:
                M[(j, k)] = entry
    bias = [sm.Add(bt.h[a], *[Mb[a, b] * A0[b] for b in range(n6)
                              if A0[b] != 0 and Mb[a, b] != 0]) for a in range(n6)]
    R = [sm.S.Zero] * p
    Q = [sm.S.Zero] * p
    for j, rows in cols.items():
        R[j] = sm.Add(*[Gamma[a][j] * bias[a] for a in rows])
        Q[j] = sm.Add(*[Gamma[a][j] * bt.Q[a] for a in rows])
    return Share(M=M, R=R, Q=Q, Gamma=Gamma, A0=A0, Mb=Mb, hb=bt.h)
