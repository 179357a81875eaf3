"""Inverse dynamics as one straight-line program: tau = M u' - F for a given u'.

Over a tree of bodies (codegen.formulation.tree), the recursive Newton–Euler passes, in
the Gibbs–Appell form of codegen.algorithms.aba: with each body's acceleration
linear in u' carried outward,

    A_b = X_b A_parent + s_b u'_j,        f_b = W_b A_b + h_b

(W_b its spatial inertia, h_b its inertial bias wrench, less the loads on its
mass centre and frame), the wrenches are gathered inward, and each joint's
generalized force is its share of them less the other loads' Q:

    tau_j = s_bᵀ f̂_b - Q_j,               f̂_parent += X_bᵀ f̂_b

(f̂_b: f_b plus its children's), which is ∂S/∂u' - Q = M u' - F in O(n), without
M. Where every child joint turns about its point with a constant axis (codegen.formulation.tree's
velocity product c), the total acceleration A + a0 is carried outward instead, as
Pinocchio's RNEA carries it, gravity as the root's (0; -g): no body's u'-free
acceleration is then formed from the formulation's expressions. Without a tree
(run-time constraints, recursive=False, a model that is no tree) there is no
program: the runtime forms M u' - F from the model's M and F.

The tree's inputs (one CSE over s, W, h, R, r, Q) and its transports are those
of the forward recursion (codegen.algorithms.aba), so both passes fold the same
structural zeros.
"""
from __future__ import annotations

import sympy as sm
from sympy.core.function import AppliedUndef

from ..programs.program import Input, Program, live_temporaries
from ..programs.schedule import depth_first
from ..symbolic.expressions import vanishes
# the forward recursion's inputs and transports, shared
from .tree_passes import carried_acceleration, planar, transported, tree_inputs

__all__ = ["inverse_program", "newton_euler", "joint_torques"]


def inverse_program(eom, with_qd: bool = False) -> Program | None:
    """Output tau (nu) = M ud - F for the input array ud (nu), by the Newton–Euler passes
    over eom.tree, and with_qd q' first (qd, for the Jacobian's derivatives of both,
    codegen.algorithms.jacobian); None without a tree (the runtime then forms M ud - F from the
    model's M and F, cg_inverse_dynamics)."""
    if eom.tree is None or eom.constraints is not None:
        return None
    return _newton_euler(eom, with_qd)


def _newton_euler(eom, with_qd) -> Program:
    # the Jacobian's (with_qd) split but not carried: its derivative program has fewer
    # operations and definitions split (the iiwa's: 7,572 operations against 8,341)
    nodes = eom.tree.nodes
    carry = not with_qd and eom.tree.carried
    prog, define, qd, S, W, h, Q, T = tree_inputs(eom, split=True, carry=carry, grouped=carry)
    ud = [sm.Dummy(f"ud{j}") for j in range(eom.nu)]
    for j, s in enumerate(ud):
        define.names[s] = f"cg_ud{j}"
        define.used.add(f"cg_ud{j}")
    r_names = {i.name for i in prog.inputs if i.array == "r"}
    r = [o for o, n in define.names.items() if n in r_names]
    elsewhere = [e for m in W + S for e in m] + list(Q) + [e for _, e in define.temps]
    h, direct = joint_torques(nodes, S, h, elsewhere, r)
    tau = newton_euler(nodes, S, W, h, Q, T, define, ud, carried=carry)
    for j, e in direct.items():
        tau[j] += e
    outputs = ([("qd", list(qd))] if with_qd else []) + [("tau", tau)]
    # operands by their register need (Sethi–Ullman): with the grouped inertias, HyQ's
    # 11 %, the iiwa's 5 % faster than depth first as written, Solo12's the same; the
    # Jacobian's (with_qd) is differentiated, not run, and keeps its order
    temps = depth_first(live_temporaries(define.temps, outputs), outputs, ershov=not with_qd)
    used = set()
    for e in [e for _, e in temps] + [e for _, exprs in outputs for e in exprs]:
        used |= e.free_symbols | e.atoms(sm.Derivative, AppliedUndef)
    read = {define.names[o] for o in used if o in define.names}
    inputs = [i for i in prog.inputs if i.name in read]       # q' alone needs the others
    inputs += [Input(f"cg_ud{j}", "ud", j, f"ud[{j}]") for j, s in enumerate(ud) if s in used]
    return Program(inputs=inputs, names=define.names, temporaries=temps, outputs=outputs)


