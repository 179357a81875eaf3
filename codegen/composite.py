"""The mass matrix of a tree of bodies as a program: the composite-rigid-body algorithm.

Over a tree (codegen.tree), M = sum_b G_bᵀ W_b G_b with each body's partial
velocities carried from its parent's, G_b = X_b G_parent + s_b (on its own
speeds). Gathering the inertias from the tips in,

    I^c_b = W_b + sum_c X_cᵀ I^c_c X_c          (the composite inertia of b's subtree)

each joint's block row follows by walking its force up to the root:

    f = I^c_b s_b,   M[b, b] = s_bᵀ f,   then for each ancestor a (f carried, f <- X_jᵀ f
    from the body j below a):   M[b, a] = fᵀ s_a

(Featherstone, Rigid Body Dynamics Algorithms, 6.2). Entries between
bodies of different branches are zero by structure and never written, so
the packed triangle shows the tree's sparsity to the unrolled solve
(codegen.solve). The program is O(n · depth) operations and, above all,
cheap to form: the symbolic M of the formulation (n² cells, each a SymPy
expression, then their CSE) is never built for a tree, where it dominated
the build of large models.

The tree's inputs (one CSE over s, W, h, R, r, Q, with q' and F) and
transports are those of the forward recursion (codegen.recursive).
"""
from __future__ import annotations

import sympy as sm

from .program import Program, live_temporaries
from .progress import checkpoint
# the forward recursion's inputs and transports, shared
from .recursive import _planar, _tree_inputs

__all__ = ["eval_program"]


def eval_program(eom) -> Program | None:
    """The right-hand side's values of a tree model: outputs qd (q'), M (packed lower
    triangle, by the composite-rigid-body algorithm) and F, in one program; None
    without a tree or with run-time constraints (then M is the formulation's)."""
    if eom.tree is None or eom.constraints is not None:
        return None
    prog, define, qd, S, W, _, _, T = _tree_inputs(eom, [("F", list(eom.F))])
    nodes = eom.tree.nodes
    mass = composite_mass(nodes, S, W, T, define, eom.nu)
    outputs = [("qd", qd), ("M", mass), ("F", dict(prog.outputs)["F"])]
    return Program(inputs=prog.inputs, names=define.names,
                   temporaries=live_temporaries(define.temps, outputs), outputs=outputs)


def composite_mass(nodes, S, W, T, define, nu) -> list:
    """M's packed lower triangle (row by row) from the tree's motion subspaces S,
    inertias W and transports T, each new quantity named through define."""
    n = len(nodes)
    Ic = list(W)
    M = {}
    for k in reversed(range(n)):            # children come after their parents
        checkpoint()
        nd, m = nodes[k], len(nodes[k].rows)
        upper = {(i, c): define(f"Ic{k}_{i}_{c}", Ic[k][i, c])
                 for i in range(m) for c in range(i, m)}
        Ic[k] = sm.Matrix(m, m, lambda i, c: upper[min(i, c), max(i, c)])
        if nd.parent >= 0:
            if _planar(nd):
                X = T[k].matrix()
                Ic[nd.parent] += X.T * Ic[k] * X
            else:
                Ic[nd.parent] += T[k].congruence(Ic[k])
    for k, nd in enumerate(nodes):
        checkpoint()
        ns = len(nd.speeds)
        f = Ic[k] * S[k]
        f = sm.Matrix(f.rows, ns, [define(f"cf{k}_{i}", e) for i, e in enumerate(f)])
        for a, j in enumerate(nd.speeds):
            for b, i in enumerate(nd.speeds):
                if i <= j:
                    M[j, i] = sm.Add(*[f[r, a] * S[k][r, b] for r in range(f.rows)])
        below, up = k, nd.parent
        while up >= 0:
            f = _carried_up(nodes[below], T[below], f, define, f"cf{k}_{up}_", f"cT{k}_{up}_")
            for a, j in enumerate(nd.speeds):
                for b, i in enumerate(nodes[up].speeds):
                    M[max(i, j), min(i, j)] = sm.Add(*[f[r, a] * S[up][r, b]
                                                    for r in range(f.rows)])
            below, up = up, nodes[up].parent
    return [sm.sympify(M.get((i, j), 0)) for i in range(nu) for j in range(i + 1)]


def _carried_up(nd, transport, f, define, label, inner) -> sm.Matrix:
    """Xᵀ f on the parent's rows, column by column (f on nd's rows), named (label; inner:
    the transport's own temporaries)."""
    cols = []
    for a in range(f.cols):
        col = f[:, a]
        up = transport.matrix().T * col if _planar(nd) else \
            transport.transposed(list(col), f"{inner}{a}_")
        cols.append(up)
    out = sm.Matrix.hstack(*cols)
    return sm.Matrix(out.rows, out.cols, [define(f"{label}{i}", e) for i, e in enumerate(out)])
