"""Constraint preparation: dependent speeds (symbolic) and run-time constraints.

Two kinds, as the user gives them to ``GibbsAppellMethod``:

- **Dependent speeds** (``u_dependent`` with as many ``velocity_constraints``):
  k_nh u + f_nh = 0 over all speeds u = [u_i, u_d], so u_d = A_rs u_i + b_rs
  with A_rs = -B_d⁻¹ B_i (B = k_nh split by columns), and, from the
  acceleration constraints k_dnh u' + f_dnh = 0 (given, or the derivative of
  the velocity constraints), u_d' = A_rs u_i' + w at u_i' = 0. The
  Gibbs–Appell equations over all speeds (M, F) project onto the
  independent ones by the chain rule through u' = T u_i' + [0; w],
  T = [I; A_rs]:

      M_r = Tᵀ M T,      F_r = Tᵀ (F - M [0; w]).

  For the generated code, u_d, A_rs and w are *intermediates*: the linear
  solve is done with ``constraint_solver`` on a matrix of placeholder
  symbols, and every placeholder is defined by its entry. Nothing is
  expanded: the generated program computes B_d's entries, then the small
  solve, then M_r and F_r on top (O(m³) work, not an expression swell).

- **Run-time constraints** (configuration constraints without
  ``q_dependent``, velocity constraints without ``u_dependent``): the rows
  A(q, t) u = B(q, t) and B' for the SVD elimination of the generated code
  (Singh & Likins), and f(q, t) with its Jacobian for projection. A set
  that leaves no motion is refused (codegen.formulation.freedom).

:func:`prepare` sorts the user's constraints into these kinds.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sm
from sympy.physics.vector import dynamicsymbols

from ..equations.intermediates import Intermediate
from .freedom import check_freedom
from .kinematics import Kinematics, as_list, linear_coefficients, linear_solver
from ..symbolic.expressions import memo_xreplace, probe_matrix

__all__ = ["DependentSpeeds", "dependent_speeds", "runtime_constraints",
           "resolve", "project", "kane_form", "Prepared", "prepare", "ConstraintMembers"]

t = dynamicsymbols._t


def definitions(intermediates: list) -> dict:
    """{symbol: its definition over the states alone}, for resolve's memo."""
    memo = {}
    for item in intermediates:          # definitions come before their uses
        memo[item.symbol] = memo_xreplace(item.expr, memo)
    return memo


def resolve(exprs, intermediates: list, memo: dict = None):
    """exprs (a Matrix or a list) with every intermediate replaced by its
    definition, recursively: the same quantities over the states alone. memo: a
    ``definitions(intermediates)`` kept by the caller for many calls."""
    memo = definitions(intermediates) if memo is None else memo
    if isinstance(exprs, sm.MatrixBase):
        return exprs.applyfunc(lambda e: memo_xreplace(e, memo))
    return [memo_xreplace(sm.sympify(e), memo) for e in exprs]


