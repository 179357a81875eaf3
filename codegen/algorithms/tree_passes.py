"""The passes over a tree of bodies that the tree algorithms share (aba, rnea, crba and the
Jacobian's column solve): the tree's inputs as a program, the transports between bodies, the
articulated-body inward pass and the outward pass carrying accelerations.

When every body's motion is its parent's, carried rigidly, plus speeds of
its own (a chain or tree of joints), the accelerations follow in O(n)
without forming M (Featherstone's articulated-body algorithm, here in the
Gibbs–Appell form). With each body's spatial acceleration split as
A_b = Γ_b u' (the part linear in u') plus the rest, and

    A_b = X_b A_parent + s_b u'_j          (j: the speeds body b owns)
    S   = sum_b [ ½ A_bᵀ W_b A_b + A_bᵀ h_b ] - Qᵀ u'   (+ terms free of u')

(W_b the body's spatial inertia, h_b its inertial bias wrench: W times the
u'-free acceleration, plus ω × Iω), the minimum of S is found from the tips
inward, eliminating each body's speeds:

    I_b = W_b + sum_c X_cᵀ Ĩ_c X_c,        p_b = h_b + sum_c X_cᵀ p̃_c
    U = I_b s,  D = sᵀ U,  ρ = Q_j - sᵀ p_b
    Ĩ_b = I_b - U D⁻¹ Uᵀ,                  p̃_b = p_b + U D⁻¹ ρ

then outward: u'_j = D⁻¹ (ρ - Uᵀ X_b A_parent), A_b = X_b A_parent + s u'_j
(D is 1 x 1 for a one-speed joint, else a small L D Lᵀ: ldlt.ldl_factor).
Where every child joint has its velocity product (codegen.formulation.tree), h_b = W_b a0_b
+ b_b with each body's u'-free acceleration a0 carried outward first, as
Pinocchio's first pass carries it (carried_acceleration), not composed from
the formulation's expressions body by body.

Spatial vectors are (angular; linear at a reference point) in each body's
components (a rigid body's frame, the Newtonian frame for a particle),
restricted to the rows a body's partial velocities can reach
(two rows for a planar particle, three for a planar rigid body), so a planar
point-mass chain costs 2 × 2 matrices per link. A particle's reference point
is itself; a rigid body's is its joint point (``tree._at_joint``), where a
spherical joint or a hinge about a body axis moves only angular rows and the
transport from the parent is a rotation and a constant offset (``_Transport``);
such joints take the Schur complement of I_aa (``_schur``) instead of
U = I s and D = sᵀ U. Structural zeros and ones of X and s fold away as the
expressions are built.

The tree itself, and each body's s, W, h, R and r, come from codegen.formulation.tree.
"""
from __future__ import annotations

import weakref

import sympy as sm

from ..programs.program import Program, make_program
from ..progress import checkpoint
from ..symbolic.spatial import skew, spatial_transform
from .ldlt import ldl_factor, ldl_solve, lu_factor, lu_solve

__all__ = ["tree_inputs", "inward", "outward", "transported", "planar", "carried_acceleration",
           "carried_biases", "skew_vector"]


def planar(nd) -> bool:
    """A one-speed node on at most three rows (a planar link): X applied as a matrix of
    a few entries, the joint's d formed from s's products (_general)."""
    return len(nd.speeds) == 1 and len(nd.rows) <= 3


def skew_vector(b) -> list | None:
    """v with b = v× where the 3 x 3 b is skew-symmetric by structure, else None."""
    if any(b[i, i] != 0 for i in range(3)) or any(
            sm.expand(b[i, c] + b[c, i]) != 0 for i in range(3) for c in range(i + 1, 3)):
        return None
    return [b[2, 1], b[0, 2], b[1, 0]]


def _folds_unnamed(expr) -> bool:
    """expr is -x or c + d x (c, d numbers, x a symbol): in its readers, it folds into
    their coefficients and sums (0.35 (0.308 + t) - 0.35 t'); c x alone is not (docs/design.md)."""
    if expr.is_Mul:
        return expr.args == (-1, expr.args[1]) and expr.args[1].is_Symbol
    if not expr.is_Add or len(expr.args) != 2 or not expr.args[0].is_number:
        return False
    t = expr.args[1]
    return t.is_Symbol or (t.is_Mul and len(t.args) == 2 and t.args[0].is_number
                           and t.args[1].is_Symbol)


