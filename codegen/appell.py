"""The Gibbs–Appell formulation: S, mass matrix and forcing (symbolic).

For each body with reference point O (velocity v, partial velocities
gamma_j = dv/du_j), angular velocity omega (partial angular velocities
beta_j), inertia I about O and mass-centre offset rho from O, Greenwood's
Gibbs–Appell function (4.292) is

    S = 1/2 m v'.v' + 1/2 w'.I.w' + (w x I w).w' + m v'.rho''
    rho'' = w' x rho + w x (w x rho)

and, because the accelerations are linear in the quasi-accelerations u',
v' = sum_j gamma_j u'_j + a0, w' = sum_j beta_j u'_j + alpha0, its
derivatives follow by the chain rule (4.294)-(4.297):

    M_jk = d2S/du'_j du'_k = m gamma_j.gamma_k + beta_j.I.beta_k
                             + m gamma_j.(beta_k x rho) + m gamma_k.(beta_j x rho)
    dS/du'_j at u' = 0     = m (a0 + rho0'').gamma_j
                             + [I alpha0 + w x I w + m rho x a0].beta_j
    F_j = Q_j - dS/du'_j at u' = 0,       Q_j = sum of loads . partial velocities.

Differentiating an expanded S twice gives the same M and F but costs more
than the whole Kane derivation (see the README), so S is built only when
asked for, and M and F come from the chain rule above.

Every vector is taken in components in one frame per body (the frame of
its inertia dyadic, else its own frame; for a particle the frame its
velocity is written in, else the Newtonian frame), so dot products are
plain sums and v' in that frame X is d(components)/dt + omega_X x v.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sm
from sympy.physics.mechanics import KanesMethod, Particle, RigidBody
from sympy.physics.vector import dynamicsymbols
from sympy.physics.vector import Point, ReferenceFrame, Vector

from .kinematics import Kinematics, as_list, numeric_probe

__all__ = ["GibbsAppellMethod"]

t = dynamicsymbols._t


def _dot(a, b):
    return sm.Add(*[sm.Mul(x, y) for x, y in zip(a, b) if x != 0 and y != 0])


def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0]]


def _matvec(I, v):
    return [_dot(I[i], v) for i in range(3)]


def _add(a, b):
    return [x + y for x, y in zip(a, b)]


def _components(vec: Vector, X: ReferenceFrame) -> list:
    """vec in components of X: each frame's part rotated by the cached DCM.

    Vector.to_matrix does a dot product per unit vector and costs ten times
    more on the many-frame velocities of a chain.
    """
    parts = [[], [], []]
    for comps, frame in vec.args:
        if frame == X:
            rows = list(comps)
        else:
            C = X.dcm(frame)
            rows = [_dot(C.row(i), comps) for i in range(3)]
        for i in range(3):
            parts[i].append(rows[i])
    return [sm.Add(*p) for p in parts]


def _frames_of(vec) -> list:
    """The frames a Vector or Dyadic is written in, in order of appearance."""
    if isinstance(vec, Vector):
        frames = [f for _, f in vec.args]
    else:   # Dyadic: args are (coefficient, unit vector, unit vector)
        frames = [f for _, v1, v2 in vec.args for f in (v1.args[0][1], v2.args[0][1])]
    return list(dict.fromkeys(frames))


@dataclass
class _Motion:
    """A vector quantity of a body in components of one frame, plain symbols."""
    value: list          # 3 components, in q, u, t
    partials: list       # per independent speed: 3 components (d value / d u_j)
    rate0: list          # d/dt of the vector in N at u' = 0, in the same frame
    frame: ReferenceFrame


class _Formulation:
    """Turns bodies and loads into M, F (and S on request), on plain symbols."""

    def __init__(self, kin: Kinematics, N: ReferenceFrame):
        self.kin, self.N = kin, N
        self._frame_rate = {}    # frame X -> omega of X in N, components in X
        self._motions = {}       # (point or frame, X) -> _Motion

    def point_motion(self, P: Point, X: ReferenceFrame | None = None) -> _Motion:
        """Velocity of P in N, in components of X (computed once per pair).

        Without X, the frame of an earlier call for P (a load on a body's
        point reuses the body's components), else the Newtonian frame.
        """
        X = X or self._known_frame(P) or self.N
        key = (P, X)
        if key not in self._motions:
            self._motions[key] = self.motion(P.vel(self.N), X, f"velocity of {P}")
        return self._motions[key]

    def _known_frame(self, obj):
        return next((x for (o, x) in self._motions if o is obj), None)

    def frame_motion(self, R: ReferenceFrame, X: ReferenceFrame | None = None) -> _Motion:
        """Angular velocity of R in N, in components of X (computed once per pair)."""
        X = X or self._known_frame(R) or R
        key = (R, X)
        if key not in self._motions:
            self._motions[key] = self.motion(R.ang_vel_in(self.N), X,
                                             f"angular velocity of {R}")
        return self._motions[key]

    def motion(self, vec: Vector, X: ReferenceFrame, what: str) -> _Motion:
        kin = self.kin
        value = [kin.to_plain(c, what) for c in _components(vec, X)]
        partials = [list(col) for col in zip(*[kin.jacobian_u(c) for c in value])]
        rate0 = [kin.dt(c) for c in value]
        if X != self.N and any(c != 0 for c in value):
            rate0 = _add(rate0, _cross(self.omega_of(X), value))
        return _Motion(value, partials, rate0, X)

    def omega_of(self, X: ReferenceFrame) -> list:
        if X not in self._frame_rate:
            w = X.ang_vel_in(self.N)
            self._frame_rate[X] = [self.kin.to_plain(c, f"angular velocity of {X}")
                                   for c in _components(w, X)]
        return self._frame_rate[X]


def _body_frame(body, N):
    if isinstance(body, RigidBody):
        frames = _frames_of(body.inertia[0])
        return frames[0] if len(frames) == 1 else body.frame
    frames = _frames_of(body.masscenter.vel(N))
    return frames[0] if len(frames) == 1 else N


class GibbsAppellMethod(KanesMethod):
    """Equations of motion by the Gibbs–Appell equation, a drop-in for KanesMethod.

    Parameters
    ----------
    frame : ReferenceFrame
        The Newtonian frame.
    q_ind, u_ind : sequences of dynamicsymbols
        Independent coordinates and independent speeds (quasi-velocities).
    kd_eqs : sequence of expressions
        Kinematic differential equations, one per coordinate, linear in q'
        (e.g. ``u1 - (x'cos(phi) + y'sin(phi))``): the speeds may be any
        independent linear combinations of q'.
    q_dependent, configuration_constraints : sequences
        Dependent coordinates and the holonomic constraints f(q, t) = 0.
        Without ``q_dependent`` the constraints are only stored (as
        ``holonomic_constraint_matrices`` A(q, t) q' = B) for the run-time
        SVD elimination; the dependent coordinates stay in the state.
    u_dependent, velocity_constraints : sequences
        Dependent speeds and as many constraints linear in the speeds. The
        dependent speeds are eliminated symbolically (Greenwood's approach),
        so ``u``, ``mass_matrix`` and ``forcing`` are over the independent
        speeds only. Constraints without ``u_dependent`` are stored as
        ``velocity_constraint_matrices`` (A u = B) for the run-time elimination.
    bodies : sequence of Particle and RigidBody
    forcelist : sequence of (Point, Vector) forces and (ReferenceFrame, Vector) torques
    explicit_kinematics : bool
        As in KanesMethod: whether ``mass_matrix_full`` carries the identity
        (q' solved) or the coefficients of q' in ``kd_eqs``.
    recursive : bool or None
        For the generated code: solve M u' = F by the O(n) articulated-body
        recursion (codegen.recursive) when the bodies form a tree. None (the
        default) tries it for systems of particles, True for rigid bodies too
        (measured on 3-D chains with spherical joints: within 25 % of the
        dense solve either way, at more generation time), False never.

    The equations are formed on construction. Afterwards, with KanesMethod's
    names and conventions, ``mass_matrix`` M and ``forcing`` F satisfy
    M u' = F; ``mass_matrix_full``, ``forcing_full`` cover x = [q, u];
    ``kindiffdict()`` maps q' to expressions of q, u, t;
    ``generalized_active_forces`` is Q; ``gibbs_appell_function`` is S
    (formed on first access; terms free of u' are dropped), with
    M = d2S/du'2 and F = Q - dS/du' at u' = 0.

    Examples
    --------
    >>> import sympy.physics.mechanics as me, sympy as sm
    >>> q, u = me.dynamicsymbols('q u')
    >>> m, g, l = sm.symbols('m g l')
    >>> N = me.ReferenceFrame('N'); A = N.orientnew('A', 'Axis', [q, N.z])
    >>> O = me.Point('O'); O.set_vel(N, 0)
    >>> P = O.locatenew('P', l * A.x); _ = P.v2pt_theory(O, N, A)
    >>> ga = GibbsAppellMethod(N, [q], [u], kd_eqs=[u - q.diff()],
    ...     bodies=[me.Particle('p', P, m)], forcelist=[(P, -m * g * N.y)])
    >>> ga.mass_matrix, ga.forcing
    (Matrix([[l**2*m]]), Matrix([[-g*l*m*cos(q(t))]]))
    """

    def __init__(self, frame, q_ind, u_ind, kd_eqs=(), q_dependent=(),
                 configuration_constraints=(), u_dependent=(),
                 velocity_constraints=(), acceleration_constraints=None,
                 u_auxiliary=(), bodies=(), forcelist=(), explicit_kinematics=True,
                 kd_eqs_solver='LU', constraint_solver='LU', recursive=None):
        if recursive not in (None, True, False):
            raise TypeError(f"recursive must be None, True or False, got {recursive!r}")
        self._recursive = recursive
        if not isinstance(frame, ReferenceFrame):
            raise TypeError(f"frame must be a ReferenceFrame, got {frame!r}")
        if as_list(u_auxiliary, 'u_auxiliary'):
            raise ValueError("auxiliary speeds are not supported by GibbsAppellMethod")
        if acceleration_constraints is not None:
            raise ValueError("acceleration_constraints are not supported; give the "
                             "velocity constraints, whose derivative is taken here")
        self._inertial = frame
        self.explicit_kinematics = explicit_kinematics
        self._kin = Kinematics(q_ind, u_ind, kd_eqs, q_dependent, u_dependent,
                               velocity_constraints, configuration_constraints)
        self._bodylist = self._check_bodies(as_list(bodies, 'bodies'))
        self._forcelist = self._check_loads(as_list(forcelist, 'forcelist'))
        self._S = None
        self._form()

    # -- input checks -------------------------------------------------------
    @staticmethod
    def _check_bodies(bodies):
        for b in bodies:
            if not isinstance(b, (Particle, RigidBody)):
                raise TypeError(f"body {b!r} is neither a Particle nor a RigidBody")
            if isinstance(b, RigidBody):
                Imat = b.inertia[0].to_matrix(_body_frame(b, None))
                if sm.simplify(Imat - Imat.T) != sm.zeros(3, 3):
                    raise ValueError(f"inertia dyadic of {b} is not symmetric: {Imat}")
        return bodies

    @staticmethod
    def _check_loads(loads):
        out = []
        for load in loads:
            if not (isinstance(load, tuple) and len(load) == 2):
                raise TypeError(f"load {load!r} is not a (Point or ReferenceFrame, Vector) pair")
            where, vec = load
            if not isinstance(where, (Point, ReferenceFrame)):
                raise TypeError(f"load {load!r} acts on {where!r}, which is neither "
                                f"a Point nor a ReferenceFrame")
            if vec == 0:
                continue
            if not isinstance(vec, Vector):
                raise TypeError(f"load on {where} is {vec!r}, not a Vector")
            out.append((where, vec))
        return out

    # -- formulation ----------------------------------------------------------
    def _form(self):
        kin, N = self._kin, self._inertial
        p = len(kin.us)
        fm = _Formulation(kin, N)
        mm = [[{} for _ in range(p)] for _ in range(p)]   # upper triangle, see _accumulate
        res = [{} for _ in range(p)]                      # dS/du'_j at u' = 0
        self._body_terms = []
        for body in self._bodylist:
            terms = self._body(fm, body)
            self._body_terms.append(terms)
            self._accumulate(terms, mm, res)
        Q = self._generalized_forces(fm)
        self._fm = fm
        upper = {(j, k): self._collected_scalar(mm[j][k]) for j in range(p) for k in range(j, p)}
        Mp = sm.Matrix(p, p, lambda j, k: upper[min(j, k), max(j, k)])
        Fp = sm.Matrix([Q[j] - self._collected_vector(res[j]) for j in range(p)])
        self._plain = dict(M=Mp, F=Fp, Q=sm.Matrix(Q))
        to_time = kin.to_time
        self._k_d = to_time(Mp)
        self._f_d = to_time(Fp)
        self._fr = to_time(sm.Matrix(Q))
        self._qdot_u_map = {qi.diff(): to_time(e) for qi, e in zip(kin.q, kin.qdot)}
        self._constraints = self._runtime_constraints()

    def _runtime_constraints(self):
        """A u = B, B' and f, fq for the constraints left to the run-time elimination.

        Configuration constraints given without dependent coordinates become
        the rows f_q q' = -f_t, i.e. (f_q K) u = -(f_q k + f_t) with q' = K u + k;
        velocity constraints given without dependent speeds are rows as they are.
        B' = B_dot - A_dot u is -d/dt(A u - B) at u' = 0, by the chain rule.
        """
        kin = self._kin
        p = len(kin.us)
        us = sm.Matrix(kin.us)
        A, B = sm.zeros(0, p), sm.zeros(0, 1)
        f, fq = [], sm.zeros(0, len(kin.qs))
        if kin.configuration_constraints and not kin.n_q_dependent:
            fvec = sm.Matrix(kin.configuration_constraints)
            fq = fvec.jacobian(kin.qs)
            qdot = sm.Matrix(kin.qdot)
            K = qdot.jacobian(kin.us)
            k0 = qdot.xreplace({s: 0 for s in kin.us})
            A = fq * K
            B = -(fq * k0 + fvec.diff(t))
            f = list(fvec)
        if kin.velocity_constraint_matrices is not None:
            Av, Bv = kin.velocity_constraint_matrices
            A, B = A.col_join(Av), B.col_join(Bv)
        if A.rows == 0:
            return None
        residual = A * us - B
        Bdot = sm.Matrix([-kin.dt(e) for e in residual])
        self._check_freedom(A)
        return dict(A=A, B=B, Bdot=Bdot, f=f, fq=fq, nh=len(f))

    def _check_freedom(self, A):
        """Refuse constraints that leave no motion at a generic configuration."""
        import numpy as np
        An = np.array(A.xreplace(numeric_probe(A)).evalf(), dtype=float)
        if np.linalg.matrix_rank(An) >= A.cols:
            raise ValueError(f"the {A.rows} constraints leave zero degrees of freedom for the "
                             f"{A.cols} speeds (rank {A.cols} at a generic configuration): "
                             f"the system cannot move")

    def _body(self, fm, body):
        """Per-body kinematic data: mass, inertia matrix, motions, offset."""
        N = self._inertial
        X = _body_frame(body, N)
        name = getattr(body, 'name', str(body))
        m = body.mass
        if isinstance(body, Particle):
            v = fm.point_motion(body.point, X)
            return dict(m=m, v=v, w=None, I=None, rho=None, X=X)
        dyadic, ref = body.inertia
        rho = None
        try:
            v = fm.point_motion(ref, X)
            if ref != body.masscenter:
                rho = [fm.kin.to_plain(c, f"mass-centre offset of {name}")
                       for c in _components(body.masscenter.pos_from(ref), X)]
        except ValueError:     # reference point without a velocity: use the mass centre
            dyadic = body.central_inertia
            v = fm.point_motion(body.masscenter, X)
        w = fm.frame_motion(body.frame, X)
        I = [[fm.kin.to_plain(c, f"inertia of {name}") for c in row]
             for row in dyadic.to_matrix(X).tolist()]
        if rho is not None and all(c == 0 for c in rho):
            rho = None
        return dict(m=m, v=v, w=w, I=I, rho=rho, X=X)

    def _accumulate(self, b, mm, res):
        """Add one body's chain-rule terms to M (upper triangle) and dS/du'|0.

        Terms are collected by their velocity factor: M_jk gathers
        {gamma_j.gamma_k: [masses]} and dS/du'_j gathers {gamma_j: [m a0 vectors]},
        so that bodies sharing a partial velocity (every body beyond joint j
        of a chain) give gamma_j.(sum m a0) instead of sum m (gamma_j.a0):
        an O(n) sum per entry instead of O(n) dot products.
        """
        m, v, w, I, rho = b['m'], b['v'], b['w'], b['I'], b['rho']
        p = len(res)
        G = v.partials
        nzv = [j for j in range(p) if any(c != 0 for c in G[j])]
        a0 = v.rate0
        if w is not None:
            B = w.partials
            nzw = [j for j in range(p) if any(c != 0 for c in B[j])]
            IB = {j: _matvec(I, B[j]) for j in nzw}
            wIw = _cross(w.value, _matvec(I, w.value))
            h = _add(_matvec(I, w.rate0), wIw)          # I alpha0 + w x I w
            if rho is not None:
                Bxr = {j: _cross(B[j], rho) for j in nzw}
                rho_dd0 = _add(_cross(w.rate0, rho), _cross(w.value, _cross(w.value, rho)))
                h = _add(h, [m * c for c in _cross(rho, a0)])
        nz = sorted(set(nzv) | (set(nzw) if w is not None else set()))
        acc = a0 if w is None or rho is None else _add(a0, rho_dd0)
        macc = [m * c for c in acc]
        for ij, j in enumerate(nz):
            for k in nz[ij:]:
                cell = mm[j][k]
                if j in nzv and k in nzv:
                    cell.setdefault(_dot(G[j], G[k]), []).append(m)
                if w is not None and j in IB and k in IB:
                    cell.setdefault(_dot(B[j], IB[k]), []).append(sm.S.One)
                    if rho is not None:
                        cell.setdefault(_dot(G[j], Bxr[k]) + _dot(G[k], Bxr[j]), []).append(m)
            if j in nzv:
                res[j].setdefault(tuple(G[j]), []).append(macc)
            if w is not None and j in IB:
                res[j].setdefault(tuple(B[j]), []).append(h)

    @staticmethod
    def _collected_scalar(cell: dict):
        return sm.Add(*[key * sm.Add(*coeffs) for key, coeffs in cell.items() if key != 0])

    @staticmethod
    def _collected_vector(cell: dict):
        return sm.Add(*[_dot(key, [sm.Add(*c) for c in zip(*vectors)])
                        for key, vectors in cell.items()])

    def _generalized_forces(self, fm):
        """Q_j = sum over loads of force . partial velocity (torque . partial omega).

        Collected by partial velocity like the inertia terms: loads on points
        that share gamma_j (gravity on every body beyond joint j) are summed
        first, then dotted once.
        """
        p = len(self._kin.us)
        Q = [{} for _ in range(p)]
        for where, vec in self._forcelist:
            mo = fm.point_motion(where) if isinstance(where, Point) else fm.frame_motion(where)
            comps = [self._kin.to_plain(c, f"load on {where}")
                     for c in _components(vec, mo.frame)]
            for j in range(p):
                if any(c != 0 for c in mo.partials[j]):
                    Q[j].setdefault(tuple(mo.partials[j]), []).append(comps)
        return [self._collected_vector(cell) for cell in Q]

    def _tree_plain(self):
        """The bodies as a tree for the O(n) solve (codegen.recursive), or None.

        Each body's partial velocities, spatial inertia and inertial bias
        wrench at its mass centre (a particle: its point), in the body's own
        frame (a particle: the Newtonian frame), so that a rigid body's
        inertia stays constant; None if a mass centre has no velocity or
        position the kinematics can reach, or if the bodies form no tree."""
        from .recursive import tree_of
        rigid = any(isinstance(b, RigidBody) for b in self._bodylist)
        if self._constraints is not None or self._recursive is False \
                or (rigid and not self._recursive):
            return None
        kin, N, fm = self._kin, self._inertial, self._fm
        p = len(kin.us)
        data, places = [], []
        try:
            for body in self._bodylist:
                P = body.masscenter
                X = body.frame if isinstance(body, RigidBody) else N
                v = fm.point_motion(P, X)
                m = body.mass
                G = [[sm.S.Zero] * p for _ in range(3)] + [[v.partials[j][i] for j in range(p)]
                                                           for i in range(3)]
                W = [[sm.S.Zero] * 6 for _ in range(6)]
                for i in range(3, 6):
                    W[i][i] = m
                h = [sm.S.Zero] * 3 + [m * c for c in v.rate0]
                if isinstance(body, RigidBody):
                    w = fm.frame_motion(body.frame, X)
                    I = [[kin.to_plain(c, f"inertia of {body}") for c in row]
                         for row in body.central_inertia.to_matrix(X).tolist()]
                    for i in range(3):
                        G[i] = [w.partials[j][i] for j in range(p)]
                        W[i][:3] = I[i]
                    h[:3] = _add(_matvec(I, w.rate0), _cross(w.value, _matvec(I, w.value)))
                data.append((G, W, h))
                places.append((P, X))
        except ValueError:
            return None

        def transport(k, parent):
            """X with (ω; v) of body k = X (ω; v) of its parent, each in its own frame."""
            (Pk, Xk), (Pp, Xp) = places[k], places[parent]
            R = sm.Matrix(3, 3, [kin.to_plain(c, f"orientation of {Xk}") for c in Xk.dcm(Xp)])
            rx, ry, rz = [kin.to_plain(c, f"position of {Pk}")
                          for c in _components(Pk.pos_from(Pp), Xp)]
            cross = sm.Matrix([[0, -rz, ry], [rz, 0, -rx], [-ry, rx, 0]])
            T = sm.zeros(6, 6)
            T[:3, :3] = R
            T[3:, 3:] = R
            T[3:, :3] = -R * cross                    # v_k = R (v_p + ω_p × r)
            return T

        try:
            return tree_of(data, list(self._plain["Q"]), p, transport)
        except ValueError:
            return None

    def _gibbs_appell_plain(self):
        """S on plain symbols, summed over bodies (4.292), u'-free terms kept."""
        ud = self._kin.uds
        terms = []
        for b in self._body_terms:
            m, v, w, I, rho = b['m'], b['v'], b['w'], b['I'], b['rho']
            acc = _add(v.rate0, [_dot(col, ud) for col in zip(*v.partials)])
            terms.append(m * _dot(acc, acc) / 2)
            if w is not None:
                alpha = _add(w.rate0, [_dot(col, ud) for col in zip(*w.partials)])
                Ia = _matvec(I, alpha)
                terms.append(_dot(alpha, Ia) / 2)
                terms.append(_dot(_cross(w.value, _matvec(I, w.value)), alpha))
                if rho is not None:
                    rdd = _add(_cross(alpha, rho), _cross(w.value, _cross(w.value, rho)))
                    terms.append(m * _dot(acc, rdd))
        return sm.Add(*terms)

    def to_state(self, expr):
        """expr with q' and the dependent speeds replaced: a function of q, u (independent), t.

        E.g. the kinetic energy of the bodies, for energy checks.
        """
        return self._kin.to_time(self._kin.to_plain(expr, "expression"))

    def _constraints_plain(self):
        """The run-time constraints on plain symbols, for codegen.eom (or None)."""
        return None if self._constraints is None else dict(self._constraints)

    @property
    def constraint_matrices(self):
        """(A, B) with A(q, t) u = B(q, t): the constraints left to run time, or None.

        Rows from configuration constraints first, then velocity constraints;
        columns over ``u``.
        """
        c = self._constraints
        return None if c is None else (self._kin.to_time(c['A']), self._kin.to_time(c['B']))

    @property
    def constraint_rate(self):
        """B' = B_dot - A_dot u, with A u' = B' (or None)."""
        c = self._constraints
        return None if c is None else self._kin.to_time(c['Bdot'])

    @property
    def configuration_residual(self):
        """f(q, t) of the configuration constraints left to run time (a Matrix, maybe empty)."""
        c = self._constraints
        return None if c is None else self._kin.to_time(sm.Matrix(c['f']))

    def _equations_plain(self):
        """(q, u, q', M, F) on the internal plain symbols, for codegen.eom."""
        kin = self._kin
        return kin.qs, kin.us, kin.qdot, self._plain['M'], self._plain['F']

    # -- KanesMethod-compatible interface -------------------------------------
    def form_equations(self):
        """Return (M, F) with M u' = F (the equations are formed on construction)."""
        return self.mass_matrix, self.forcing

    def kanes_equations(self, bodies=None, loads=None):
        """(fr, frstar) as KanesMethod returns them: fr + frstar = F - M u' = 0."""
        if bodies is not None or loads is not None:
            raise ValueError("give bodies and loads to the constructor of GibbsAppellMethod")
        udot = sm.Matrix([ui.diff() for ui in self.u])
        return self._fr, self._f_d - self._fr - self._k_d * udot

    def _form_eoms(self):
        fr, frstar = self.kanes_equations()
        return fr + frstar

    @property
    def q(self):
        """All coordinates, independent then dependent."""
        return self._kin.q

    @property
    def u(self):
        """The independent speeds, which the state carries."""
        return self._kin.u

    @property
    def u_dependent(self):
        """The dependent speeds, eliminated from the equations."""
        return self._kin.u_dependent

    @property
    def bodylist(self):
        return self._bodylist

    bodies = bodylist

    @property
    def forcelist(self):
        return self._forcelist

    loads = forcelist

    @property
    def mass_matrix(self):
        """M in M u' = F, over the independent speeds (symmetric)."""
        return self._k_d

    @property
    def forcing(self):
        """F in M u' = F."""
        return self._f_d

    @property
    def generalized_active_forces(self):
        """Q_j: the loads projected on the partial velocities."""
        return self._fr

    @property
    def mass_matrix_kin(self):
        if self.explicit_kinematics:
            return sm.eye(len(self.q))
        return self._kin.to_time(self._kin._kd_plain[0])

    @property
    def forcing_kin(self):
        kin = self._kin
        if self.explicit_kinematics:
            return sm.Matrix([self._qdot_u_map[qi.diff()] for qi in self.q])
        rest = kin._kd_plain[1].applyfunc(lambda e: e.xreplace(kin.udep))
        return kin.to_time(-rest)

    @property
    def mass_matrix_full(self):
        """Block diagonal of mass_matrix_kin and mass_matrix, over x = [q, u]."""
        n, p = len(self.q), len(self.u)
        return sm.diag(self.mass_matrix_kin, self.mass_matrix) if p else self.mass_matrix_kin[:n, :n]

    @property
    def forcing_full(self):
        """[forcing_kin; forcing], over x = [q, u]."""
        return self.forcing_kin.col_join(self.forcing)

    def kindiffdict(self):
        """{q': expression of q, u, t}, dependent speeds eliminated."""
        return dict(self._qdot_u_map)

    @property
    def gibbs_appell_function(self):
        """S(q, u, u', t) as a SymPy expression (u' as u.diff(t)); u'-free terms dropped."""
        if self._S is None:
            S = self._gibbs_appell_plain()
            zero = {d: 0 for d in self._kin.uds}
            S = sm.expand(S)
            S = sm.Add(*[a for a in sm.Add.make_args(S) if a.xreplace(zero) != a])
            self._S = self._kin.to_time(S)
        return self._S

    @property
    def holonomic_constraint_matrices(self):
        """(A, B) with A(q, t) q' = B from configuration constraints kept for run time, or None."""
        hc = self._kin.holonomic_constraint_matrices
        return None if hc is None else tuple(self._kin.to_time(m) for m in hc)

    @property
    def velocity_constraint_matrices(self):
        """(A, B) with A u = B over u and u_dependent, for constraints kept for run time, or None."""
        vc = self._kin.velocity_constraint_matrices
        return None if vc is None else tuple(self._kin.to_time(m) for m in vc)

    def linearize(self, *args, **kwargs):
        raise NotImplementedError("linearize is not available for GibbsAppellMethod")

    def to_linearizer(self, *args, **kwargs):
        raise NotImplementedError("to_linearizer is not available for GibbsAppellMethod")