@dataclass
class DependentSpeeds:
    """k_nh u + f_nh = 0 and k_dnh u' + f_dnh = 0 on plain symbols (KanesMethod's names)."""
    k_nh: sm.Matrix
    f_nh: sm.Matrix
    k_dnh: sm.Matrix
    _f_dnh: sm.Matrix               # None until f_dnh is first asked for
    given_accelerations: bool
    solver: object
    p: int
    k_aux: sm.Matrix                # the auxiliary speeds' columns of the velocity constraints
    kin: Kinematics = field(repr=False)
    _Ars: sm.Matrix = field(default=None, repr=False)

    @property
    def f_dnh(self) -> sm.Matrix:
        """d/dt(k_nh) u + d/dt(f_nh) (at u' = 0), unless acceleration constraints were given."""
        if self._f_dnh is None:
            kin, k_nh, us = self.kin, self.k_nh, self.kin.us
            self._f_dnh = sm.Matrix(kin.dt_shared(
                [sm.Add(*[k_nh[i, j] * us[j] for j in range(k_nh.cols)]) + self.f_nh[i]
                 for i in range(self.m)]))
        return self._f_dnh

    @property
    def m(self):
        return self.k_nh.rows

    @property
    def Ars(self) -> sm.Matrix:
        """A_rs = -B_d⁻¹ B_i with constraint_solver, as KanesMethod forms it (plain)."""
        if self._Ars is None:
            p = self.p
            self._Ars = -self.solver(self.k_nh[:, p:], self.k_nh[:, :p])
        return self._Ars

    @property
    def Ars_aux(self) -> sm.Matrix:
        """-B_d⁻¹ B_aux: the dependent speeds' share of the auxiliary speeds'
        partial velocities (KanesMethod projects the auxiliary equations with it)."""
        return -self.solver(self.k_nh[:, self.p:], self.k_aux)

    def intermediates(self, kin: Kinematics):
        """(intermediates, A_rs, w): u_d, A_rs and w as placeholders solved by constraint_solver.

        The dependent speeds' own plain symbols are defined here, so every
        expression that uses them (q', M, F) needs nothing else.
        """
        p, m = self.p, self.m
        items = []

        def place(name, expr):
            expr = sm.sympify(expr)
            if expr.is_number or expr.is_Symbol:
                return expr
            s = sm.Dummy(name)
            items.append(Intermediate(s, expr, "nh_" + name))
            return s
        us = kin.us
        Bd = sm.Matrix(m, m, lambda i, j: place(f"vc{i}_{j}", self.k_nh[i, p + j]))
        rhs_u = [place(f"vr{i}", -(sm.Add(*[self.k_nh[i, j] * us[j] for j in range(p)])
                                    + self.f_nh[i])) for i in range(m)]
        rhs_A = sm.Matrix(m, p, lambda i, j: place(f"vb{i}_{j}", -self.k_nh[i, j]))
        if m > 3:
            def solve(A, b, name):
                return self.solver(A, b)
        else:
            def solve(A, b, name):
                return _adjugate_solve(A, b, place, name)
        X = solve(Bd, sm.Matrix.hstack(sm.Matrix(rhs_u), rhs_A), "v")
        for k in range(m):
            items.append(Intermediate(us[p + k], X[k, 0], f"nh_{us[p + k].name}"))
        Ars = sm.Matrix(m, p, lambda k, j: place(f"ars{k}_{j}", X[k, 1 + j]))
        # u_d' at u_i' = 0: from k_dnh u' + f_dnh = 0 with u_i' = 0
        rhs_w = sm.Matrix([place(f"ar{i}", -self.f_dnh[i]) for i in range(m)])
        Ka = Bd if not self.given_accelerations else \
            sm.Matrix(m, m, lambda i, j: place(f"ac{i}_{j}", self.k_dnh[i, p + j]))
        W = solve(Ka, rhs_w, "a")
        w = sm.Matrix([place(f"w{k}", W[k, 0]) for k in range(m)])
        return items, Ars, w


def _adjugate_solve(A: sm.Matrix, b: sm.Matrix, place, name: str) -> sm.Matrix:
    """A⁻¹ b = adj(A) b / det(A) for a small matrix of placeholders. A pivoted
    solve on placeholders fixes its pivots blind, and an entry that vanishes
    at a special state (the upright bicycle's B_d) makes 0/0 there; this
    divides only by det(A), zero only where A is singular."""
    inv_det = place(f"idet_{name}", 1 / A.det(method="berkowitz"))
    return (A.adjugate(method="berkowitz") * b) * inv_det


def project(M: sm.Matrix, F: sm.Matrix, Ars: sm.Matrix, w: sm.Matrix):
    """M_r = Tᵀ M T, F_r = Tᵀ (F - M [0; w]) with T = [I; Ars] (lower triangle mirrored)."""
    p = Ars.cols
    T = sm.eye(p).col_join(Ars)
    MT = M * T
    Mr = sm.zeros(p, p)
    for j in range(p):
        for k in range(j + 1):
            Mr[j, k] = Mr[k, j] = sm.Add(*[T[a, j] * MT[a, k] for a in range(T.rows)
                                           if T[a, j] != 0 and MT[a, k] != 0])
    c = sm.zeros(p, 1).col_join(w)
    Fr = T.T * (F - M * c)
    return Mr, Fr


def kane_form(kin: Kinematics, nh: DependentSpeeds | None, M, Q, R) -> dict:
    """KanesMethod's blocks from M, Q, R over all speeds: projected onto the
    independent speeds with its A_rs (Mk, Qk, Rk), (fr, frstar) with the auxiliary
    equations last, and those alone (aux_eq, or None)."""
    o, p = len(kin.us), kin.p
    udot = list(kin.uds)
    Mk, Qk, Rk = M[:o, :o], Q[:o, :], R[:o, :]
    fr, frstar = Qk, -(Rk + _times(Mk, udot))
    if nh is not None:         # KanesMethod's projection with its A_rs
        Ars = nh.Ars
        Mk, Qk, Rk, fr, frstar = (X[:p, :] + Ars.T * X[p:, :]
                                  for X in (Mk, Qk, Rk, fr, frstar))
    aux_eq = None
    if kin.uas:
        Ma, Qa, Ra = M[o:, :o], Q[o:, :], R[o:, :]
        if nh is not None:
            Aa = nh.Ars_aux
            Ma, Qa, Ra = (X + Aa.T * Y[p:o, :] for X, Y in ((Ma, M[:, :o]), (Qa, Q), (Ra, R)))
        fr_aux, frstar_aux = Qa, -(Ra + _times(Ma, udot))
        aux_eq = fr_aux + frstar_aux
        fr, frstar = fr.col_join(fr_aux), frstar.col_join(frstar_aux)
    return dict(Mk=Mk, Qk=Qk, Rk=Rk, fr=fr, frstar=frstar, aux_eq=aux_eq)


