"""Tree-structured systems: M u' = F solved by the articulated-body recursion.

When every body's motion is its parent's, carried rigidly, plus one speed
of its own (a chain or tree of one-degree-of-freedom joints), the accelerations
follow in O(n) without forming M (Featherstone's articulated-body algorithm,
here in the Gibbs–Appell form). With each body's spatial acceleration split
as A_b = Γ_b u' (the part linear in u') plus the rest, and

    A_b = X_b A_parent + s_b u'_j          (j: the speed body b owns)
    S   = sum_b [ ½ A_bᵀ W_b A_b + A_bᵀ h_b ] - Qᵀ u'   (+ terms free of u')

(W_b the body's spatial inertia, h_b its inertial bias wrench: W times the
u'-free acceleration, plus ω × Iω), the minimum of S is found from the tips
inward, eliminating one speed per body:

    I_b = W_b + sum_c X_cᵀ Ĩ_c X_c,        p_b = h_b + sum_c X_cᵀ p̃_c
    U = I_b s,  D = sᵀ U,  ρ = Q_j - sᵀ p_b
    Ĩ_b = I_b - U Uᵀ / D,                  p̃_b = p_b + U ρ / D

then outward: u'_j = (ρ - Uᵀ X_b A_parent) / D, A_b = X_b A_parent + s u'_j.

Spatial vectors are (angular; linear at the mass centre) in Newtonian
components, restricted to the rows a body's partial velocities can reach
(two rows for a planar particle, three for a planar rigid body), so a planar
point-mass chain costs 2 × 2 matrices per link. Structural zeros and ones
of X and s fold away as the expressions are built.

Detection (``tree_of``) is exact in structure and checked numerically in
value: the transport Γ_b = X_b Γ_parent on the parent's speeds is tested at
two generic points (1e-9); anything else (loops, several speeds per body,
bodies sharing a speed) returns None and the dense solve is used.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sm

from .kernel import Program, make_program

__all__ = ["TreeNode", "Tree", "tree_of", "tree_program"]


@dataclass
class TreeNode:
    speed: int          # the speed this body's joint owns
    parent: int         # index of the parent node, -1 for a root
    rows: list          # spatial rows (0-2 angular, 3-5 linear) the body can move in
    s: list             # Γ_b[rows, speed]
    X: list             # len(rows) x len(parent rows): A_b = X A_parent + s u'_speed
    W: list             # len(rows) x len(rows) spatial inertia
    h: list             # len(rows) inertial bias wrench


@dataclass
class Tree:
    nodes: list         # parents before children
    Q: list             # generalized active forces, one per speed


def _probe_values(exprs, k):
    atoms = set()
    for e in exprs:
        atoms |= e.free_symbols
    return {a: sm.Float(0.31 + 0.0717 * i + 0.113 * k) for i, a in enumerate(sorted(atoms, key=str))}


def _vanishes(exprs) -> bool:
    """All of exprs are zero at two generic points (1e-9)."""
    exprs = [sm.sympify(e) for e in exprs if e != 0]
    if not exprs:
        return True
    for k in range(2):
        vals = _probe_values(exprs, k)
        for e in exprs:
            v = e.xreplace(vals).evalf()
            if not v.is_number or abs(complex(v)) > 1e-9:
                return False
    return True


def _transport(r):
    """6 x 6 X with (ω; v)_child = X (ω; v)_parent for a rigid offset r = child - parent."""
    rx, ry, rz = r
    X = sm.eye(6)
    X[3:, :3] = sm.Matrix([[0, rz, -ry], [-rz, 0, rx], [ry, -rx, 0]])   # v += ω × r
    return X


def tree_of(bodies: list, Q: list, nspeeds: int) -> Tree | None:
    """The tree of bodies [(G, W, h, r)] or None.

    G: 6 x nspeeds partial velocities (rows ω, v), W: 6 x 6, h: 6, r: 3
    (position of the body's reference point, Newtonian components)."""
    nz = [frozenset(j for j in range(nspeeds) if any(G[i][j] != 0 for i in range(6)))
          for G, _, _, _ in bodies]
    live = sorted((k for k in range(len(bodies)) if nz[k]), key=lambda k: len(nz[k]))
    by_set = {}
    for k in live:
        if nz[k] in by_set:
            return None                     # two bodies with the same speeds: not one joint each
        by_set[nz[k]] = k
    owner, parent = {}, {}
    for k in live:
        if len(nz[k]) == 1:
            parent[k] = -1
            (own,) = nz[k]
        else:
            cands = [by_set[nz[k] - {j}] for j in nz[k] if nz[k] - {j} in by_set]
            if len(cands) != 1:
                return None
            parent[k] = cands[0]
            (own,) = nz[k] - nz[cands[0]]
        if own in owner:
            return None
        owner[own] = k
    if len(owner) != nspeeds:
        return None                         # a speed no body owns (e.g. a massless link)
    rows = {k: [i for i in range(6) if any(bodies[k][0][i][j] != 0 for j in range(nspeeds))]
            for k in live}
    index, nodes = {}, []
    for k in live:                          # sorted by |nz|: parents come first
        G, W, h, r = bodies[k]
        own = next(j for j, o in owner.items() if o == k)
        pk = parent[k]
        if pk == -1:
            X = []
        else:
            Xf = _transport([a - b for a, b in zip(r, bodies[pk][3])])
            Gp = bodies[pk][0]
            check = []
            for j in nz[pk]:
                carried = Xf * sm.Matrix([Gp[i][j] for i in range(6)])
                check += [G[i][j] - carried[i] for i in range(6)]
            if not _vanishes(check):
                return None
            X = [[Xf[i, c] for c in rows[pk]] for i in rows[k]]
        index[k] = len(nodes)
        nodes.append(TreeNode(speed=own, parent=index[pk] if pk != -1 else -1, rows=rows[k],
                              s=[G[i][own] for i in rows[k]], X=X,
                              W=[[W[i][c] for c in rows[k]] for i in rows[k]],
                              h=[h[i] for i in rows[k]]))
    return Tree(nodes=nodes, Q=list(Q))


def tree_program(eom) -> Program:
    """q' and u' of a tree-structured model in one straight-line program.

    One CSE over q' and the tree's inputs (s, X, W, h, Q); the recursion
    follows as further temporaries. Outputs: qd, ud and D (the pivots, each
    > 0 for a positive definite M)."""
    tree = eom.tree
    base, where = [], []
    for k, nd in enumerate(tree.nodes):
        for name, values in (("s", nd.s), ("h", nd.h), ("X", [e for row in nd.X for e in row]),
                             ("W", [e for row in nd.W for e in row])):
            for i, e in enumerate(values):
                if not sm.sympify(e).is_number:
                    base.append(e)
                    where.append((k, name, i))
    qpos = [j for j, e in enumerate(tree.Q) if not sm.sympify(e).is_number]
    prog = make_program(eom, [("qd", list(eom.qdot)), ("base", base),
                              ("Q", [tree.Q[j] for j in qpos])])
    out = dict(prog.outputs)
    temps = list(prog.temporaries)
    names = dict(prog.names)

    def define(label, expr):
        expr = sm.sympify(expr)
        if expr.is_number or expr.is_Symbol:
            return expr
        s = sm.Symbol(f"cg_{label}", real=True)
        names[s] = str(s)
        temps.append((s, expr))
        return s

    vals = {}
    for (k, name, i), e in zip(where, out["base"]):
        vals[k, name, i] = define(f"{name}{k}_{i}", e)
    Q = [sm.sympify(e) for e in tree.Q]
    for j, e in zip(qpos, out["Q"]):
        Q[j] = define(f"Q{j}", e)

    def get(k, name, flat):
        return [vals.get((k, name, i), sm.sympify(e)) for i, e in enumerate(flat)]

    nodes = tree.nodes
    n = len(nodes)
    s = [get(k, "s", nd.s) for k, nd in enumerate(nodes)]
    h = [get(k, "h", nd.h) for k, nd in enumerate(nodes)]
    X = [sm.Matrix(len(nd.rows), len(nodes[nd.parent].rows) if nd.parent >= 0 else 0,
                   get(k, "X", [e for row in nd.X for e in row])) for k, nd in enumerate(nodes)]
    Iacc = [sm.Matrix(len(nd.rows), len(nd.rows), get(k, "W", [e for row in nd.W for e in row]))
            for k, nd in enumerate(nodes)]
    pacc = [sm.Matrix(h[k]) for k in range(n)]
    U, e, rho = [None] * n, [None] * n, [None] * n
    D = [None] * len(Q)
    has_children = {nd.parent for nd in nodes}
    for k in reversed(range(n)):               # tips inward
        nd, m = nodes[k], len(nodes[k].rows)
        upper = {(i, c): define(f"I{k}_{i}_{c}", Iacc[k][i, c]) for i in range(m) for c in range(i, m)}
        Ik = sm.Matrix(m, m, lambda i, c: upper[min(i, c), max(i, c)])
        pk = sm.Matrix([define(f"p{k}_{i}", pacc[k][i]) for i in range(m)])
        sk = sm.Matrix(s[k])
        U[k] = sm.Matrix([define(f"U{k}_{i}", v) for i, v in enumerate(Ik * sk)])
        Dk = define(f"D{k}", (sk.T * U[k])[0])
        D[nd.speed] = Dk
        e[k] = define(f"e{k}", 1 / Dk)
        rho[k] = define(f"r{k}", Q[nd.speed] - (sk.T * pk)[0])
        if nd.parent >= 0:
            Ue = U[k] * e[k]
            It = Ik - Ue * U[k].T
            pt = pk + Ue * rho[k]
            Xk = X[k]
            Iacc[nd.parent] += Xk.T * It * Xk
            pacc[nd.parent] += Xk.T * pt
    A = [None] * n
    ud = [None] * len(Q)
    for k in range(n):                         # root outward
        nd = nodes[k]
        XA = X[k] * A[nd.parent] if nd.parent >= 0 else sm.zeros(len(nd.rows), 1)
        ud[nd.speed] = define(f"ud{nd.speed}", e[k] * (rho[k] - (U[k].T * XA)[0]))
        if k in has_children:
            A[k] = sm.Matrix([define(f"A{k}_{i}", v)
                              for i, v in enumerate(XA + sm.Matrix(s[k]) * ud[nd.speed])])
    return Program(inputs=prog.inputs, names=names, temporaries=temps,
                   outputs=[("qd", out["qd"]), ("ud", ud), ("D", D)])