class _Definitions:
    """The program's temporaries as the recursion defines them (cg_<label> each)."""

    def __init__(self, temps=(), names=None):
        """temps, names: those of the program the recursion's temporaries follow."""
        self.temps, self.names = list(temps), dict(names or {})
        self.used = set(self.names.values())

    def __call__(self, label, expr, fold=True):
        """A name for expr; expr itself if a number, a symbol or (fold) _folds_unnamed."""
        expr = sm.sympify(expr)
        if expr.is_number or expr.is_Symbol or (fold and _folds_unnamed(expr)):
            return expr
        name = f"cg_{label}"
        while name in self.used:        # a kinematic intermediate's name (codegen.formulation.relative)
            name += "_"
        s = sm.Symbol(name, real=True)
        self.names[s] = name
        self.used.add(name)
        self.temps.append((s, expr))
        return s


def tree_inputs(eom, split=False, carry=False, grouped=False):
    """(program, define, q', S, W, h, Q, T): one CSE over q' and the tree's inputs (s, W, h,
    R, r, Q), whose temporaries start define's (_Definitions); each non-numeric entry then a
    named temporary; T[k] the transport into node k (None for a root). split (every node's h
    split as W a0 + b, codegen.formulation.tree): h is the pair (a0, b) of lists. carry (with
    split; where every child has its velocity product c): h is the pair (a0x for a root, c
    for a child: _carried_bias; bx) and W is Wx (codegen.equations.tree.TreeNode); grouped
    (with carry): Wg and bg where the tree has them (codegen.formulation.grouping)."""
    tree = eom.tree
    split = split and all(nd.a0 is not None for nd in tree.nodes)
    carry = carry and split
    regrouped = [grouped and carry and nd.Wg is not None for nd in tree.nodes]
    Wx = [nd.Wg if g else nd.Wx for nd, g in zip(tree.nodes, regrouped)]
    bx = [nd.bg if g else nd.bx for nd, g in zip(tree.nodes, regrouped)]
    base, where = [], []
    for k, nd in enumerate(tree.nodes):
        bias = (("a", nd.a0), ("b", nd.b)) if split else (("h", nd.h),)
        if carry:
            bias = (("a", _carried_bias(nd)), ("b", bx[k]))
        for name, values in (("s", [e for row in nd.s for e in row]), *bias,
                             ("W", [e for row in (Wx[k] if carry else nd.W) for e in row]),
                             ("R", [e for row in nd.R or [] for e in row]), ("r", nd.r or [])):
            for i, e in enumerate(values):
                if not sm.sympify(e).is_number:
                    base.append(e)
                    where.append((k, name, i))
    qpos = [j for j, e in enumerate(tree.Q) if not sm.sympify(e).is_number]
    prog = _inputs_program(eom, (split, carry, any(regrouped)), lambda: [
        ("qd", list(eom.qdot)), ("base", base), ("Q", [tree.Q[j] for j in qpos])])
    out = dict(prog.outputs)
    define = _Definitions(prog.temporaries, prog.names)
    vals = {}
    for (k, name, i), e in zip(where, out["base"]):
        # a0 and b enter one sum each (codegen.algorithms.rnea): inline; s is read in
        # products (U = I s, s s): named, not folded
        vals[k, name, i] = e if name in "ab" else define(f"{name}{k}_{i}", e, name != "s")
    Q = [sm.sympify(e) for e in tree.Q]
    for j, e in zip(qpos, out["Q"]):
        Q[j] = define(f"Q{j}", e)

    def get(k, name, flat):
        return [vals.get((k, name, i), sm.sympify(e)) for i, e in enumerate(flat)]
    nodes = tree.nodes
    S = [sm.Matrix(len(nd.rows), len(nd.speeds), get(k, "s", [e for row in nd.s for e in row]))
         for k, nd in enumerate(nodes)]
    if carry:
        h = [(get(k, "a", _carried_bias(nd)), get(k, "b", bx[k])) for k, nd in enumerate(nodes)]
        W = [sm.Matrix(len(nd.rows), 6, get(k, "W", [e for row in Wx[k] for e in row]))
             for k, nd in enumerate(nodes)]
    else:
        h = [(get(k, "a", nd.a0), get(k, "b", nd.b)) if split else get(k, "h", nd.h)
             for k, nd in enumerate(nodes)]
        W = [sm.Matrix(len(nd.rows), len(nd.rows), get(k, "W", [e for row in nd.W for e in row]))
             for k, nd in enumerate(nodes)]
    T = [None if nd.R is None else
         _Transport(sm.Matrix(3, 3, get(k, "R", [e for row in nd.R for e in row])),
                    get(k, "r", nd.r), nd.rows, nodes[nd.parent].rows, define, k)
         for k, nd in enumerate(nodes)]
    return prog, define, out["qd"], S, W, h, Q, T


