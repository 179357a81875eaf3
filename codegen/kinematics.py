"""Coordinates, speeds and their kinematics on plain symbols.

SymPy mechanics writes coordinates and speeds as functions of time, q(t),
u(t). Differentiating and substituting those is slow, so the formulation
works on plain symbols: :class:`Kinematics` owns the map between the two
worlds, solves the kinematic differential equations for q', eliminates the
dependent speeds, and differentiates in time by the chain rule

    d/dt f(q, u, t) = sum_k (df/dq_k) q'_k(q, u, t) + df/dt  (+ df/du u', kept apart).

Everything here is independent of bodies and loads.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import sympy as sm
from sympy.core.function import AppliedUndef
from sympy.physics.vector import dynamicsymbols

__all__ = ["Kinematics", "as_list", "memo_xreplace", "numeric_probe"]

t = dynamicsymbols._t


def as_list(seq, what: str) -> list:
    """A list from a sequence, a Matrix or None (what names it in errors)."""
    if seq is None:
        return []
    if isinstance(seq, sm.MatrixBase):
        return list(seq)
    if isinstance(seq, (str, bytes)) or not isinstance(seq, Iterable):
        raise TypeError(f"{what} must be a sequence, got {seq!r}")
    return list(seq)


def _check_dynamicsymbols(items: list, what: str) -> None:
    for s in items:
        if not (isinstance(s, AppliedUndef) and s.args == (t,)):
            raise TypeError(f"{what}: {s!r} is not a function of time; create it "
                            f"with sympy.physics.mechanics.dynamicsymbols")


def _linear_coefficients(exprs: Sequence[sm.Expr], syms: Sequence[sm.Symbol],
                         what: str, labels: Sequence):
    """A, b with exprs = A syms + b; ValueError if exprs are not linear in syms."""
    A = sm.Matrix(len(exprs), len(syms), lambda i, j: exprs[i].diff(syms[j]))
    symset = set(syms)
    for i in range(A.rows):
        if A.row(i).free_symbols & symset:
            raise ValueError(f"{what} {labels[i]} is not linear in "
                             f"{', '.join(str(s) for s in syms)}")
    zero = {s: 0 for s in syms}
    b = sm.Matrix([e.xreplace(zero) for e in exprs])
    return A, b


def _blocks(A: sm.Matrix) -> list:
    """Index groups of the independent diagonal blocks of the square A."""
    parent = list(range(A.rows))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    for i in range(A.rows):
        for j in range(A.cols):
            if A[i, j] != 0:
                parent[find(i)] = find(j)
    groups = {}
    for i in range(A.rows):
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


def numeric_probe(*exprs, point: int = 0) -> dict:
    """Deterministic, generic numbers for every symbol and function of time in exprs.

    For checks that hold or fail for almost all values (singular, symmetric,
    rank): a probe rules out quickly what an exact check would grind through.
    point: which of several such points (0, 1, ...), for a check at more than one.
    """
    atoms = set()
    for e in exprs:
        atoms |= e.free_symbols | set(e.atoms(AppliedUndef))
    return {s: sm.Float(0.3 + 0.0713 * k + 0.113 * point)
            for k, s in enumerate(sorted(atoms, key=str))}


def _is_singular(A: sm.Matrix) -> bool:
    """A is singular for all values of its symbols (numeric probe, then simplify)."""
    det = A.det(method='berkowitz')
    val = det.xreplace(numeric_probe(det)).evalf()
    if val.is_number and val.is_finite and abs(val) > 1e-9:
        return False
    return sm.simplify(det) == 0


def _solve_linear(A: sm.Matrix, b: sm.Matrix, what: str, unknowns) -> sm.Matrix:
    """x with A x = b, block by block; small blocks are tidied."""
    if A.rows != A.cols:
        raise ValueError(f"{what}: {A.rows} equations for {A.cols} unknowns")
    x = [None] * A.rows
    for idx in _blocks(A):
        Ab = A.extract(idx, idx)
        if _is_singular(Ab):
            names = ', '.join(str(unknowns[i]) for i in idx)
            raise ValueError(f"{what} cannot be solved for {names}: the "
                             f"coefficient matrix is singular")
        if len(idx) == 1:
            sol = [b[idx[0]] / Ab[0, 0]]
        else:
            sol = Ab.LUsolve(b.extract(idx, [0]))
            if len(idx) <= 4:
                sol = [_tidy(e) for e in sol]
        for i, e in zip(idx, sol):
            x[i] = e
    return sm.Matrix(x)


class Kinematics:
    """The map q(t), u(t) <-> plain symbols and the solved kinematics.

    Parameters mirror ``KanesMethod``. After construction:

    - ``q``, ``u``: all coordinates (independent then dependent) and the
      independent speeds, as functions of time;
    - ``qs``, ``us``, ``uds``: the plain symbols of q, of the independent
      speeds, and of their derivatives u';
    - ``qdot``: q' as expressions of (qs, us, t), dependent speeds eliminated;
    - ``udep``: {dependent speed symbol: expression of (qs, us, t)};
    - ``velocity_constraint_matrices``: (A, B) with A u = B over all speeds,
      for constraints given without dependent speeds (else None);
    - ``holonomic_constraint_matrices``: (A, B) with A(q, t) q' = B, the time
      derivative of the configuration constraints f(q, t) = 0 (else None).
    """

    def __init__(self, q_ind, u_ind, kd_eqs=(), q_dependent=(), u_dependent=(),
                 velocity_constraints=(), configuration_constraints=()):
        q_ind, q_dep = as_list(q_ind, 'q_ind'), as_list(q_dependent, 'q_dependent')
        u_ind, u_dep = as_list(u_ind, 'u_ind'), as_list(u_dependent, 'u_dependent')
        for items, what in ((q_ind, 'q_ind'), (q_dep, 'q_dependent'),
                            (u_ind, 'u_ind'), (u_dep, 'u_dependent')):
            _check_dynamicsymbols(items, what)
        allq, allu = q_ind + q_dep, u_ind + u_dep
        for items, what in ((allq, 'coordinates'), (allu, 'speeds')):
            if len(set(items)) != len(items):
                raise ValueError(f"{what} contain duplicates: {items}")
        if set(allq) & set(allu):
            raise ValueError(f"{sorted(map(str, set(allq) & set(allu)))} "
                             f"given both as coordinate and as speed")
        self._qset = set(allq) | set(allu)
        self.q = sm.Matrix(allq)
        self.u = sm.Matrix(u_ind)
        self.u_dependent = sm.Matrix(u_dep)
        # Dummies: no clash with any constant of the model that shares a name
        self.qs = [sm.Dummy(str(s.func)) for s in allq]
        self._us_all = [sm.Dummy(str(s.func)) for s in allu]
        self.us = self._us_all[:len(u_ind)]
        self.uds = [sm.Dummy(str(s.func) + 'd') for s in u_ind]
        qd = [sm.Dummy(str(s.func) + 'd') for s in allq]
        base = dict(zip(allq, self.qs))
        base.update(zip(allu, self._us_all))
        qd_map = {s.diff(t): d for s, d in zip(allq, qd)}

        # kinematic differential equations: K_qd q' + K_u u + k = 0
        kd = [sm.sympify(e) for e in as_list(kd_eqs, 'kd_eqs')]
        if len(kd) != len(allq):
            raise ValueError(f"need one kinematic differential equation per "
                             f"coordinate: {len(allq)} coordinates, {len(kd)} kd_eqs")
        kd_plain = [self._plain(e, {**qd_map, **base}, f"kd_eqs[{i}]")
                    for i, e in enumerate(kd)]
        for i, e in enumerate(kd_plain):
            stray = sorted(map(str, e.atoms(AppliedUndef)))
            if stray:
                raise ValueError(f"kd_eqs[{i}] = {kd[i]} contains {', '.join(stray)}, which is "
                                 f"neither a coordinate nor a speed (list it in u_ind or "
                                 f"u_dependent)")
        K_qd, rest = _linear_coefficients(kd_plain, qd, 'kinematic equation',
                                          [f"kd_eqs[{i}] = {e}" for i, e in enumerate(kd)])
        qdot_all = _solve_linear(K_qd, -rest, 'the kinematic equations', qd)
        K_u, _ = _linear_coefficients(list(qdot_all), self._us_all,
                                      "q' solved from kd_eqs, component", allq)
        for j, s in enumerate(allu):
            if all(K_u[i, j] == 0 for i in range(K_u.rows)):
                raise ValueError(f"speed {s} has no kinematic equation: it does "
                                 f"not appear in kd_eqs")
        self._kd_plain = (K_qd, rest)        # kept for implicit kinematics

        # velocity constraints A_all u_all = B (through q' if they use it)
        vc = [sm.sympify(e) for e in as_list(velocity_constraints, 'velocity_constraints')]
        qdot_map = dict(zip(qd_map, qdot_all))
        vc_plain = [self._plain(e, {**qdot_map, **base}, f"velocity_constraints[{i}]")
                    for i, e in enumerate(vc)]
        self.udep = {}
        self.velocity_constraint_matrices = None
        if u_dep:
            if len(vc) != len(u_dep):
                raise ValueError(f"{len(u_dep)} dependent speeds need as many velocity "
                                 f"constraints, got {len(vc)}")
            A, b = _linear_coefficients(vc_plain, self._us_all, 'velocity constraint',
                                        [f"{i} ({e})" for i, e in enumerate(vc)])
            ni = len(u_ind)
            sol = _solve_linear(A[:, ni:], -(A[:, :ni] * sm.Matrix(self.us) + b),
                                'the velocity constraints', u_dep)
            self.udep = dict(zip(self._us_all[ni:], sol))
        elif vc:
            A, b = _linear_coefficients(vc_plain, self._us_all, 'velocity constraint',
                                        [f"{i} ({e})" for i, e in enumerate(vc)])
            self.velocity_constraint_matrices = (A, -b)
        self.qdot = [e.xreplace(self.udep) for e in qdot_all]

        # configuration constraints f(q, t) = 0, stored as A q' = B
        cc = [sm.sympify(e) for e in as_list(configuration_constraints,
                                              'configuration_constraints')]
        if q_dep and len(cc) != len(q_dep):
            raise ValueError(f"{len(q_dep)} dependent coordinates need as many "
                             f"configuration constraints, got {len(cc)}")
        self.configuration_constraints = [self._plain(e, base, f"configuration_constraints[{i}]")
                                          for i, e in enumerate(cc)]
        self.n_q_dependent = len(q_dep)
        for what, exprs, known in (("configuration_constraints", self.configuration_constraints,
                                    "a coordinate"),
                                   ("velocity_constraints", vc_plain, "a coordinate or a speed")):
            for i, e in enumerate(exprs):
                stray = sorted(map(str, e.atoms(AppliedUndef)))
                if stray:
                    raise ValueError(f"{what}[{i}] contains {', '.join(stray)}, which is not "
                                     f"{known} of the model")
        self.holonomic_constraint_matrices = None
        if cc:
            f = sm.Matrix(self.configuration_constraints)
            self.holonomic_constraint_matrices = (f.jacobian(self.qs), -f.diff(t))

        # the one substitution that takes a velocity expression to plain symbols
        self._to_plain = {**dict(zip(qd_map, self.qdot)), **base,
                          **dict(zip(u_dep, self.udep.values()))}
        back = dict(zip(self.qs, allq))
        back.update(zip(self._us_all, allu))
        back.update(zip(self.uds, [s.diff(t) for s in u_ind]))
        self._to_time = back
        self._q_index = {s: k for k, s in enumerate(self.qs)}
        self._u_index = {s: j for j, s in enumerate(self.us)}
        self._dt_cache, self._du_cache = {}, {}

    # -- conversions --------------------------------------------------------
    def _plain(self, expr, mapping, what):
        """expr with the mapping applied; a derivative of q or u it does not map is an error."""
        expr = sm.sympify(expr)
        for d in expr.atoms(sm.Derivative):
            if d.expr in self._qset and d not in mapping:
                raise ValueError(f"{what} contains {d}, which is not expressible "
                                 f"in the speeds {list(self.u)}")
        return expr.xreplace(mapping)

    def to_plain(self, expr, what: str = "expression") -> sm.Expr:
        """A q(t), u(t), q'(t) expression as plain symbols of q and independent u."""
        return self._plain(expr, self._to_plain, what)

    def to_time(self, exprs):
        """Plain symbols back to SymPy's functions of time (u' as u.diff(t)).

        Takes a Matrix or one expression. Shared subexpressions (the same
        body acceleration appears in many rows of the forcing) are converted
        once: the walk is memoized across all entries.
        """
        memo = dict(self._to_time)
        if isinstance(exprs, sm.MatrixBase):
            return exprs.applyfunc(lambda e: memo_xreplace(e, memo))
        return memo_xreplace(exprs, memo)

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
            parts = [term.diff(qk) * self.qdot[k] for qk, k in self._q_index.items()
                     if qk in free]
            if t in free:
                parts.append(term.diff(t))
            out = self._dt_cache[term] = sm.Add(*parts)
        return out

    def jacobian_u(self, expr: sm.Expr) -> list:
        """[d expr / d u_j] over the independent speeds, term by term."""
        parts = [[] for _ in self.us]
        for term in sm.Add.make_args(expr):
            for j, d in self._du_term(term):
                parts[j].append(d)
        return [sm.Add(*p) for p in parts]

    def _du_term(self, term):
        out = self._du_cache.get(term)
        if out is None:
            free = term.free_symbols
            out = self._du_cache[term] = [(j, term.diff(uj)) for uj, j in
                                          self._u_index.items() if uj in free]
        return out


def memo_xreplace(expr, memo):
    """xreplace that remembers every node it rebuilt, across calls sharing memo."""
    hit = memo.get(expr)
    if hit is not None:
        return hit
    if not expr.args or expr.is_Atom:
        out = expr
    else:
        args = [memo_xreplace(a, memo) for a in expr.args]
        out = expr if all(a is b for a, b in zip(args, expr.args)) else expr.func(*args)
    memo[expr] = out
    return out
