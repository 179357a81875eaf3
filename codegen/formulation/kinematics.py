"""Coordinates, speeds and their kinematics on plain symbols.

SymPy mechanics writes coordinates and speeds as functions of time, q(t),
u(t). Differentiating and substituting those is slow, so the formulation
works on plain symbols: :class:`Kinematics` owns the map between the two
worlds and the kinematic differential equations

    k_kqdot(q, t) q' + k_ku(q, t) u + f_k(q, t) = 0            (KanesMethod's names)

in both forms: implicit (the matrices as given) and explicit (q' solved
with the chosen linear solver, formed only when something needs q'). It
differentiates in time by the chain rule

    d/dt f(q, u, t) = sum_k (df/dq_k) q'_k(q, u, t) + df/dt   (+ df/du u', kept apart).

The speeds are all of KanesMethod's: independent, dependent and auxiliary
(in that order). Nothing here knows of bodies, loads or constraints.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import sympy as sm
from sympy.core.function import AppliedUndef
from sympy.physics.vector import dynamicsymbols

from ..symbolic.forward_mode import forward
from ..symbolic.counting import operation_count
from ..symbolic.expressions import dag_atoms, memo_xreplace, probe_matrix

__all__ = ["Kinematics", "as_list", "linear_solver", "linear_coefficients"]

t = dynamicsymbols._t


def as_list(seq, what: str) -> list:
    """A list from a sequence, a Matrix or None (what names it in errors)."""
    if seq is None:
        return []
    if isinstance(seq, sm.MatrixBase):
        return list(seq)
    if isinstance(seq, (str, bytes)) or not isinstance(seq, Iterable):
        raise TypeError(f"{what} must be an iterable, got {seq!r}")
    return list(seq)


def linear_solver(solver, what: str):
    """A function x = f(A, b) from KanesMethod's solver argument: a method
    name of ``Matrix.solve`` ('LU', 'CRAMER', ...) or a callable."""
    if callable(solver):
        return solver
    if not isinstance(solver, str):
        raise TypeError(f"{what} must be a method name of Matrix.solve (e.g. 'LU', 'CRAMER') "
                        f"or a callable f(A, b), got {solver!r}")
    return lambda A, b: sm.Matrix.solve(A, b, method=solver)


def _check_speeds_and_coordinates(groups) -> None:
    """KanesMethod's checks: functions of time only, no duplicates, no overlap."""
    seen = {}
    for items, what in groups:
        for s in items:
            if not (isinstance(s, AppliedUndef) and s.args == (t,)):
                raise ValueError(f"{what}: {s!r} is not a function of time; create it "
                                 f"with sympy.physics.mechanics.dynamicsymbols")
            if s in seen:
                raise ValueError(f"{s} is given twice (in {seen[s]} and {what})")
            seen[s] = what


def linear_coefficients(exprs: Sequence, syms: Sequence, what: str, labels: Sequence):
    """A, b with exprs = A syms + b; NonlinearError (a ValueError, as
    sympy's linear_eq_to_matrix raises) if an expression is not linear."""
    from sympy.solvers.solveset import NonlinearError
    A = sm.Matrix(len(exprs), len(syms), lambda i, j: exprs[i].diff(syms[j]))
    symset = set(syms)
    for i in range(A.rows):
        bad = sorted(s.name for s in A.row(i).free_symbols & symset)
        if bad:
            raise NonlinearError(f"{what} {labels[i]} is not linear in {', '.join(bad)}")
    zero = {s: 0 for s in syms}
    b = sm.Matrix([e.xreplace(zero) for e in exprs])
    return A, b


def _singular_columns(K: sm.Matrix) -> list:
    """Columns of K that a numeric probe at two generic points finds dependent
    (structurally zero columns first), [] if K is invertible there. Block by block
    (_blocks): the kinematics of n coordinates are mostly n blocks of one."""
    rows = K.tolist()
    zero = [j for j in range(K.cols) if all(row[j] == 0 for row in rows)]
    if zero:
        return zero
    if K.rows != K.cols:
        return _singular_block(K)
    for idx in _blocks(K):
        bad = _singular_block(K.extract(idx, idx))
        if bad:
            return [idx[j] for j in bad]
    return []