def _carried_bias(nd) -> list:
    """tree_inputs' carried a: a root's a0x, a child's velocity product c; zeros for a child
    without one, which only the analytic derivatives ask for (codegen.algorithms.rnea_derivatives:
    they read the roots' a0x alone, each body's acceleration formed in its root's frame)."""
    return nd.a0x if nd.parent < 0 else nd.c if nd.c is not None else [0] * 6


#: (id of an eom, split, carry, grouped) -> (a weak reference to the eom, its inputs' program):
#: the composite, recursive, inverse and Jacobian programs each start from the same CSE
#: (at n = 200 links, 0.4 s each); an entry goes with its eom
_INPUTS = {}


def _inputs_program(eom, how, outputs) -> Program:
    """make_program(eom, outputs()) once per eom and how (tree_inputs' split, carry, grouped);
    each caller gets its own list of inputs (the temporaries and names are copied by
    _Definitions)."""
    key = (id(eom), *how)
    hit = _INPUTS.get(key)
    if hit is None or hit[0]() is not eom:
        hit = _INPUTS[key] = (weakref.ref(eom, lambda _: _INPUTS.pop(key, None)),
                              make_program(eom, outputs()))
    prog = hit[1]
    return Program(inputs=list(prog.inputs), names=prog.names,
                   temporaries=prog.temporaries, outputs=prog.outputs)


class _Transport:
    """X = [[R, 0], [-R r×, R]] = diag(R, R) [[1, 0], [-r×, 1]] from a parent's rows to a
    child's, applied as its two factors: a rotation of each 3-block, then the shift by the
    constant offset r (fewer products than X itself, whose -R r× block is dense); for a
    planar link, as the matrix X of its few entries (matrix())."""

    def __init__(self, R, r, rows, parent_rows, define, k):
        self.R, self.r, self.rx, self.rows, self.prows = R, r, skew(r), rows, parent_rows
        self.define, self.k, self._X = define, k, None

    def matrix(self) -> sm.Matrix:
        """X on (rows, parent rows), each non-numeric entry a named temporary."""
        if self._X is None:
            X = spatial_transform(self.R, self.r).extract(self.rows, self.prows)
            self._X = sm.Matrix(X.rows, X.cols, [self.define(f"X{self.k}_{i}", e)
                                                 for i, e in enumerate(X)])
        return self._X

    def _named(self, label, M, upper=False):
        d, k = self.define, self.k
        vals = {(i, c): d(f"{label}{k}_{i}_{c}", M[i, c])
                for i in range(M.rows) for c in range(M.cols) if not upper or c >= i}
        return sm.Matrix(M.rows, M.cols, lambda i, c: vals[min(i, c), max(i, c)]
                         if upper else vals[i, c])

    def _embed(self, M):
        full = sm.zeros(6, M.cols if M.cols == 1 else 6)
        for a, i in enumerate(self.rows):
            for b in range(M.cols):
                full[i, self.rows[b] if M.cols > 1 else 0] = M[a, b]
        return full

    def congruence(self, It):
        """Xᵀ Ĩ X on the parent's rows (Ĩ symmetric, on the child's). A rigid body's
        blocks keep their form under the rotation, without its products: Rᵀ (v×) R =
        (Rᵀ v)× and Rᵀ (m 1) R = m 1 (R a rotation), as in a composite inertia."""
        R, rx, full = self.R, self.rx, self._embed(It)
        a, b, c = full[:3, :3], full[:3, 3:], full[3:, 3:]
        A = self._named("Tra", R.T * self._named("Tma", a * R), upper=True)
        v = skew_vector(b)
        B = skew(self._named("Trb", R.T * sm.Matrix(v))) if v is not None else \
            self._named("Trb", R.T * self._named("Tmb", b * R))
        C = c if c.is_diagonal() and len(set(c.diagonal())) == 1 else \
            self._named("Trc", R.T * self._named("Tmc", c * R), upper=True)
        # unnamed: with r's few entries, its terms fold into top's (fewer operations)
        E = B.T - C * rx
        top = A - B * rx + rx * E
        right = B + rx * C
        out = sm.Matrix(sm.BlockMatrix([[top, right], [right.T, C]]))
        return out.extract(self.prows, self.prows)

    def transposed(self, v, label="Tp"):
        """Xᵀ v on the parent's rows (v on the child's); label: of its temporaries."""
        full = self._embed(sm.Matrix(v))
        y = self._named(label, sm.Matrix.vstack(self.R.T * full[:3, :], self.R.T * full[3:, :]))
        return (sm.Matrix.vstack(y[:3, :] + self.rx * y[3:, :], y[3:, :])).extract(self.prows, [0])

    def __call__(self, a):
        """X a on the child's rows (a on the parent's)."""
        full = sm.zeros(6, 1)
        for i, e in zip(self.prows, a):
            full[i] = e
        shifted = self._named("Ts", full[3:, :] - self.rx * full[:3, :])
        out = sm.Matrix.vstack(self.R * full[:3, :], self.R * shifted)
        return out.extract(self.rows, [0])