def _times(M: sm.Matrix, v: list) -> sm.Matrix:
    """M v entry by entry (structural zeros skipped)."""
    return sm.Matrix([sm.Add(*[M[i, j] * v[j] for j in range(M.cols) if M[i, j] != 0])
                      for i in range(M.rows)])


def dependent_speeds(kin: Kinematics, velocity_constraints, acceleration_constraints,
                     constraint_solver) -> DependentSpeeds | None:
    """The symbolic dependent speeds, or None when the model has none."""
    vel = as_list(velocity_constraints, 'velocity_constraints')
    acc = as_list(acceleration_constraints, 'acceleration_constraints')
    m, p = kin.m, kin.p
    if not m:
        if acc:
            raise ValueError("acceleration_constraints need dependent speeds (u_dependent)")
        return None
    if len(vel) != m:
        raise ValueError(f"There must be an equal number of dependent speeds and velocity "
                         f"constraints: {m} dependent speeds, {len(vel)} velocity constraints")
    if acc and len(acc) != m:
        raise ValueError(f"There must be an equal number of dependent speeds and acceleration "
                         f"constraints: {m} dependent speeds, {len(acc)} acceleration constraints")
    solver = linear_solver(constraint_solver, 'constraint_solver')
    plain = [kin.to_plain(e, f"velocity_constraints[{i}]", inputs=False)
             for i, e in enumerate(vel)]
    k_all, b = linear_coefficients(plain, kin.speeds, 'velocity constraint',
                                   [f"{i} ({e})" for i, e in enumerate(vel)])
    o = len(kin.us)
    k_nh, k_aux, f_nh = k_all[:, :o], k_all[:, o:], -b
    f_dnh = None                # the velocity constraints' derivative: formed on first use
    if acc:
        aplain = [kin.to_plain(e, f"acceleration_constraints[{i}]", accelerations=True)
                  for i, e in enumerate(acc)]
        k_dnh, b = linear_coefficients(aplain, kin.uds, 'acceleration constraint',
                                       [f"{i} ({e})" for i, e in enumerate(acc)])
        f_dnh = -b
    else:
        k_dnh = k_nh
    Bd = k_nh[:, p:]
    if not any(_full_rank(Bd, point) for point in range(2)):
        names = ', '.join(str(s) for s in kin.u[p:])
        raise ValueError(f"the velocity constraints cannot be solved for the dependent speeds "
                         f"{names}: their coefficients are singular")
    return DependentSpeeds(k_nh=k_nh, f_nh=f_nh, k_dnh=k_dnh, _f_dnh=f_dnh,
                           given_accelerations=bool(acc), solver=solver, p=p, k_aux=k_aux,
                           kin=kin)


def _full_rank(A: sm.Matrix, point: int) -> bool:
    """A (square) is invertible at a generic numeric point."""
    probed = probe_matrix(A, point)
    if probed is None:
        return True                   # not numeric at a probe: let the solver decide
    An, tol = probed
    return np.linalg.matrix_rank(An, tol=tol) == A.rows


def runtime_constraints(kin: Kinematics, configuration: list, velocity: list):
    """A u = B, B' and f, fq of the constraints left to the run-time elimination, or None.

    Configuration constraints become the rows f_q q' = -f_t, i.e.
    (f_q K) u = -(f_q k + f_t) with q' = K u + k; velocity constraints are
    rows as they are. B' = B_dot - A_dot u is -d/dt(A u - B) at u' = 0.
    """
    p = len(kin.us)
    us = sm.Matrix(kin.us)
    A, B = sm.zeros(0, p), sm.zeros(0, 1)
    f, fq = [], sm.zeros(0, len(kin.qs))
    if configuration:
        fvec = sm.Matrix(configuration)
        fq = fvec.jacobian(kin.qs)
        qdot = sm.Matrix(kin.qdot)
        K = qdot.jacobian(kin.us)
        k0 = qdot.xreplace({s: 0 for s in kin.us})
        A = fq * K
        B = -(fq * k0 + fvec.diff(t))
        f = list(fvec)
    if velocity:
        Av, bv = linear_coefficients(velocity, kin.us, 'velocity constraint',
                                     [f"{i} ({e})" for i, e in enumerate(velocity)])
        A, B = A.col_join(Av), B.col_join(-bv)
    if A.rows == 0:
        return None
    residual = A * us - B
    Bdot = sm.Matrix([-kin.dt(e) for e in residual])
    return dict(A=A, B=B, Bdot=Bdot, f=f, fq=fq, nh=len(f))


