"""An independent oracle for a flexible body's terms: the body as mass points.

Each point's position in N is written with sympy.physics.vector (origin O at
(x, y, z) in N, frame B by body-fixed angles q1..q3, the point at
p = r + eps Phi eta - eps^2/2 (eta^T G eta) e in B) and differentiated twice
by SymPy. With the generalized accelerations qdd = (x'', y'', z'', q1'', q2'',
q3'', eta''), a_P = J qdd + b, so S = 1/2 sum m |a_P|^2 has the mass matrix
sum m J^T J and the bias sum m J^T b. These are polynomials of degree 4 in eps;
sampled at five values of eps they are fitted exactly and their terms up to
eps^2 kept: the second-order truncation of S that the body's terms claim, reached
here with none of the body's algebra (no invariants, no cross-product identities).

The body's side maps its M_b, h_b to the same coordinates with Gamma = dA/dqdd and
A0 (A = [a_O; alpha; eta''] in B), which is what the formulation will do.
"""
from __future__ import annotations

import numpy as np
import sympy as sm
from sympy.physics.vector import ReferenceFrame, dynamicsymbols

EPS = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])


class PointOracle:
    """Lambdified point acceleration and the body-level kinematics, for n modes."""

    def __init__(self, n: int):
        t = dynamicsymbols._t
        self.n = n
        qf = dynamicsymbols(f"x y z q1 q2 q3 e0:{n}")
        N = ReferenceFrame("N")
        B = ReferenceFrame("B")
        B.orient_body_fixed(N, qf[3:6], "xyz")
        r = sm.symbols("r0:3")
        Phi = sm.Matrix(3, n, sm.symbols(f"P0:{3 * n}"))
        Gs = sm.symbols(f"G0:{n * n}")
        G = sm.Matrix(n, n, lambda k, l: Gs[min(k, l) * n + max(k, l)])
        e = sm.symbols("a0:3")
        eps = sm.Symbol("eps")
        eta = sm.Matrix(qf[6:])
        fs = (eta.T * G * eta)[0] / 2
        p = [r[a] + eps * (Phi.row(a) * eta)[0] - eps**2 * fs * e[a] for a in range(3)]
        pos = qf[0] * N.x + qf[1] * N.y + qf[2] * N.z + p[0] * B.x + p[1] * B.y + p[2] * B.z
        acc = pos.dt(N).dt(N)
        aB = [acc.dot(u) for u in (B.x, B.y, B.z)]
        # body level: a_O and alpha in B, w in B
        aO = (qf[0] * N.x + qf[1] * N.y + qf[2] * N.z).dt(N).dt(N)
        aO = [aO.dot(u) for u in (B.x, B.y, B.z)]
        alpha = [B.ang_acc_in(N).dot(u) for u in (B.x, B.y, B.z)]
        w = [B.ang_vel_in(N).dot(u) for u in (B.x, B.y, B.z)]
        gN = sm.symbols("g0:3")
        gB = [sum(gN[i] * N.dcm(B)[i, a] for i in range(3)) for a in range(3)]
        A = aO + alpha + [qk.diff(t, 2) for qk in qf[6:]]

        q, qd, qdd = (sm.symbols(f"q0:{6 + n}"), sm.symbols(f"qd0:{6 + n}"),
                      sm.symbols(f"qdd0:{6 + n}"))
        plain = {}
        for k, qk in enumerate(qf):
            plain[qk.diff(t, 2)] = qdd[k]
        for k, qk in enumerate(qf):
            plain[qk.diff(t)] = qd[k]
        for k, qk in enumerate(qf):
            plain[qk] = q[k]

        def to_plain(exprs):
            return sm.Matrix([sm.sympify(x).xreplace(plain) for x in exprs])

        aP, A, w, gB = to_plain(aB), to_plain(A), to_plain(w), to_plain(gB)
        zero = dict.fromkeys(qdd, 0)
        data = list(r) + list(Phi) + list(Gs) + list(e) + [eps]
        state = list(q) + list(qd)
        self.J = sm.lambdify(state + data, aP.jacobian(qdd), "numpy")
        self.b = sm.lambdify(state + data, aP.xreplace(zero), "numpy")
        self.Gamma = sm.lambdify(state, A.jacobian(qdd), "numpy")
        self.A0 = sm.lambdify(state, A.xreplace(zero), "numpy")
        self.w = sm.lambdify(state, w, "numpy")
        self.gB = sm.lambdify(state + list(gN), gB, "numpy")

    def _point_data(self, r, Phi, G, e, eps):
        n = self.n
        Gu = [G[min(k, l), max(k, l)] for k in range(n) for l in range(n)]
        return list(r) + list(np.asarray(Phi).ravel()) + Gu + list(e) + [eps]

    def particles(self, state, mass, r, Phi, G, e, g=None):
        """Mass matrix, bias and gravity force of the points, truncated at eps^2."""
        nq = 6 + self.n
        Ms, Rs, Qs = [], [], []
        gB = None if g is None else np.asarray(self.gB(*state, *g), dtype=float).ravel()
        for eps in EPS:
            M, R, Q = np.zeros((nq, nq)), np.zeros(nq), np.zeros(nq)
            for i in range(len(mass)):
                d = self._point_data(r[i], Phi[i], G[i], e, eps)
                J = np.asarray(self.J(*state, *d), dtype=float)
                b = np.asarray(self.b(*state, *d), dtype=float).ravel()
                M += mass[i] * J.T @ J
                R += mass[i] * J.T @ b
                if gB is not None:
                    Q += mass[i] * J.T @ gB
            Ms.append(M)
            Rs.append(R)
            Qs.append(Q)
        V = np.vander(EPS, 5, increasing=True)
        out = []
        for series in (Ms, Rs, Qs):
            coef = np.linalg.solve(V, np.array(series).reshape(5, -1))
            out.append(coef[:3].sum(axis=0).reshape(series[0].shape))
        return out

    def body(self, state, terms_fn, g=None):
        """The body's terms mapped to the generalized coordinates at ``state``:
        terms_fn(w, eta, etad, gB) -> (M_b, h_b, Q_b) as numpy arrays."""
        n = self.n
        q, qd = state[:6 + n], state[6 + n:]
        w = np.asarray(self.w(*state), dtype=float).ravel()
        gB = None if g is None else np.asarray(self.gB(*state, *g), dtype=float).ravel()
        Mb, hb, Qb = terms_fn(w, q[6:], qd[6:], gB)
        Gam = np.asarray(self.Gamma(*state), dtype=float)
        A0 = np.asarray(self.A0(*state), dtype=float).ravel()
        return Gam.T @ Mb @ Gam, Gam.T @ (Mb @ A0 + hb), Gam.T @ Qb