def inward(nodes, S, W, h, Q, T, define):
    """Tips to root: each body's articulated inertia Ĩ and bias p̃ passed to its parent.
    Returns (step, D) or None if a joint has no inertia by structure: step[k](XA), the
    outward step of body k (its u' and A from X A_parent), D the pivots (each > 0 for a
    positive definite M)."""
    n = len(nodes)
    Iacc, pacc = list(W), [sm.Matrix(h[k]) for k in range(n)]
    step, D = [None] * n, [None] * len(Q)
    for k in reversed(range(n)):
        checkpoint()
        nd, m = nodes[k], len(nodes[k].rows)
        upper = {(i, c): define(f"I{k}_{i}_{c}", Iacc[k][i, c]) for i in range(m) for c in range(i, m)}
        Ik = sm.Matrix(m, m, lambda i, c: upper[min(i, c), max(i, c)])
        pk = sm.Matrix([define(f"p{k}_{i}", pacc[k][i]) for i in range(m)])
        one = planar(nd)
        joint = None if one else _schur(k, nd, Ik, pk, S[k], Q, define)
        if joint is None:
            joint = _general(k, nd, Ik, pk, S[k], Q, one, define)
        if joint is None:
            return None
        It, pt, step[k], pivots = joint
        for j, d in zip(nd.speeds, pivots):
            D[j] = d
        if nd.parent >= 0:
            if one:
                X = T[k].matrix()
                identity = X.is_Identity      # a chain of particles: nothing to multiply
                Iacc[nd.parent] += It if identity else X.T * It * X
                pacc[nd.parent] += pt if identity else X.T * pt
            else:
                Iacc[nd.parent] += T[k].congruence(It)
                pacc[nd.parent] += T[k].transposed(
                    [define(f"pt{k}_{i}", v) for i, v in enumerate(pt)])
    return step, D


