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
(codegen.symbolic.forward_mode): every node is evaluated at the point once, with its
gradient, so nothing larger than the point's values is ever built. The
blocks are then assembled exactly as SymPy assembles them (same
permutation, same constraint elimination C_0, C_1, C_2, same
``linear_solver``, except that 'LU' pivots by a numeric probe, see
:func:`probed_lu_solve`), so the result has SymPy's meaning, shapes and order:

    (M, A, B):   M [q', u']ᵀ = A [q_ind, u_ind]ᵀ + B r
    (A, B):      [q', u']ᵀ = A [q_ind, u_ind]ᵀ + B r     (A_and_B=True)

As in SymPy, what the operating point leaves out stays symbolic (SymPy's
own test_linearize_rolling_disc_kane linearizes about a family of steady
turns that way); a key that is not a coordinate, a speed, a speed's
derivative, an input or a constant of the model is refused, naming it.

The dynamics block is Tᵀ (F - M u') with T = [I; A_rs] and A_rs the
adjugate solve of the dependent speeds (codegen.formulation.constraints), whatever the
constraint_solver: at an operating point where a pivot of SymPy's LU
vanishes (the upright bicycle), KanesMethod.linearize returns nan, this
does not.
"""
from __future__ import annotations

import sympy as sm
from sympy.core.function import AppliedUndef
from sympy.core.sorting import default_sort_key
from sympy.physics.mechanics.linearize import Linearizer
from sympy.physics.vector import dynamicsymbols

from ..symbolic.forward_mode import forward
from .handoff import Formed
from ..symbolic.expressions import dag_atoms, memo_xreplace, numeric_probe

t = dynamicsymbols._t

__all__ = ["GibbsAppellLinearizer", "linearizer_parts", "probed_lu_solve"]


def _at_zero(matrix, zero_symbols):
    """matrix with the symbols zero (DAG-memoized: these expressions share much)."""
    if not zero_symbols:
        return matrix
    memo = dict.fromkeys(zero_symbols, sm.S.Zero)
    return matrix.applyfunc(lambda e: memo_xreplace(e, memo))


def linearizer_parts(formed: Formed) -> dict:
    """SymPy's linearizer form of the equations on plain symbols: f_0 without its q'
    (its Jacobian there is the identity), f_1 .. f_a, the split of q, u into
    independent and dependent, and the inputs r."""
    kin, nh = formed.kin, formed.constraints.nh
    G = _at_zero(sm.Matrix(kin.qdot), kin.uas)                 # q' = G(q, u, t)
    # the dynamics as KanesMethod's fr + fr* = T^T (F - M u') = 0 over all speeds,
    # T = [I; A_rs] with A_rs the placeholders of the compiled path: their
    # definitions go along (the adjugate solve: no pivot that vanishes at a
    # special operating point, as the upright bicycle's does for LU)
    frstar, fr = (_at_zero(formed.resolved(m), kin.uas) for m in (formed.frstar, formed.fr))
    items, Ars, _ = formed.intermediates()
    o = len(kin.us)
    T = sm.eye(kin.p).col_join(Ars)
    M, F = formed.ga.M[:o, :o], _at_zero(formed.ga.F[:o, :], kin.uas)
    dependent = set(kin.us[kin.p:])
    definitions = [(i.symbol, i.expr) for i in items if i.symbol not in dependent]
    parts = dict(
        f_0=-_at_zero(G, kin.us), f_1=-G,
        f_2=-T.T * (M * sm.Matrix(kin.uds[:o])), f_3=T.T * F,
        f_4=sm.zeros(kin.p, 1), definitions=definitions,
        # the same blocks in KanesMethod's form, for code that inspects them
        kane_f_2=lambda: _at_zero(frstar, kin.us),
        kane_f_3=lambda: _at_zero(frstar, kin.uds) + fr,
        f_c=formed.constraints.f_h,
        f_v=nh.f_nh + nh.k_nh * sm.Matrix(kin.us) if nh else sm.Matrix(),
        f_a=nh.f_dnh + nh.k_dnh * sm.Matrix(kin.uds) if nh else sm.Matrix())
    n_ind = len(kin.q) - kin.n_q_dependent
    parts.update(q_i=kin.q[:n_ind, :], q_d=kin.q[n_ind:, :], u_i=kin.u[:kin.p, :],
                 u_d=kin.u[kin.p:, :])
    # the inputs: what stays a function of time (or its derivative) on plain symbols
    found = dag_atoms(list(parts["f_3"]) + [e for _, e in definitions],
                      (AppliedUndef, sm.Derivative))
    r = sorted((a for a in found if a.free_symbols == {t}), key=default_sort_key)
    for i in r:
        if i.diff(t) in r:
            raise ValueError('Cannot have derivatives of specified quantities when '
                             'linearizing forcing terms.')
    parts["r"] = r
    return parts


def probed_lu_solve(A: sm.Matrix, B: sm.Matrix) -> sm.Matrix:
    """A⁻¹ B by Gaussian elimination with partial pivoting, the pivots chosen by
    the entries' sizes at a generic numeric probe of their symbols. SymPy's LU
    takes the first entry it cannot prove zero; at an operating point an
    entry can be zero without simplifying to it (the bicycle's mass matrix
    upright, its parameters symbolic), and the result is then nan."""
    A, B = A.copy(), B.copy()
    n = A.rows
    probe = numeric_probe(*A, point=0)

    def size(e):
        return abs(complex(e.xreplace(probe).evalf())) if e != 0 else 0.0
    scale = max((size(e) for e in A), default=0.0)
    for k in range(n):
        sizes = [size(A[i, k]) for i in range(k, n)]
        best = max(range(len(sizes)), key=sizes.__getitem__)
        if sizes[best] <= 1e-12 * scale:
            raise ValueError("the linearization's matrix is singular at the operating point")
        if best:
            A.row_swap(k, k + best)
            B.row_swap(k, k + best)
        for i in range(k + 1, n):
            if A[i, k] != 0:
                f = A[i, k] / A[k, k]
                A[i, :] = A[i, :] - f * A[k, :]
                B[i, :] = B[i, :] - f * B[k, :]
    X = sm.zeros(n, B.cols)
    for k in reversed(range(n)):
        row = B[k, :] - sum((A[k, j] * X[j, :] for j in range(k + 1, n) if A[k, j] != 0),
                            sm.zeros(1, B.cols))
        X[k, :] = row / A[k, k]
    return X


def cofactor_cramer_solve(A: sm.Matrix, B: sm.Matrix) -> sm.Matrix:
    """A⁻¹ B by Cramer's rule, its determinants expanded along the replaced column:
    x_j = sum_i B_i C_ij / det A with A's cofactors C_ij (Laplace, as SymPy's CRAMER), each
    formed once for every column of B instead of once per determinant (SymPy forms
    rows × columns determinants of the whole matrix)."""
    from sympy.matrices.determinant import _det_laplace
    n = A.rows
    if n == 0:
        return sm.zeros(0, B.cols)
    rows = [i for i in range(n) if any(B[i, k] != 0 for k in range(B.cols)) or A[i, 0] != 0]
    cof = {(i, j): (-1) ** (i + j) * _det_laplace(A.minor_submatrix(i, j)) if n > 1 else sm.S.One
           for i in rows for j in range(n)}
    det = sm.Add(*[A[i, 0] * cof[i, 0] for i in range(n) if A[i, 0] != 0])
    if det == 0:
        raise ValueError("the linearization's matrix is singular at the operating point")
    return sm.Matrix(n, B.cols, lambda j, k: sm.Add(*[B[i, k] * cof[i, j] for i in rows
                                                      if B[i, k] != 0]) / det)


class _At:
    """Jacobians at one point over all the variables [q, u, u', r], every distinct
    subexpression of every block evaluated once (the blocks share most of theirs).
    definitions [(symbol, expr)], in order: symbols the blocks use, each with the
    value and gradient of its expression (the dependent speeds' A_rs)."""

    def __init__(self, q, u, ud, r, point, definitions=()):
        variables = list(q) + list(u) + list(ud) + list(r)
        self.slices = {}
        k = 0
        for name, group in (("q", q), ("u", u), ("ud", ud), ("r", r)):
            self.slices[name] = slice(k, k + len(group))
            k += len(group)
        self.seeds = {v: {j: sm.S.One} for j, v in enumerate(variables)}
        self.point, self.memo = dict(point), {}
        for symbol, expr in definitions:
            (value, gradient), = forward([expr], self.seeds, self.point, self.memo)
            self.point[symbol], self.seeds[symbol] = value, gradient

    def __call__(self, f, over: str) -> sm.Matrix:
        cols = self.slices[over]
        width = cols.stop - cols.start
        if not len(f) or not width:
            return sm.zeros(len(f), width)
        out = forward(list(f), self.seeds, self.point, self.memo)
        return sm.Matrix([[g.get(j, sm.S.Zero) for j in range(cols.start, cols.stop)]
                          for _, g in out])


#: the base class's blocks and the parts they come from (kane_f_*: KanesMethod's form)
_FORMS = [("f_0", "f_0"), ("f_1", "f_1"), ("f_2", "kane_f_2"), ("f_3", "kane_f_3"),
          ("f_4", "f_4"), ("f_c", "f_c"), ("f_v", "f_v"), ("f_a", "f_a")]
_ROWS = {"kane_f_2": "f_2", "kane_f_3": "f_3"}      # formed late; the same rows as these


def _block(name, key):
    """The base class's f_* as a property: the part in SymPy's form (functions of time),
    formed on first read; what the base class's __init__ assigns (shapes) is dropped,
    what is assigned later is kept."""
    def get(self):
        if name not in self._f_time:
            part = self._parts[key]
            value = self._kin.to_time(part() if callable(part) else part)
            if name == "f_0":
                value = value + self._kin.q.diff(t)      # f_0 = f_k(u = 0) + q'
            self._f_time[name] = value
        return self._f_time[name]
    def put(self, value):               # the base __init__'s shapes are dropped
        if getattr(self, "_blocks_ready", False):
            self._f_time[name] = value
    return property(get, put)


class GibbsAppellLinearizer(Linearizer):
    """SymPy's Linearizer for a GibbsAppellMethod, its blocks taken at the operating point.

    Built by ``GibbsAppellMethod.to_linearizer`` from the formed equations
    (codegen.formulation.handoff.Formed); ``linearize(op_point, A_and_B, simplify)``
    returns what SymPy's returns for the same equations. The f_* of the base
    class are the equations in SymPy's form (functions of time), for code
    that inspects them; the Jacobians are formed on the formulation's plain
    symbols."""

    def __init__(self, formed: Formed, linear_solver='LU'):
        parts = linearizer_parts(formed)
        kin = formed.kin
        self._kin, self._parts, self._f_time = kin, parts, {}
        # the base class gets the blocks' shapes only: each f_* is formed when read
        shapes = [sm.zeros(len(parts[_ROWS.get(key, key)]), 1) for _, key in _FORMS]
        super().__init__(*shapes, kin.q, kin.u, parts["q_i"], parts["q_d"], parts["u_i"],
                         parts["u_d"], parts["r"], linear_solver=linear_solver)
        self._blocks_ready = True
        if isinstance(linear_solver, str) and linear_solver == 'LU':
            self.linear_solver = probed_lu_solve
        elif isinstance(linear_solver, str) and linear_solver == 'CRAMER':
            self.linear_solver = cofactor_cramer_solve

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
        at = _At(q, u, ud, r, point, parts["definitions"])
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


for _name, _key in _FORMS:
    setattr(GibbsAppellLinearizer, _name, _block(_name, _key))