@dataclass
class Prepared:
    """A GibbsAppellMethod's constraints on plain symbols, by kind."""
    f_h: sm.Matrix                   # configuration constraints of the dependent coordinates
    nh: DependentSpeeds | None       # the dependent speeds' velocity constraints
    runtime: dict | None             # left to the run-time elimination (runtime_constraints)
    holonomic_rows: list             # the configuration constraints among those


def prepare(kin: Kinematics, configuration_constraints, velocity_constraints,
            acceleration_constraints, constraint_solver) -> Prepared:
    """The constraints as GibbsAppellMethod's arguments give them, checked and sorted:
    with q_dependent (u_dependent) they are KanesMethod's, kept symbolic; without,
    they are left to the run-time elimination, which refuses a set that leaves no
    motion (check_freedom)."""
    config = as_list(configuration_constraints, 'configuration_constraints')
    vel = as_list(velocity_constraints, 'velocity_constraints')
    if kin.n_q_dependent and len(config) != kin.n_q_dependent:
        raise ValueError(f"There must be an equal number of dependent coordinates and "
                         f"configuration constraints: {kin.n_q_dependent} dependent "
                         f"coordinates, {len(config)} configuration constraints")
    f_h = sm.Matrix([kin.to_plain(e, f"configuration_constraints[{i}]", inputs=False)
                     for i, e in enumerate(config)]) if kin.n_q_dependent else sm.zeros(0, 1)
    nh = dependent_speeds(kin, vel if kin.m else [], acceleration_constraints, constraint_solver)
    run_config = [] if kin.n_q_dependent else \
        [kin.to_plain(e, f"configuration_constraints[{i}]", inputs=False)
         for i, e in enumerate(config)]
    run_vel = [] if kin.m else \
        [kin.to_plain(e, f"velocity_constraints[{i}]", inputs=False) for i, e in enumerate(vel)]
    if (run_config or run_vel) and (kin.m or kin.uas):
        raise ValueError("constraints left to the run-time elimination (without dependent "
                         "coordinates or speeds) cannot be combined with dependent or "
                         "auxiliary speeds: give all velocity constraints with u_dependent")
    runtime = runtime_constraints(kin, run_config, run_vel)
    if runtime is not None:
        check_freedom(runtime['A'], runtime['f'], runtime['fq'], kin.qs)
    return Prepared(f_h=f_h, nh=nh, runtime=runtime, holonomic_rows=run_config)


class ConstraintMembers:
    """GibbsAppellMethod's members for its constraints (beyond KanesMethod's), read
    from its ``_constraints`` (Prepared) and ``_kin``, as functions of time."""

    @property
    def constraint_matrices(self):
        """(A, B) with A(q, t) u = B(q, t): the constraints left to run time, or None.

        Rows from configuration constraints first, then velocity constraints;
        columns over ``u``."""
        c = self._constraints.runtime
        return None if c is None else (self._kin.to_time(c['A']), self._kin.to_time(c['B']))

    @property
    def constraint_rate(self):
        """B' = B_dot - A_dot u, with A u' = B' (or None)."""
        c = self._constraints.runtime
        return None if c is None else self._kin.to_time(c['Bdot'])

    @property
    def configuration_residual(self):
        """f(q, t) of the configuration constraints left to run time (or None)."""
        c = self._constraints.runtime
        return None if c is None else self._kin.to_time(sm.Matrix(c['f']))

    @property
    def holonomic_constraint_matrices(self):
        """(A, B) with A(q, t) q' = B from the configuration constraints, or None."""
        rows = list(self._constraints.f_h) + self._constraints.holonomic_rows
        if not rows:
            return None
        f = sm.Matrix(rows)
        return self._kin.to_time(f.jacobian(self._kin.qs)), self._kin.to_time(-f.diff(t))

    @property
    def velocity_constraint_matrices(self):
        """(A, B) with A u = B, over ``u``, of the velocity constraints, or None."""
        nh, c, to_time = self._constraints.nh, self._constraints.runtime, self._kin.to_time
        if nh is not None:
            return to_time(nh.k_nh), to_time(-nh.f_nh)
        if c is None or c['A'].rows == c['nh']:
            return None
        return to_time(c['A'][c['nh']:, :]), to_time(c['B'][c['nh']:, :])