def _general(k, nd, Ik, pk, s, Q, one, define):
    """(Ĩ, p̃, step, pivots) of a joint with motion subspace s: U = I s, D = sᵀ U (L D Lᵀ),
    Ĩ = I - U D⁻¹ Uᵀ, p̃ = p + U D⁻¹ ρ (ρ = Q - sᵀ p); u' = D⁻¹ (ρ - Uᵀ X A_parent).
    None if D has a zero pivot by structure."""
    m = len(nd.rows)
    U = sm.Matrix(m, len(nd.speeds), [define(f"U{k}_{i}_{a}", v) for (i, a), v in
                                      zip([(i, a) for i in range(m) for a in range(len(nd.speeds))],
                                          Ik * s)])
    if one:
        # d = s^T I s from I and the products s_i s_c (functions of q alone,
        # computed early), not from U: the recursion waits on d, not on U
        sv = list(s)
        d = sm.Add(*[sm.Mul(define(f"ss{k}_{i}_{c}", (1 if i == c else 2) * sv[i] * sv[c]),
                            Ik[i, c], evaluate=False)
                     for i in range(m) for c in range(i, m) if sv[i] != 0 and sv[c] != 0],
                   evaluate=False)
        Dk = sm.Matrix([[d]])
    else:
        Dk = s.T * U
    factors = ldl_factor({(i, c): Dk[i, c] for i in range(Dk.rows) for c in range(i + 1)},
                         Dk.rows, define, f"{k}_")
    if factors is None:
        return None
    rho = [Q[j] - v for j, v in zip(nd.speeds, s.T * pk)]
    z = sm.Matrix(ldl_solve(factors, rho, define, f"z{k}_y", f"z{k}_"))          # D^-1 rho
    Y = sm.Matrix.hstack(*[sm.Matrix(ldl_solve(factors, list(U.row(i)), define,
                                               f"Y{k}_{i}_y", f"Y{k}_{i}_"))
                           for i in range(m)])                                    # D^-1 U^T
    if one:     # I - U U^T / d: U_i U_c computed while 1 / d is
        e = factors[2][0]
        uu = {(i, c): define(f"uu{k}_{i}_{c}", U[i, 0] * U[c, 0])
              for i in range(m) for c in range(i, m)}
        It = Ik - sm.Matrix(m, m, lambda i, c: sm.Mul(uu[min(i, c), max(i, c)], e,
                                                      evaluate=False))
    elif nd.parent >= 0:
        # named: inline, each entry of Xᵀ Ĩ X would repeat Ĩ's
        UY = U * Y
        t = {(i, c): define(f"It{k}_{i}_{c}", Ik[i, c] - UY[i, c])
             for i in range(m) for c in range(i, m)}
        It = sm.Matrix(m, m, lambda i, c: t[min(i, c), max(i, c)])
    else:
        It = None

    def step(XA):
        acc = z - Y * XA
        ud = [define(f"ud{j}", acc[a]) for a, j in enumerate(nd.speeds)]
        return ud, XA + s * sm.Matrix(ud)
    return It, pk + U * z, step, factors[1]


def _schur(k, nd, Ik, pk, s, Q, define):
    """(Ĩ, p̃, step, pivots) of a joint whose s is square on its nonzero rows a (a
    spherical joint or a hinge about a body axis, taken at its joint point): then
    span(s) is those coordinate rows, and with w = s_a u' the joint's own
    acceleration,

        Ĩ = I - I[:, a] I_aa⁻¹ I[a, :]      (rows and columns a exactly zero)
        p̃_a = s_a⁻ᵀ Q = Q_w,  p̃_l = p_l + I_la z,  z = I_aa⁻¹ (Q_w - p_a)
        w = z - (XA)_a - I_aa⁻¹ I_al (XA)_l,  u' = s_a⁻¹ w

    so that Ĩ costs the Schur complement of I_aa alone and no U = I s or D = sᵀ I s
    is formed. The pivots: those of I_aa times the squares of s_a's (both nonzero, and
    I_aa's positive, exactly when D = s_aᵀ I_aa s_a is positive definite). None if s is
    not square on its rows, or s_a or I_aa has a zero pivot by structure."""
    m, ns = len(nd.rows), len(nd.speeds)
    a = [i for i in range(m) if any(s[i, c] != 0 for c in range(ns))]
    if len(a) != ns:
        return None
    ell = [i for i in range(m) if i not in a]
    lu = lu_factor({(i, c): s[a[i], c] for i in range(ns) for c in range(ns) if s[a[i], c] != 0},
                   ns, define, f"{k}_s")
    factors = ldl_factor({(i, c): Ik[a[i], a[c]] for i in range(ns) for c in range(i + 1)},
                         ns, define, f"{k}_")
    if lu is None or factors is None:
        return None
    Qw = lu_solve(lu, [Q[j] for j in nd.speeds], define, f"Qw{k}_", transposed=True)
    z = ldl_solve(factors, [Qw[i] - pk[a[i]] for i in range(ns)], define, f"z{k}_y", f"z{k}_")
    Yl = [ldl_solve(factors, [Ik[a[i], c] for i in range(ns)], define, f"Y{k}_{c}_y", f"Y{k}_{c}_")
          for c in ell]                                     # I_aa⁻¹ I[a, c], one per c in ell
    It = sm.zeros(m, m)
    if nd.parent >= 0:
        for x, i in enumerate(ell):
            for y, c in enumerate(ell[x:], x):
                It[i, c] = It[c, i] = define(f"It{k}_{i}_{c}", Ik[i, c] - sm.Add(
                    *[Ik[i, a[t]] * Yl[y][t] for t in range(ns)]))
    pt = sm.zeros(m, 1)
    for t, i in enumerate(a):
        pt[i] = Qw[t]
    for i in ell:
        pt[i] = pk[i] + sm.Add(*[Ik[i, a[t]] * z[t] for t in range(ns)])
    pivots = [define(f"D{k}_{i}", d * lu[1][i, i] ** 2) for i, d in enumerate(factors[1])]

    def step(XA):
        w = [define(f"jw{k}_{t}", z[t] - XA[a[t]] - sm.Add(*[Yl[y][t] * XA[c]
                                                             for y, c in enumerate(ell)]))
             for t in range(ns)]
        ud = [define(f"ud{j}", v) for j, v in zip(nd.speeds, lu_solve(lu, w, define, f"uw{k}_"))]
        A = sm.Matrix(XA)
        for t, i in enumerate(a):
            A[i] += w[t]
        return ud, A
    return It, pt, step, pivots