def joint_torques(nodes, S, h, elsewhere, r) -> tuple:
    """(h, direct): a joint's torque pair taken out of the bodies' biases and given to its
    joint's tau directly. An input of r that is a pure moment b_child = beta r (on the
    child's rows) and, on its parent's, -R^T beta r (R the child's rotation from it: the
    same moment in the parent's frame), read nowhere else (elsewhere: expressions), adds
    nothing to the parent's wrench once carried in, so nothing to any tau but the child's
    joint's, s^T beta r; nor does a moment on a root alone (its reaction on the ground).
    elsewhere: a flat list of expressions.
    Left in, it is a subtraction on the child and an addition on the parent, both on the
    inward pass's chain of latencies (the UR5's inverse dynamics: 958 -> 933 instructions,
    73.2 -> 71.9 ns a call, means of three runs). direct: {speed: s^T beta r}. The
    cancellation is checked at two generic points (vanishes)."""
    b = [[sm.sympify(e) for e in (hk[1] if isinstance(hk, tuple) else hk)] for hk in h]
    inputs, seen = set(r), set()
    for e in elsewhere + [e for hk in h if isinstance(hk, tuple) for e in hk[0]]:
        e = sm.sympify(e)
        seen |= (e.free_symbols | e.atoms(AppliedUndef)) & inputs
    direct = {}
    for x in r:
        readers = [k for k, bk in enumerate(b) if any(e.has(x) for e in bk)]
        k = readers[-1] if readers else None
        parent = nodes[k].parent if k is not None else -1
        if x in seen or k is None or readers[:-1] not in ([], [parent]):
            continue
        beta = [sm.diff(e, x) for e in b[k]]
        back = [sm.diff(e, x) for e in b[parent]] if parent >= 0 else []
        if not all(c.is_number for c in beta + back) or _linear(nodes[k], beta) or (
                back and _linear(nodes[parent], back)):
            continue
        if parent >= 0:
            moment = sm.zeros(3, 1)
            for row, c in zip(nodes[k].rows, beta):
                if row < 3:
                    moment[row] = c
            moved = sm.Matrix(nodes[k].R).T * moment
            for row, c in zip(nodes[parent].rows, back):
                if row < 3:
                    moved[row] += c
            if not vanishes([moved[row] for row in nodes[parent].rows if row < 3]):
                continue
        for n in readers:
            b[n] = [e.xreplace({x: sm.S.Zero}) for e in b[n]]
        for j, e in zip(nodes[k].speeds, S[k].T * sm.Matrix(beta)):
            direct[j] = direct.get(j, 0) + e * x
    if not direct:
        return h, direct
    return [(hk[0], b[k]) if isinstance(hk, tuple) else b[k] for k, hk in enumerate(h)], direct


def _linear(node, values) -> bool:
    """Whether any of values (on node's rows) is on a linear row (3-5): a force."""
    return any(c != 0 for row, c in zip(node.rows, values) if row >= 3)


def newton_euler(nodes, S, W, h, Q, T, define, ud, carried=False) -> list:
    """tau = M ud - F by the outward and inward passes over the tree's nodes (its
    subspaces S, inertias W, biases h, forces Q and transports T, codegen.algorithms.tree_passes'
    tree_inputs), each new quantity named through define; ud: symbols, or zeros for
    -F (codegen.algorithms.crba). h[k]: the bias wrench, or the pair (a0, b) of h = W a0 + b
    (tree_inputs' split): then f = W (A + a0) + b, one product by W. carried
    (tree_inputs' carry): the total acceleration A + a0 carried outward on all six
    rows (_total_accelerations), W on the node's rows and all six columns."""
    if carried:
        return inward(nodes, S, Q, T, define, _total_accelerations(nodes, S, W, h, T, define, ud))
    # outward: the accelerations linear in u', and each body's wrench
    A, f = [None] * len(nodes), [None] * len(nodes)
    for k, nd in enumerate(nodes):
        Ak = transported(k, nd, T, A) + S[k] * sm.Matrix([ud[j] for j in nd.speeds])
        A[k] = Ak = sm.Matrix([define(f"ia{k}_{i}", v) for i, v in enumerate(Ak)])
        if isinstance(h[k], tuple):
            a0, b = h[k]
            # named: a number times a sum would be distributed, W's products repeated
            total = sm.Matrix([define(f"it{k}_{i}", v + e) for i, (v, e) in enumerate(zip(Ak, a0))])
            f[k] = W[k] * total + sm.Matrix(b)
        else:
            f[k] = W[k] * Ak + sm.Matrix(h[k])
    return inward(nodes, S, Q, T, define, f)


def _total_accelerations(nodes, S, W, h, T, define, ud) -> list:
    """Each body's wrench f = W a + b from its total acceleration a (on all six rows),
    carried outward as Pinocchio's RNEA carries it: a root's a = a0x + s u', a child's

        a = X (a_parent + (0; e)) + (c_ω; 0) + s u'

    (h[k] = (a0x or c = (c_ω; e), b), codegen.equations.tree.TreeNode): the u'-free acceleration is
    not formed from the formulation's expressions body by body, and gravity, the root's
    (0; -g), rides along in X."""
    a, f = [None] * len(nodes), [None] * len(nodes)
    for k, nd in enumerate(nodes):
        c, b = h[k]
        own = S[k] * sm.Matrix([ud[j] for j in nd.speeds])
        ak = carried_acceleration(k, nd, c, a[nd.parent] if nd.parent >= 0 else None, T, define)
        for i, row in enumerate(nd.rows):
            ak[row] += own[i]
        a[k] = sm.Matrix([define(f"ia{k}_{i}", v) for i, v in enumerate(ak)])
        f[k] = W[k] * a[k] + sm.Matrix(b)
    return f


def inward(nodes, S, Q, T, define, f) -> list:
    """Tips to root: each joint's share of its wrench f[k] (with its children's), the
    wrench then carried to the parent."""
    tau = [None] * len(Q)
    for k in reversed(range(len(nodes))):
        nd = nodes[k]
        fk = sm.Matrix([define(f"if{k}_{i}", v) for i, v in enumerate(f[k])])
        for j, v in zip(nd.speeds, S[k].T * fk):
            tau[j] = v - Q[j]
        if nd.parent >= 0:
            carried = T[k].matrix().T * fk if planar(nd) else T[k].transposed(list(fk))
            f[nd.parent] += carried
    return tau
