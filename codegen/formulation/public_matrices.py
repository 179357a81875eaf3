"""The public equations: the chain rule on the vectors as the user stored them.

``mass_matrix``, ``forcing``, their ``_full`` forms and ``kanes_equations``'
(fr, frstar) are read, printed, simplified, lambdified and handed to other
tools (PyDy's ``System``), so their size is part of the drop-in. The code
generator's formulation (:mod:`codegen.formulation.chain_rule`) takes every vector in
components of one frame per body, or composes velocities as intermediates
(:mod:`codegen.formulation.relative`): compact programs after CSE, but written out as
expressions they can be hundreds of times larger than KanesMethod's, since
a velocity written in the frames of every link before it is rotated into
the last link's frame with the product of every rotation between.

Here each partial velocity, rate and load stays in the frames it was
written in, a dict {frame: 3 components}, and a product of two vectors
rotates only between the pairs of frames that meet (what
``Vector.dot`` does): the products KanesMethod forms, so the size of its
expressions. The Gibbs–Appell chain rule is the formulation's (4.294)-(4.297)
with the same collection by partial velocity:

    M_jk = sum m gamma_j.gamma_k + beta_j.I.beta_k,
    dS/du'_j at u' = 0 = sum gamma_j.(m a0) + beta_j.(I alpha0 + w x I w),

taken at the mass centre with the central inertia, and with each vector's
rate by SymPy's rule (each frame's part differentiated in that frame, plus
the frame's stored angular velocity crossed with it; a stored acceleration
where there is one): KanesMethod's reading of the model. Nothing here is
compiled; ``generate`` uses the formulation's compact forms.
"""
from __future__ import annotations

import sympy as sm
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from ..flexible.body import FlexibleBody
from ..flexible.share import flexible_share
from ..symbolic.simplify import pythagoras, tidy
from .chain_rule import collected_scalar
from .motions import is_rigid
from ..symbolic.vec3 import add, cross, dot

__all__ = ["PublicForm", "form_public"]

t = dynamicsymbols._t


def _add_into(out: dict, frame, comps) -> None:
    if all(c == 0 for c in comps):
        return
    old = out.get(frame)
    out[frame] = tuple(comps) if old is None else tuple(x + y for x, y in zip(old, comps))


