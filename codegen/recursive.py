"""Tree-structured systems: M u' = F solved by the articulated-body recursion.

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
(D is 1 x 1 for a one-speed joint, else a small L D Lᵀ: solve.ldl_factor).

Spatial vectors are (angular; linear at the mass centre) in each body's
components (a rigid body's frame, the Newtonian frame for a particle),
restricted to the rows a body's partial velocities can reach
(two rows for a planar particle, three for a planar rigid body), so a planar
point-mass chain costs 2 × 2 matrices per link. Structural zeros and ones
of X and s fold away as the expressions are built.

Detection (``tree_of``) is exact in structure and checked numerically in
value: the transport Γ_b = X_b Γ_parent on the parent's speeds is tested at
two generic points (1e-9); anything else (a body moved by two branches,
bodies with the same speeds, a speed no body has, a single body) returns
None and the dense solve is used.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sm

from .kernel import Program, live_temporaries, make_program
from .kinematics import generic_values
from .solve import ldl_factor, ldl_solve

__all__ = ["TreeNode", "Tree", "tree_of", "tree_of_bodies", "tree_program"]


@dataclass
class TreeNode:
    speeds: list        # the speeds this body's joint owns (one or more)
    parent: int         # index of the parent node, -1 for a root
    rows: list          # spatial rows (0-2 angular, 3-5 linear) the body can move in
    s: list             # Γ_b[rows, speeds]: len(rows) x len(speeds)
    X: list             # len(rows) x len(parent rows): A_b = X A_parent + s u'_speeds
    W: list             # len(rows) x len(rows) spatial inertia
    h: list             # len(rows) inertial bias wrench


@dataclass
class Tree:
    nodes: list         # parents before children
    Q: list             # generalized active forces, one per speed
    # only if its program is smaller than the dense solve's (codegen.kernel.build_programs)
    if_smaller: bool = False


def _vanishes(exprs, numeric) -> bool:
    """All of exprs are zero at two generic points (1e-9). numeric(exprs, point): their
    values there (Motions.numeric: over intermediates too, codegen.relative)."""
    exprs = [sm.sympify(e) for e in exprs if e != 0]
    if not exprs:
        return True
    for k in range(2):
        for v in numeric(exprs, k):
            v = sm.sympify(v)
            if not v.is_number or abs(complex(v)) > 1e-9:
                return False
    return True


def tree_of(bodies: list, Q: list, nspeeds: int, transport, numeric=generic_values) -> Tree | None:
    """The tree of bodies [(G, W, h)] or None.

    G: 6 x nspeeds partial velocities (rows ω, v), W: 6 x 6 spatial inertia,
    h: 6 bias wrench, each body in its own components; transport(k, parent):
    the 6 x 6 X with (ω; v)_k = X (ω; v)_parent for a rigid connection; numeric: see
    _vanishes."""
    nz = [frozenset(j for j in range(nspeeds) if any(G[i][j] != 0 for i in range(6)))
          for G, _, _ in bodies]
    live = sorted((k for k in range(len(bodies)) if nz[k]), key=lambda k: len(nz[k]))
    by_set = {}
    for k in live:
        if nz[k] in by_set:
            return None                     # two bodies with the same speeds: not one joint each
        by_set[nz[k]] = k
    owned, parent = {}, {}
    for k in live:
        below = [c for c in live if nz[c] < nz[k]]
        if not below:
            parent[k] = -1
        else:
            pk = max(below, key=lambda c: len(nz[c]))
            if any(not nz[c] <= nz[pk] for c in below):
                return None                 # depends on two branches: not a tree
            parent[k] = pk
        owned[k] = sorted(nz[k] - (nz[parent[k]] if parent[k] != -1 else frozenset()))
    if sorted(j for k in live for j in owned[k]) != list(range(nspeeds)):
        return None                         # a speed no body has (e.g. a massless last link)
    if len(live) < 2:
        return None                         # one body: the dense solve is the same work
    rows = {k: [i for i in range(6) if any(bodies[k][0][i][j] != 0 for j in range(nspeeds))]
            for k in live}
    index, nodes = {}, []
    for k in live:                          # sorted by |nz|: parents come first
        G, W, h = bodies[k]
        own = owned[k]
        pk = parent[k]
        if pk == -1:
            X = []
        else:
            Xf = transport(k, pk)
            Gp = bodies[pk][0]
            check = []
            for j in nz[pk]:
                carried = Xf * sm.Matrix([Gp[i][j] for i in range(6)])
                check += [G[i][j] - carried[i] for i in range(6)]
            if not _vanishes(check, numeric):
                return None
            X = [[Xf[i, c] for c in rows[pk]] for i in rows[k]]
        index[k] = len(nodes)
        nodes.append(TreeNode(speeds=own, parent=index[pk] if pk != -1 else -1, rows=rows[k],
                              s=[[G[i][j] for j in own] for i in rows[k]], X=X,
                              W=[[W[i][c] for c in rows[k]] for i in rows[k]],
                              h=[h[i] for i in rows[k]]))
    return Tree(nodes=nodes, Q=list(Q))


def tree_of_bodies(motions, bodies: list, loads: list) -> Tree | None:
    """The bodies of a formed model as a tree, or None.

    Each body's partial velocities, spatial inertia and inertial bias
    wrench at its mass centre (a particle: its point), in the body's own
    frame (a particle: the Newtonian frame), so that a rigid body's
    inertia stays constant; None if a mass centre has no velocity or
    position the kinematics can reach, or if the bodies form no tree.
    A load on a body's mass centre or frame (gravity, a joint's torque pair)
    is taken off the body's bias wrench, so that it costs O(1) and not a
    dot product with every partial velocity; the other loads make Q.
    motions: the formulation's codegen.formulation.Motions."""
    from .formulation import _add, _cross, _generalized_forces, _matvec, is_rigid
    kin, N = motions.kin, motions.N
    p = len(kin.speeds)
    data, places = [], []
    try:
        for body in bodies:
            P = body.masscenter
            X = body.frame if is_rigid(body) else N
            v = motions.point(P, X)
            m = kin.to_plain(body.mass, f"the mass of {body}")
            G = [[sm.S.Zero] * p for _ in range(3)] + [[v.partials[j][i] for j in range(p)]
                                                       for i in range(3)]
            W = [[sm.S.Zero] * 6 for _ in range(6)]
            for i in range(3, 6):
                W[i][i] = m
            h = [sm.S.Zero] * 3 + [m * c for c in v.rate0]
            if is_rigid(body):
                w = motions.frame(body.frame, X)
                I = [[kin.to_plain(c, f"the inertia of {body}") for c in row]
                     for row in body.central_inertia.to_matrix(X).tolist()]
                for i in range(3):
                    G[i] = [w.partials[j][i] for j in range(p)]
                    W[i][:3] = I[i]
                h[:3] = _add(_matvec(I, w.rate0), _cross(w.value, _matvec(I, w.value)))
            data.append((G, W, h))
            places.append((P, X))
        Q = _generalized_forces(motions, _applied(motions, bodies, places, data, loads), p)
    except ValueError:          # a mass centre the kinematics cannot reach
        return None

    def transport(k, parent):
        """X with (ω; v) of body k = X (ω; v) of its parent, each in its own frame."""
        (Pk, Xk), (Pp, Xp) = places[k], places[parent]
        R = motions.rotation(Xk, Xp)
        rx, ry, rz = motions.components(Pk.pos_from(Pp), Xp)
        cross = sm.Matrix([[0, -rz, ry], [rz, 0, -rx], [-ry, rx, 0]])
        T = sm.zeros(6, 6)
        T[:3, :3] = R
        T[3:, 3:] = R
        T[3:, :3] = -R * cross                    # v_k = R (v_p + ω_p × r)
        return T

    try:
        return tree_of(data, Q, p, transport, motions.numeric)
    except ValueError:
        return None