def transported(k, nd, T, A):
    """X A_parent on node k's rows (zero for a root)."""
    if nd.parent < 0:
        return sm.zeros(len(nd.rows), 1)
    return T[k].matrix() * A[nd.parent] if planar(nd) else T[k](A[nd.parent])


def outward(nodes, T, step, nspeeds, define):
    """Root to tips: each body's u' and A from X A_parent (step, see inward)."""
    has_children = {nd.parent for nd in nodes}
    A, ud = [None] * len(nodes), [None] * nspeeds
    for k, nd in enumerate(nodes):
        XA = transported(k, nd, T, A)
        if not planar(nd):                     # used by every u' and by A: named once
            XA = sm.Matrix([define(f"XA{k}_{i}", v) for i, v in enumerate(XA)])
        acc, Ak = step[k](XA)
        for j, v in zip(nd.speeds, acc):
            ud[j] = v
        if k in has_children:
            A[k] = sm.Matrix([define(f"A{k}_{i}", v) for i, v in enumerate(Ak)])
    return ud


def carried_acceleration(k, nd, c, a_parent, T, define) -> sm.Matrix:
    """A body's u'-free total acceleration on all six rows, as Pinocchio's passes carry
    it: c (the root's a0 with gravity, a child's velocity product (c_ω; e), codegen.formulation.tree)
    for a root, X (a_parent + (0; e)) + (c_ω; 0) for a child."""
    if nd.parent < 0:
        return sm.Matrix(c)
    every = list(range(6))
    shifted = a_parent + sm.Matrix([0, 0, 0] + list(c[3:]))
    return _Transport(T[k].R, T[k].r, every, every, define, k)(shifted) \
        + sm.Matrix(list(c[:3]) + [0, 0, 0])


def carried_biases(nodes, Wx, h, T, define):
    """(W, h) of the recursion from tree_inputs' carry: each body's u'-free acceleration
    a0 carried outward (carried_acceleration) and h = Wx a0 + bx, so that no body's a0
    is composed from the formulation's expressions. W: Wx's columns on the node's rows."""
    a0, W, bias = [None] * len(nodes), [], []
    for k, nd in enumerate(nodes):
        c, b = h[k]
        ak = carried_acceleration(k, nd, c, a0[nd.parent] if nd.parent >= 0 else None,
                                  T, define)
        a0[k] = sm.Matrix([define(f"a0{k}_{i}", v) for i, v in enumerate(ak)])
        W.append(Wx[k].extract(list(range(len(nd.rows))), nd.rows))
        bias.append(Wx[k] * a0[k] + sm.Matrix(b))
    return W, bias