class _Vectors:
    """Vectors as {frame: (3 plain components)}, in the frames they were written in."""

    def __init__(self, kin, N: ReferenceFrame):
        self.kin, self.N = kin, N
        self.aux0 = dict.fromkeys(kin.uas, sm.S.Zero)
        self._dcm, self._omega, self._motion = {}, {}, {}

    def plain(self, vec, what: str, inputs: bool = False) -> dict:
        out = {}
        for comps, F in vec.args:
            c = [self.kin.to_plain(e, what, inputs=inputs) for e in comps]
            _add_into(out, F, [e.xreplace(self.aux0) for e in c] if self.aux0 else c)
        return out

    def dcm(self, F, G, i, j):
        """Entry (i, j) of F.dcm(G) (components in F = dcm components in G), plain;
        entries are made plain only when a product needs them."""
        key = (F, G, i, j)
        out = self._dcm.get(key)
        if out is None:
            C = self._dcm.get((F, G))
            if C is None:
                C = self._dcm[(F, G)] = F.dcm(G)
            out = self._dcm[key] = self.kin.to_plain(C[i, j], f"the orientation of {F}")
        return out

    def rotate(self, F, G, comps):
        """comps (in G) in F's components."""
        if F == G:
            return tuple(comps)
        nz = [j for j in range(3) if comps[j] != 0]
        return tuple(sm.Add(*[self.dcm(F, G, i, j) * comps[j] for j in nz]) for i in range(3))

    def dot(self, a: dict, b: dict):
        """a . b: sum over the pairs of their frames, with only the rotation entries
        that meet nonzero components (a unit vector's dot product is one entry)."""
        out = []
        for F, ca in a.items():
            nza = [i for i in range(3) if ca[i] != 0]
            for G, cb in b.items():
                if F == G:
                    out.append(dot(ca, cb))
                    continue
                nzb = [j for j in range(3) if cb[j] != 0]
                out.extend(ca[i] * self.dcm(F, G, i, j) * cb[j] for i in nza for j in nzb)
        return sm.Add(*out)

    def cross(self, a: dict, b: dict) -> dict:
        """a x b, in the frames of b (as Vector.cross)."""
        out = {}
        for G, cb in b.items():
            aG = [sm.S.Zero] * 3
            for F, ca in a.items():
                aG = [x + y for x, y in zip(aG, self.rotate(G, F, ca))]
            _add_into(out, G, cross(aG, cb))
        return out

    def omega(self, F) -> dict:
        """F's stored angular velocity in N (auxiliary speeds zero)."""
        if F not in self._omega:
            self._omega[F] = {} if F == self.N else \
                self.plain(F.ang_vel_in(self.N), f"the angular velocity of {F}")
        return self._omega[F]

    def rate(self, vec: dict) -> dict:
        """SymPy's time_derivative in N at u' = 0, part by part."""
        out = {}
        for F, c in vec.items():
            _add_into(out, F, [self.kin.dt(e) for e in c])
            if F != self.N:
                for G, d in self.cross(self.omega(F), {F: c}).items():
                    _add_into(out, G, d)
        return out

    def stored_rate(self, acc, what: str) -> dict:
        """A stored acceleration at u' = 0 (q'' as the derivative of the kinematics)."""
        kin = self.kin
        zero = {u.diff(t): sm.S.Zero for u in list(kin.u) + list(kin.u_aux)}
        rates = None
        out = {}
        for comps, F in acc.args:
            c = [sm.sympify(e).xreplace(zero) for e in comps]
            if any(d.derivative_count == 2 for e in c for d in e.atoms(sm.Derivative)):
                rates = rates or {qk.diff(t, 2): kin.to_time(kin.dt(e))
                                  for qk, e in zip(kin.q, kin.qdot)}
                c = [e.xreplace(rates) for e in c]
            c = [kin.to_plain(e, what) for e in c]
            _add_into(out, F, [e.xreplace(self.aux0) for e in c] if self.aux0 else c)
        return out

    def motion(self, obj):
        """(partials per speed, value, rate at u' = 0) of a point's velocity or a frame's
        angular velocity in N, as stored."""
        if obj not in self._motion:
            kin, N = self.kin, self.N
            if isinstance(obj, Point):
                vec, acc, what = obj.vel(N), obj._acc_dict.get(N), f"the velocity of {obj}"
            else:
                vec, acc, what = obj.ang_vel_in(N), obj._ang_acc_dict.get(N), \
                    f"the angular velocity of {obj}"
            full = {}
            for comps, F in vec.args:
                _add_into(full, F, [kin.to_plain(e, what, inputs=False) for e in comps])
            partials = [{} for _ in kin.speeds]
            for F, c in full.items():
                columns = [kin.jacobian_u(e) for e in c]
                for j in range(len(kin.speeds)):
                    _add_into(partials[j], F, [col[j] for col in columns])
            value = {F: tuple(e.xreplace(self.aux0) for e in c) for F, c in full.items()} \
                if self.aux0 else full
            value = {F: c for F, c in value.items() if any(e != 0 for e in c)}
            rate = self.rate(value) if acc is None else self.stored_rate(acc, what)
            self._motion[obj] = (partials, value, rate)
        return self._motion[obj]

    def replain(self, vec: dict) -> dict:
        """Components that picked up SymPy's rotations (functions of time) made plain."""
        return {F: tuple(self.kin.to_plain(e, "a product of vectors") for e in c)
                for F, c in vec.items()}

    def inertia_times(self, I, vec: dict) -> dict:
        """I . vec for a Dyadic I, in I's frames."""
        out = {}
        for coeff, v1, v2 in I.args:
            (u1, F1), = v1.args
            (u2, F2), = v2.args
            s = self.dot({F2: tuple(u2)}, vec)
            if s != 0:
                c = self.kin.to_plain(coeff, "an inertia")
                _add_into(out, F1, [c * s * e for e in u1])
        return self.replain(out)


def _key(vec: dict):
    return tuple((F, c) for F, c in vec.items())


class PublicForm:
    """M, Q, R over ``kin.speeds`` (auxiliary speeds zero) on plain symbols, formed from
    the stored vectors, with what S needs (``terms``)."""

    def __init__(self, M, Q, R, terms, vectors):
        self.M, self.Q, self.R, self.terms, self.vectors = M, Q, R, terms, vectors

    @property
    def F(self):
        return sm.Matrix([q - r for q, r in zip(self.Q, self.R)])

    def gibbs_appell_function(self, uds):
        """S over the quasi-accelerations uds (auxiliary speeds have none), u'-free
        terms kept."""
        V = self.vectors
        ud = list(uds) + [sm.S.Zero] * (len(V.kin.speeds) - len(uds))

        def accel(partials, rate):
            out = dict(rate)
            for j, g in enumerate(partials):
                if ud[j] != 0:
                    for F, c in g.items():
                        _add_into(out, F, [ud[j] * e for e in c])
            return out
        parts = []
        for b in self.terms:
            if 'share' in b:
                parts.append(b['share'].gibbs_appell_function(ud))
                continue
            a = accel(b['gamma'], b['a0'])
            parts.append(b['m'] * V.dot(a, a) / 2)
            if b['I'] is not None:
                alpha = accel(b['beta'], b['alpha0'])
                Ia = V.inertia_times(b['I'], alpha)
                parts.append(V.dot(alpha, Ia) / 2)
                parts.append(V.dot(b['wIw'], alpha))
        return V.kin.to_plain(sm.Add(*parts), "S")