def _applied(motions, bodies, places, data, loads) -> list:
    """Subtract the loads on a body's mass centre or frame from its bias wrench (data's h,
    in place); returns the other loads."""
    from .formulation import is_rigid
    centres, frames = {}, {}
    for k, body in enumerate(bodies):
        centres.setdefault(body.masscenter, k)
        if is_rigid(body) and places[k][1] == body.frame:
            frames.setdefault(body.frame, k)
    rest = []
    for where, vec in loads:
        k = centres.get(where) if where in centres else frames.get(where)
        if k is None:
            rest.append((where, vec))
            continue
        X, h = places[k][1], data[k][2]
        rows = range(3, 6) if where in centres else range(3)
        for i, c in zip(rows, motions.components(vec, X)):
            h[i] -= c
    return rest


class _Definitions:
    """The program's temporaries as the recursion defines them (cg_<label> each)."""

    def __init__(self):
        self.temps, self.names = [], {}

    def __call__(self, label, expr):
        expr = sm.sympify(expr)
        if expr.is_number or expr.is_Symbol:
            return expr
        s = sm.Symbol(f"cg_{label}", real=True)
        self.names[s] = str(s)
        self.temps.append((s, expr))
        return s


def _tree_inputs(eom, define):
    """(program, q', S, X, W, h, Q): one CSE over q' and the tree's inputs (s, X, W, h, Q),
    whose temporaries start define's; each non-numeric entry then a named temporary."""
    tree = eom.tree
    base, where = [], []
    for k, nd in enumerate(tree.nodes):
        for name, values in (("s", [e for row in nd.s for e in row]), ("h", nd.h),
                             ("X", [e for row in nd.X for e in row]),
                             ("W", [e for row in nd.W for e in row])):
            for i, e in enumerate(values):
                if not sm.sympify(e).is_number:
                    base.append(e)
                    where.append((k, name, i))
    qpos = [j for j, e in enumerate(tree.Q) if not sm.sympify(e).is_number]
    prog = make_program(eom, [("qd", list(eom.qdot)), ("base", base),
                              ("Q", [tree.Q[j] for j in qpos])])
    out = dict(prog.outputs)
    define.temps, define.names = list(prog.temporaries), dict(prog.names)
    vals = {}
    for (k, name, i), e in zip(where, out["base"]):
        vals[k, name, i] = define(f"{name}{k}_{i}", e)
    Q = [sm.sympify(e) for e in tree.Q]
    for j, e in zip(qpos, out["Q"]):
        Q[j] = define(f"Q{j}", e)

    def get(k, name, flat):
        return [vals.get((k, name, i), sm.sympify(e)) for i, e in enumerate(flat)]
    nodes = tree.nodes
    S = [sm.Matrix(len(nd.rows), len(nd.speeds), get(k, "s", [e for row in nd.s for e in row]))
         for k, nd in enumerate(nodes)]
    h = [get(k, "h", nd.h) for k, nd in enumerate(nodes)]
    X = [sm.Matrix(len(nd.rows), len(nodes[nd.parent].rows) if nd.parent >= 0 else 0,
                   get(k, "X", [e for row in nd.X for e in row])) for k, nd in enumerate(nodes)]
    W = [sm.Matrix(len(nd.rows), len(nd.rows), get(k, "W", [e for row in nd.W for e in row]))
         for k, nd in enumerate(nodes)]
    return prog, out["qd"], S, X, W, h, Q


