"""Linearization of the equations of motion: SymPy's Linearizer, computed at the operating point.

SymPy's ``Linearizer`` (Luke, Peterson, ...; sympy.physics.mechanics.linearize)
writes the equations as

    f_0(q, q') + f_1(q, u) = 0                       kinematics
    f_2(q, u, u') + f_3(q, q', u, r) + f_4 = 0        dynamics
    f_c(q) = 0, f_v(q, u) = 0, f_a(q, u, u') = 0      constraints

differentiates every block symbolically, then substitutes the operating
point. On large models the symbolic Jacobians are the cost (the Whipple
bicycle: minutes). Here each block's Jacobian is taken at the operating
point directly, by forward-mode differentiation over the expression DAG
(:func:`jacobian_at`): every node is evaluated at the point once, with its
gradient, so nothing larger than the point's values is ever built. The
blocks are then assembled exactly as SymPy assembles them (same
permutation, same constraint elimination C_0, C_1, C_2, same
``linear_solver``), so the result has SymPy's meaning, shapes and order:

    (M, A, B):   M [q', u']ᵀ = A [q_ind, u_ind]ᵀ + B r
    (A, B):      [q', u']ᵀ = A [q_ind, u_ind]ᵀ + B r     (A_and_B=True)

As in SymPy, states the operating point leaves out stay symbolic.
"""
from __future__ import annotations

import sympy as sm
from sympy.core.function import AppliedUndef, ArgumentIndexError
from sympy.physics.mechanics.linearize import Linearizer
from sympy.physics.vector import dynamicsymbols

t = dynamicsymbols._t

__all__ = ["jacobian_at", "GibbsAppellLinearizer"]


def _add(grads, g, factor):
    for i, d in g.items():
        grads[i] = grads.get(i, 0) + factor * d


def jacobian_at(exprs, variables, point: dict, memo: dict = None):
    """(values, J): exprs at point and J[i][j] = d exprs[i] / d variables[j] at point.

    Forward mode over the DAG: each distinct subexpression is visited once,
    its value and its (sparse) gradient formed from its arguments'. point maps
    symbols to values (numbers or expressions); symbols it leaves out stay.
    Variables may be symbols, functions of time or their derivatives. memo
    carries the visited nodes across calls with the same variables and point."""
    index = {v: j for j, v in enumerate(variables)}
    memo = {} if memo is None else memo
    for root in exprs:
        stack = [(sm.sympify(root), False)]
        while stack:
            e, done = stack.pop()
            if e in memo:
                continue
            if e in index or e.is_Atom or isinstance(e, (AppliedUndef, sm.Derivative)):
                value = point.get(e, e)
                memo[e] = (value, {index[e]: sm.S.One} if e in index else {})
                continue
            if not done:
                stack.append((e, True))
                stack.extend((a, False) for a in e.args if a not in memo)
                continue
            memo[e] = _node(e, [memo[a] for a in e.args], index, point)
    values = [memo[sm.sympify(e)][0] for e in exprs]
    J = [[memo[sm.sympify(e)][1].get(j, sm.S.Zero) for j in range(len(variables))]
         for e in exprs]
    return values, J


def _node(e, args, index, point):
    """Value and gradient of e from its arguments' (values, gradients)."""
    vals = [v for v, _ in args]
    grads = {}
    if e.is_Add:
        value = sm.Add(*vals)
        for _, g in args:
            _add(grads, g, 1)
    elif e.is_Mul:
        value = sm.Mul(*vals)
        k = len(vals)
        prefix, suffix = [sm.S.One] * (k + 1), [sm.S.One] * (k + 1)
        for i in range(k):
            prefix[i + 1] = prefix[i] * vals[i]
            suffix[k - 1 - i] = suffix[k - i] * vals[k - 1 - i]
        for i, (_, g) in enumerate(args):
            if g:
                _add(grads, g, prefix[i] * suffix[i + 1])
    elif e.is_Pow:
        (b, gb), (x, gx) = args
        value = b ** x
        if gb:
            _add(grads, gb, x * b ** (x - 1))
        if gx:
            _add(grads, gx, value * sm.log(b))
    elif isinstance(e, sm.Function):
        value = e.func(*vals)
        for k, (_, g) in enumerate(args):
            if not g:
                continue
            try:
                d = value.fdiff(k + 1) if isinstance(value, sm.Function) else \
                    e.fdiff(k + 1).xreplace(dict(zip(e.args, vals)))
            except ArgumentIndexError:
                d = e.fdiff(k + 1).xreplace(dict(zip(e.args, vals)))
            _add(grads, g, d)
    else:                     # Piecewise and the like: differentiate symbolically, then evaluate
        value = e.xreplace(point)
        for v, j in index.items():
            if e.has(v):
                d = e.diff(v).xreplace(point)
                if d != 0:
                    grads[j] = d
    return value, {j: d for j, d in grads.items() if d != 0}