def _flexible(V: _Vectors, body: FlexibleBody):
    """A flexible body's share (codegen.flexible.share), its motions as stored rotated
    into its frame's components."""
    X = body.frame

    def into(vec: dict) -> list:
        out = [sm.S.Zero] * 3
        for F, c in vec.items():
            out = add(out, V.rotate(X, F, c))
        return out

    motions = []
    for obj in (body.origin, X):
        partials, value, rate = V.motion(obj)
        motions.append(([into(g) for g in partials], into(value), into(rate)))
    g = None if body.gravity is None else \
        into(V.plain(body.gravity, f"the gravity of {body.name}", inputs=True))
    return flexible_share(body, V.kin, *motions, g)


def form_public(kin, N: ReferenceFrame, bodies, loads) -> PublicForm:
    """The public M, Q, R of the bodies and loads (see the module docstring)."""
    V = _Vectors(kin, N)
    n = len(kin.speeds)
    mm = [[{} for _ in range(n)] for _ in range(n)]
    res = [{} for _ in range(n)]
    memo, terms, shares = {}, [], []
    for body in bodies:
        if isinstance(body, FlexibleBody):
            shares.append(_flexible(V, body))
            terms.append(dict(share=shares[-1]))
            continue
        m = kin.to_plain(body.mass, f"the mass of {body}")
        G, _, a0 = V.motion(body.masscenter)
        nzv = [j for j in range(n) if G[j]]
        macc = {F: tuple(m * e for e in c) for F, c in a0.items()}
        term = dict(m=m, gamma=G, a0=a0, I=None)
        nzw, IB = [], {}
        if is_rigid(body):
            B, w, alpha0 = V.motion(body.frame)
            I = body.central_inertia
            nzw = [j for j in range(n) if B[j]]
            IB = {j: V.inertia_times(I, B[j]) for j in nzw}
            wIw = V.replain(V.cross(w, V.inertia_times(I, w)))
            h = V.inertia_times(I, alpha0)
            for F, c in wIw.items():
                _add_into(h, F, c)
            term.update(I=I, beta=B, alpha0=alpha0, wIw=wIw)
        terms.append(term)
        nz = sorted(set(nzv) | set(nzw))
        for ij, j in enumerate(nz):
            for k in nz[ij:]:
                cell = mm[j][k]
                if j in nzv and k in nzv:
                    cell.setdefault(tidy(kin.to_plain(V.dot(G[j], G[k])), memo), []).append(m)
                if j in IB and k in IB:
                    cell.setdefault(tidy(kin.to_plain(V.dot(B[j], IB[k])), memo),
                                    []).append(sm.S.One)
            if j in nzv:
                res[j].setdefault(_key(G[j]), (G[j], []))[1].append(macc)
            if j in IB:
                res[j].setdefault(_key(B[j]), (B[j], []))[1].append(h)
    Q = [{} for _ in range(n)]
    for where, vec in loads:
        partials = V.motion(where)[0]
        force = V.plain(vec, f"the load on {where}", inputs=True)
        for j in range(n):
            if partials[j]:
                Q[j].setdefault(_key(partials[j]), (partials[j], []))[1].append(force)

    def collected(cell):
        out = []
        for g, vectors in cell.values():
            total = {}
            for v in vectors:
                for F, c in v.items():
                    _add_into(total, F, c)
            out.append(V.dot(g, total))
        return pythagoras(kin.to_plain(sm.Add(*out), "the equations"), memo)
    upper = {(j, k): pythagoras(collected_scalar(mm[j][k]), memo)
             for j in range(n) for k in range(j, n)}
    Qs, Rs = [collected(c) for c in Q], [collected(c) for c in res]
    for s in shares:
        for key, e in s.M.items():
            upper[key] = pythagoras(upper[key] + e, memo)
        Qs = [a + e for a, e in zip(Qs, s.Q)]
        Rs = [a + e for a, e in zip(Rs, s.R)]
    M = sm.Matrix(n, n, lambda j, k: upper[min(j, k), max(j, k)])
    return PublicForm(M, sm.Matrix(Qs), sm.Matrix(Rs), terms, V)