def _inward(nodes, S, X, W, h, Q, define):
    """Tips to root: each body's articulated inertia and bias, U = I s, D = sᵀ U
    (factored), z = D⁻¹ ρ and Y = D⁻¹ Uᵀ. Returns (z, Y, D) or None if a joint has no
    inertia by structure."""
    n = len(nodes)
    Iacc, pacc = list(W), [sm.Matrix(h[k]) for k in range(n)]
    Y, z, D = [None] * n, [None] * n, [None] * len(Q)
    for k in reversed(range(n)):
        nd, m = nodes[k], len(nodes[k].rows)
        upper = {(i, c): define(f"I{k}_{i}_{c}", Iacc[k][i, c]) for i in range(m) for c in range(i, m)}
        Ik = sm.Matrix(m, m, lambda i, c: upper[min(i, c), max(i, c)])
        pk = sm.Matrix([define(f"p{k}_{i}", pacc[k][i]) for i in range(m)])
        U = sm.Matrix(m, len(nd.speeds), [define(f"U{k}_{i}_{a}", v) for (i, a), v in
                                          zip([(i, a) for i in range(m) for a in range(len(nd.speeds))],
                                              Ik * S[k])])
        one = len(nd.speeds) == 1 and m <= 3     # planar: a few products
        if one:
            # d = s^T I s from I and the products s_i s_c (functions of q alone,
            # computed early), not from U: the recursion waits on d, not on U
            sv = list(S[k])
            d = sm.Add(*[sm.Mul(define(f"ss{k}_{i}_{c}", (1 if i == c else 2) * sv[i] * sv[c]),
                                Ik[i, c], evaluate=False)
                         for i in range(m) for c in range(i, m) if sv[i] != 0 and sv[c] != 0],
                       evaluate=False)
            Dk = sm.Matrix([[d]])
        else:
            Dk = S[k].T * U
        factors = ldl_factor({(i, c): Dk[i, c] for i in range(Dk.rows) for c in range(i + 1)},
                             Dk.rows, define, f"{k}_")
        if factors is None:
            return None
        for j, d in zip(nd.speeds, factors[1]):
            D[j] = d
        rho = [Q[j] - v for j, v in zip(nd.speeds, S[k].T * pk)]
        z[k] = sm.Matrix(ldl_solve(factors, rho, define, f"z{k}_y", f"z{k}_"))      # D^-1 rho
        Y[k] = sm.Matrix.hstack(*[sm.Matrix(ldl_solve(factors, list(U.row(i)), define,
                                                      f"Y{k}_{i}_y", f"Y{k}_{i}_"))
                                  for i in range(m)])                                # D^-1 U^T
        if nd.parent >= 0:
            if one:     # I - U U^T / d: U_i U_c computed while 1 / d is
                e = factors[2][0]
                uu = {(i, c): define(f"uu{k}_{i}_{c}", U[i, 0] * U[c, 0])
                      for i in range(m) for c in range(i, m)}
                It = Ik - sm.Matrix(m, m, lambda i, c: sm.Mul(uu[min(i, c), max(i, c)], e,
                                                              evaluate=False))
                Iacc[nd.parent] += X[k].T * It * X[k]
            else:
                # named in stages: inline, each entry of Xᵀ Ĩ X would repeat Ĩ's
                UY = U * Y[k]
                t = {(i, c): define(f"It{k}_{i}_{c}", Ik[i, c] - UY[i, c])
                     for i in range(m) for c in range(i, m)}
                It = sm.Matrix(m, m, lambda i, c: t[min(i, c), max(i, c)])
                ItX = It * X[k]
                ItX = sm.Matrix(ItX.rows, ItX.cols,
                                [define(f"ItX{k}_{i}_{c}", ItX[i, c])
                                 for i in range(ItX.rows) for c in range(ItX.cols)])
                Iacc[nd.parent] += X[k].T * ItX
            pt = pk + U * z[k]
            pacc[nd.parent] += X[k].T * pt
    return z, Y, D