class _At:
    """Jacobians at one point over all the variables [q, u, u', r], every distinct
    subexpression of every block evaluated once (the blocks share most of theirs)."""

    def __init__(self, q, u, ud, r, point):
        self.variables = list(q) + list(u) + list(ud) + list(r)
        self.slices = {}
        k = 0
        for name, group in (("q", q), ("u", u), ("ud", ud), ("r", r)):
            self.slices[name] = slice(k, k + len(group))
            k += len(group)
        self.point, self.memo = point, {}

    def __call__(self, f, over: str) -> sm.Matrix:
        cols = self.slices[over]
        width = cols.stop - cols.start
        if not len(f) or not width:
            return sm.zeros(len(f), width)
        _, J = jacobian_at(list(f), self.variables, self.point, self.memo)
        return sm.Matrix(J)[:, cols]


class GibbsAppellLinearizer(Linearizer):
    """SymPy's Linearizer for a GibbsAppellMethod, its blocks taken at the operating point.

    Built by ``GibbsAppellMethod.to_linearizer``; ``linearize(op_point,
    A_and_B, simplify)`` returns what SymPy's returns for the same equations.
    The f_* of the base class are the equations in SymPy's form (functions
    of time), for code that inspects them; the Jacobians are formed on the
    formulation's plain symbols."""

    def __init__(self, method, linear_solver='LU'):
        parts = method._linearizer_parts()
        kin = method._kin
        self._method, self._kin, self._parts = method, kin, parts
        to_time = kin.to_time
        f = [to_time(parts[k]) for k in ("f_0", "f_1", "f_2", "f_3", "f_4", "f_c", "f_v", "f_a")]
        f[0] = f[0] + kin.q.diff(t)             # f_0 = f_k(u = 0) + q'
        super().__init__(*f, kin.q, kin.u, parts["q_i"], parts["q_d"], parts["u_i"], parts["u_d"],
                         parts["r"], linear_solver=linear_solver)

    def _plain_point(self, op_point):
        """The operating point on plain symbols; a key that is not a coordinate, a speed,
        a speed's derivative or an input of the model is an error that names it."""
        kin, parts = self._kin, self._parts
        if op_point is None:
            items = {}
        elif isinstance(op_point, dict):
            items = dict(op_point)
        else:
            items = {}
            for op in op_point:
                items.update(op)
        # values keep q' as it stands (SymPy's results may hold it): a placeholder each
        self._qd_marks = {s.diff(t): sm.Dummy(f"{s.func}_d") for s in kin.q}
        known = {**dict(zip(kin.q, kin.qs)), **dict(zip(kin.u, kin.us)),
                 **dict(zip([s.diff(t) for s in kin.u], kin.uds)),
                 **{s: s for s in parts["r"]}}
        qdots = {s.diff(t) for s in kin.q}
        point = {}
        for key, value in items.items():
            if key in qdots:
                continue             # q' follows from the kinematics
            if key not in known:
                if isinstance(key, sm.Symbol):
                    point[key] = sm.sympify(value)     # a constant's value, as SymPy takes it
                    continue
                raise ValueError(f"the operating point names {key}, which is not a coordinate, "
                                 f"a speed, a speed's derivative or an input of the model")
            value = sm.sympify(value).xreplace(self._qd_marks)
            point[known[key]] = kin.to_plain(value, "the operating point")
        return point

    def _solve(self, M, X, n):
        """M⁻¹ X for SymPy's M = [[I_n, 0], [0, M_u]]: the identity rows pass through and
        linear_solver works on M_u alone (the same solution, a smaller system)."""
        top, bottom = X[:n, :], X[n:, :]
        if bottom.rows == 0:
            return top
        return top.col_join(self.linear_solver(M[n:, n:], bottom))

    def linearize(self, op_point=None, A_and_B=False, simplify=False):
        """As ``sympy.physics.mechanics.linearize.Linearizer.linearize``."""
        parts, kin = self._parts, self._kin
        point = self._plain_point(op_point)
        q, u, ud, r = kin.qs, kin.us, kin.uds, list(parts["r"])
        n, o, m = len(q), len(u), len(parts["f_v"])
        l, s = len(parts["f_c"]), len(r)
        if not self._setup_done:
            self._form_permutation_matrices()
            self._setup_done = True
        at = _At(q, u, ud, r, point)
        kin_f = parts["f_0"] + parts["f_1"]
        dyn = parts["f_2"] + parts["f_3"]
        M_qq = sm.eye(n)
        A_qq = -at(kin_f, "q")
        A_qu = -at(parts["f_1"], "u")
        if m:
            M_uuc = at(parts["f_a"], "ud")
            A_uqc = -at(parts["f_a"], "q")
            A_uuc = -at(parts["f_a"], "u")
        M_uud = at(parts["f_2"], "ud")
        A_uqd = -at(dyn, "q")
        A_uud = -at(dyn, "u")
        B_u = -at(parts["f_3"], "r") if s else None
        # the constraint elimination, at the point (SymPy's C_0, C_1, C_2)
        solve = self.linear_solver
        if l:
            fcq = at(parts["f_c"], "q")
            C_0 = (sm.eye(n) - self._Pqd * solve(fcq * self._Pqd, fcq)) * self._Pqi
        else:
            C_0 = sm.eye(n)
        if m:
            fvu = at(parts["f_v"], "u")
            fvq = at(parts["f_v"], "q")
            temp = fvu * self._Pud
            C_1 = -self._Pud * solve(temp, fvq)
            C_2 = (sm.eye(o) - self._Pud * solve(temp, fvu)) * self._Pui
        else:
            C_1, C_2 = sm.zeros(o, n), sm.eye(o)
        rows_c = [A_uqc + A_uuc * C_1] if m else []
        col1 = sm.Matrix.vstack(*[(A_qq + A_qu * C_1) * C_0]
                                + [X * C_0 for X in rows_c]
                                + [(A_uqd + A_uud * C_1) * C_0])
        col2 = sm.Matrix.vstack(*[A_qu * C_2] + ([A_uuc * C_2] if m else []) + [A_uud * C_2])
        Amat = col1.row_join(col2)
        Mmat = sm.Matrix.vstack(
            M_qq.row_join(sm.zeros(n, o)),
            *([sm.zeros(m, n).row_join(M_uuc)] if m else []),
            sm.zeros(M_uud.rows, n).row_join(M_uud))
        Bmat = sm.zeros(n + m, s).col_join(B_u) if s else sm.Matrix()
        marks = {d: qd for qd, d in self._qd_marks.items()}
        back = lambda X: kin.to_time(X).xreplace(marks) if X else X
        M_eq, A_eq, B_eq = back(Mmat), back(Amat), back(Bmat)
        if A_and_B:
            A_cont = self.perm_mat.T * self._solve(M_eq, A_eq, n)
            B_cont = self.perm_mat.T * self._solve(M_eq, B_eq, n) if B_eq else B_eq
            if simplify:
                A_cont.simplify()
                B_cont.simplify()
            return A_cont, B_cont
        if simplify:
            M_eq.simplify()
            A_eq.simplify()
            B_eq.simplify()
        return M_eq, A_eq, B_eq