def _singular_block(K: sm.Matrix) -> list:
    """_singular_columns of a matrix without zero columns, by the numeric probe."""
    for point in range(2):
        probed = probe_matrix(K, point)
        if probed is None:
            return []                 # not numeric at a probe: let the solver decide
        Kn, tol = probed
        if np.linalg.matrix_rank(Kn, tol=tol) == K.rows:
            return []
    # the last column whose removal keeps the rank names the culprit
    rank = np.linalg.matrix_rank(Kn, tol=tol)
    return [j for j in range(K.cols)
            if np.linalg.matrix_rank(np.delete(Kn, j, 1), tol=tol) == rank][-1:]


def _blocks(A) -> list:
    """Index groups of the independent diagonal blocks of the square A (a Matrix, or
    its rows as lists)."""
    rows = A.tolist() if isinstance(A, sm.MatrixBase) else A
    parent = list(range(len(rows)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    for i, row in enumerate(rows):
        for j, a in enumerate(row):
            if a != 0:
                parent[find(i)] = find(j)
    groups = {}
    for i in range(len(rows)):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def _is_pythagorean(x) -> bool:
    """x is sin(a)**2 + cos(a)**2."""
    if not (x.is_Add and len(x.args) == 2):
        return False
    a, b = x.args
    return any(u.is_Pow and u.exp == 2 and isinstance(u.base, sm.sin)
               and v == sm.cos(u.base.args[0])**2 for u, v in ((a, b), (b, a)))


def _tidy(e):
    """Cancel, and drop the sin**2 + cos**2 factors an LU solve leaves (much cheaper than simplify)."""
    n, d = sm.fraction(sm.cancel(e))
    n, d = (sm.factor(x).replace(_is_pythagorean, lambda x: sm.S.One) for x in (n, d))
    return sm.cancel(n / d)


#: tidy a block's solution only up to this many operations: cancel and factor
#: grow fast with size (quaternion kinematics would take minutes)
_TIDY_LIMIT = 400


def _size(matrix) -> int:
    return operation_count(list(matrix))


def _solve_by_blocks(A: sm.Matrix, B: sm.Matrix) -> list:
    """A⁻¹ B for the square A, one independent diagonal block at a time (LU), as rows;
    small blocks (up to 4 unknowns and _TIDY_LIMIT operations) are tidied. Entries are
    read as lists: SymPy's element access costs O(n²) microseconds on n coordinates."""
    Ar, Br = A.tolist(), B.tolist()
    X = [None] * len(Ar)
    for idx in _blocks(Ar):
        if len(idx) == 1:
            a = Ar[idx[0]][idx[0]]
            X[idx[0]] = [b / a for b in Br[idx[0]]]
            continue
        Ab = sm.Matrix([[Ar[i][j] for j in idx] for i in idx])
        sol = Ab.LUsolve(sm.Matrix([Br[i] for i in idx]))
        if len(idx) <= 4 and _size(sol) <= _TIDY_LIMIT:
            sol = sol.applyfunc(lambda e: _tidy(e) if e != 0 else e)
        for r, i in enumerate(idx):
            X[i] = sol.row(r).tolist()[0]
    return X


class Kinematics:
    """The map q(t), u(t) <-> plain symbols and the kinematic differential equations.

    Parameters mirror ``KanesMethod``. After construction:

    - ``q``, ``u``, ``u_aux``: coordinates (independent then dependent), speeds
      (independent then dependent) and auxiliary speeds, as Matrices of
      functions of time;
    - ``qs``, ``us``, ``uas``: their plain symbols; ``speeds`` = us + uas, the
      speeds partial velocities are taken for; ``uds``: plain u' of ``us``;
    - ``k_kqdot``, ``k_ku``, ``f_k``: the implicit kinematic matrices, exactly
      as KanesMethod forms them (functions of time);
    - ``qdot``: q' over (qs, us, t), solved on first use.
    """

    def __init__(self, q_ind, u_ind, kd_eqs=None, q_dependent=None, u_dependent=None,
                 u_auxiliary=None, kd_eqs_solver='LU'):
        q_ind, q_dep = as_list(q_ind, 'q_ind'), as_list(q_dependent, 'q_dependent')
        u_ind, u_dep = as_list(u_ind, 'u_ind'), as_list(u_dependent, 'u_dependent')
        u_aux = as_list(u_auxiliary, 'u_auxiliary')
        _check_speeds_and_coordinates([(q_ind, 'q_ind'), (q_dep, 'q_dependent'),
                                       (u_ind, 'u_ind'), (u_dep, 'u_dependent'),
                                       (u_aux, 'u_auxiliary')])
        self.solver = linear_solver(kd_eqs_solver, 'kd_eqs_solver')
        self.solver_name = kd_eqs_solver if isinstance(kd_eqs_solver, str) else None
        self.q = sm.Matrix(q_ind + q_dep)
        self.u = sm.Matrix(u_ind + u_dep)
        self.u_aux = sm.Matrix(u_aux)
        self.n_q_dependent, self.p, self.m = len(q_dep), len(u_ind), len(u_dep)
        # Dummies: no clash with a constant of the model that shares a name
        self.qs = [sm.Dummy(str(s.func)) for s in self.q]
        self.us = [sm.Dummy(str(s.func)) for s in self.u]
        self.uas = [sm.Dummy(str(s.func)) for s in u_aux]
        self.speeds = self.us + self.uas
        self.uds = [sm.Dummy(str(s.func) + 'd') for s in self.u]
        self._base = dict(zip(list(self.q) + list(self.u) + u_aux,
                              self.qs + self.us + self.uas))
        self._qset = set(self.q)
        self._udot = {s.diff(t): d for s, d in zip(self.u, self.uds)}
        self._q_index = {s: k for k, s in enumerate(self.qs)}
        self._u_index = {s: j for j, s in enumerate(self.speeds)}
        self._dt_cache, self._du_cache = {}, {}
        self._qdot = None
        self._memo = dict(self._base)            # to_plain's memo, q' added once solved
        back = {v: k for k, v in self._base.items()}
        back.update(zip(self.uds, [s.diff(t) for s in self.u]))
        self._to_time = back                     # to_time's memo, kept across calls
        self._base_back = dict(back)
        self._kinematic_equations(as_list(kd_eqs, 'kd_eqs'), u_aux)

    def _kinematic_equations(self, kd, u_aux):
        """KanesMethod's implicit matrices k_ku u + k_kqdot q' + f_k = 0, formed
        on plain symbols (q' as placeholders): ``kd_plain`` = (k_kqdot, k_ku
        with the auxiliary speeds' columns appended, f_k)."""
        n = len(self.q)
        self.has_kd = bool(kd)
        if not kd:
            self.kd_plain = None
            return
        if len(kd) != n:
            raise ValueError(f"There must be an equal number of kinematic differential equations "
                             f"and coordinates: {n} coordinates, {len(kd)} kd_eqs")
        qd = [sm.Dummy(f"{s.func}d") for s in self.q]
        memo = {**self._memo, **{s.diff(t): d for s, d in zip(self.q, qd)}}
        kd = [memo_xreplace(sm.sympify(e), memo) for e in kd]
        speeds = self.us + self.uas
        def row(e, wrt):        # only by the symbols e has: O(n) for the usual u = q'
            free = e.free_symbols
            return [e.diff(s) if s in free else sm.S.Zero for s in wrt]
        rows_qd, rows_u = [row(e, qd) for e in kd], [row(e, speeds) for e in kd]
        k_kqdot = sm.Matrix(rows_qd)
        k_ku = sm.Matrix(rows_u) if speeds else sm.zeros(n, 0)
        zero = dict.fromkeys(speeds + qd, 0)
        f_k = sm.Matrix([e.xreplace(zero) for e in kd])
        linear = set(self.us + qd)
        # the nonzero entries only: the matrices hold n² cells, the usual u = q' 2n entries
        bad = {s for rows in (rows_qd, rows_u, [f_k]) for r in rows for e in r if e != 0
               for s in e.free_symbols & linear}
        if bad or any(d in e.free_symbols for e in f_k for d in qd):
            back = {**self._base_back, **{d: s.diff(t) for s, d in zip(self.q, qd)}}
            names = [back[s] for s in self.us + qd if s in bad]
            raise ValueError(f"The provided kinematic differential equations are nonlinear in "
                             f"{names}. They must be linear in the generalized speeds and "
                             f"derivatives of the generalized coordinates.")
        for d in [s for e in kd for s in e.atoms(sm.Derivative) if s.expr in self._qset]:
            raise ValueError(f"kd_eqs contain {d}: only first derivatives of the coordinates")
        self.kd_plain = (k_kqdot, k_ku, f_k)

    @property
    def k_kqdot(self):
        """k_kqdot of the kinematic equations as given (functions of time)."""
        return self.to_time(self.kd_plain[0]) if self.has_kd else sm.zeros(0, len(self.q))

    @property
    def k_ku(self):
        """k_ku of the kinematic equations as given (auxiliary speeds zero)."""
        o = len(self.us)
        return self.to_time(self.kd_plain[1][:, :o]) if self.has_kd else sm.zeros(0, o)

    @property
    def f_k(self):
        """f_k of the kinematic equations as given (auxiliary speeds zero)."""
        return self.to_time(self.kd_plain[2]) if self.has_kd else sm.zeros(0, 1)

    # -- conversions --------------------------------------------------------
    def _refuse_stray(self, expr, what):
        stray = sorted(str(f) for f in _undifferentiated_functions(expr) if f not in self._base)
        if stray:
            raise ValueError(f"{what} contains {', '.join(stray)}, which is neither a "
                             f"coordinate nor a speed of the model (list it in q_ind, u_ind, "
                             f"u_dependent or u_auxiliary; a prescribed motion is written as "
                             f"the time derivative of a specified position, s.diff(t))")

    def to_plain(self, expr, what: str = "expression", inputs: bool = True,
                 accelerations: bool = False) -> sm.Expr:
        """A q(t), u(t), q'(t) expression on plain symbols (q' as solved from kd_eqs).

        inputs=False: a function of time that is neither a coordinate nor a
        speed is an error that names it (velocities may only move with the
        speeds; a prescribed motion is an explicit function of t).
        accelerations=True: u' becomes ``uds`` (acceleration constraints).
        """
        expr = sm.sympify(expr)
        if not inputs:
            self._refuse_stray(expr, what)
        with_udot = False
        for d in expr.atoms(sm.Derivative):
            if d in self._memo:
                continue
            if d.expr in self._qset and d.derivative_count == 1:
                self._solve_qdot(what)
            elif accelerations and d in self._udot:
                with_udot = True
            elif d.expr in self._base:
                raise ValueError(f"{what} contains {d}, which is not expressible in the "
                                 f"coordinates and speeds")
        return memo_xreplace(expr, {**self._memo, **self._udot} if with_udot else self._memo)

    def to_time(self, exprs):
        """Plain symbols back to SymPy's functions of time (u' as u.diff(t)).

        Takes a Matrix or one expression. Shared subexpressions are converted
        once: the walk is memoized across all entries.
        """
        memo = self._to_time
        if isinstance(exprs, sm.MatrixBase):
            return exprs.applyfunc(lambda e: memo_xreplace(e, memo))
        return memo_xreplace(exprs, memo)

    # -- the explicit kinematics -----------------------------------------------
    @property
    def qdot(self) -> list:
        """q' as expressions of (qs, us, t), solved with kd_eqs_solver on first use."""
        self._solve_qdot("the equations")
        return self._qdot

    def _solve_qdot(self, what):
        if self._qdot is not None:
            return
        if not self.has_kd:
            raise AttributeError(f"{what} contain time derivatives of coordinates, which "
                                 f"need kinematic differential equations (kd_eqs)")
        K, k_ku, f_k = self.kd_plain
        singular = _singular_columns(K)
        if singular:
            names = ', '.join(str(self.q[i].diff(t)) for i in singular)
            raise ValueError(f"kd_eqs cannot be solved for {names}: their coefficient matrix "
                             f"k_kqdot is singular")
        if self.solver_name == "LU":
            # LU block by block, small blocks tidied: the same solution without the
            # removable singularities (1/cos) an unpivoted LU leaves in a rotation
            X = _solve_by_blocks(K, f_k.row_join(k_ku))
            fk, ku = [row[0] for row in X], [row[1:] for row in X]
        else:
            try:
                fk, ku = list(self.solver(K, f_k)), self.solver(K, k_ku).tolist()
            except ValueError as exc:
                raise ValueError(f"kd_eqs cannot be solved for q': {exc}") from None
        us = self.speeds
        self._qdot = [-(sm.Add(*[c * u for c, u in zip(row, us) if c != 0]) + f)
                      for row, f in zip(ku, fk)]
        self._memo.update({s.diff(t): e for s, e in zip(self.q, self._qdot)})

    def explicit_kinematics(self):
        """(k_ku, f_k) of the solved form q' = -(k_ku u + f_k), functions of time
        (auxiliary speeds zero, as in KanesMethod's matrices)."""
        us = self.us
        qdot = [e.xreplace(dict.fromkeys(self.uas, 0)) for e in self.qdot]
        ku = sm.Matrix([[e.diff(s) for s in us] for e in qdot]) if us else \
            sm.zeros(len(qdot), 0)
        fk = sm.Matrix([e.xreplace(dict.fromkeys(us, 0)) for e in qdot])
        return self.to_time(-ku), self.to_time(-fk)

    # -- calculus -----------------------------------------------------------
    def dt(self, expr: sm.Expr) -> sm.Expr:
        """d/dt of expr(q, u, t) at u' = 0: the q' chain rule plus explicit time.

        Term by term with a cache, each term differentiated only with respect
        to the coordinates it contains: a chain's velocities repeat their
        parents' terms, which are then differentiated once.
        """
        return sm.Add(*[self._dt_term(a) for a in sm.Add.make_args(expr)])

    def _dt_term(self, term):
        out = self._dt_cache.get(term)
        if out is None:
            free = term.free_symbols
            ks = sorted(k for k in map(self._q_index.get, free) if k is not None)
            qdot = self.qdot if ks else None
            parts = [term.diff(self.qs[k]) * qdot[k] for k in ks]
            if t in free:
                parts.append(term.diff(t))
            out = self._dt_cache[term] = sm.Add(*parts)
        return out

    def dt_shared(self, exprs) -> list:
        """dt of each of exprs by forward mode over their common DAG (codegen.symbolic.forward_mode):
        every distinct subexpression is differentiated once, for all of exprs, and the
        results share subexpressions instead of writing them out. For large expressions
        that are differentiated once (the velocity constraints' rate, f_dnh)."""
        seeds = {qk: {0: self.qdot[k]} for qk, k in self._q_index.items()}
        seeds[t] = {0: sm.S.One}
        return [g.get(0, sm.S.Zero) for _, g in forward(list(exprs), seeds, {}, {})]

    def jacobian_u(self, expr: sm.Expr) -> list:
        """[d expr / d u_j] over ``speeds`` (all speeds, auxiliary ones last), term by term."""
        parts = {}
        for term in sm.Add.make_args(expr):
            for j, d in self._du_term(term):
                parts.setdefault(j, []).append(d)
        zero = sm.S.Zero
        return [sm.Add(*parts[j]) if j in parts else zero for j in range(len(self.speeds))]

    def _du_term(self, term):
        out = self._du_cache.get(term)
        if out is None:
            free = term.free_symbols
            js = sorted(j for j in map(self._u_index.get, free) if j is not None)
            out = self._du_cache[term] = [(j, term.diff(self.speeds[j])) for j in js]
        return out


def _undifferentiated_functions(expr) -> set:
    """The functions of time in expr outside of derivatives (s(t) counts, s'(t) does not)."""
    return dag_atoms([expr], AppliedUndef, skip=sm.Derivative)