def _outward(nodes, S, X, z, Y, nspeeds, define):
    """Root to tips: u'_j = z - Y X A_parent for each body's speeds, A = X A_parent + s u'."""
    has_children = {nd.parent for nd in nodes}
    A, ud = [None] * len(nodes), [None] * nspeeds
    for k, nd in enumerate(nodes):
        XA = X[k] * A[nd.parent] if nd.parent >= 0 else sm.zeros(len(nd.rows), 1)
        if len(nd.speeds) > 1:     # used by every speed's u' and by A: named once
            XA = sm.Matrix([define(f"XA{k}_{i}", v) for i, v in enumerate(XA)])
        acc = z[k] - Y[k] * XA
        for a, j in enumerate(nd.speeds):
            ud[j] = define(f"ud{j}", acc[a])
        if k in has_children:
            A[k] = sm.Matrix([define(f"A{k}_{i}", v) for i, v in
                              enumerate(XA + S[k] * sm.Matrix([ud[j] for j in nd.speeds]))])
    return ud


def tree_program(eom) -> Program | None:
    """q' and u' of a tree-structured model in one straight-line program.

    One CSE over q' and the tree's inputs (s, X, W, h, Q); the inward and the
    outward pass of the recursion follow as further temporaries. Outputs: qd,
    ud and D (the pivots, each > 0 for a positive definite M). None if a
    joint's D is zero by structure (the dense solve then reports the singular
    M at run time)."""
    define = _Definitions()
    prog, qd, S, X, W, h, Q = _tree_inputs(eom, define)
    passed = _inward(eom.tree.nodes, S, X, W, h, Q, define)
    if passed is None:
        return None
    z, Y, D = passed
    ud = _outward(eom.tree.nodes, S, X, z, Y, len(Q), define)
    outputs = [("qd", qd), ("ud", ud), ("D", D)]
    return Program(inputs=prog.inputs, names=define.names,
                   temporaries=live_temporaries(define.temps, outputs), outputs=outputs)
