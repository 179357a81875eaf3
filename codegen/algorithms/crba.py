"""The mass matrix of a tree of bodies as a program: the composite-rigid-body algorithm.

Over a tree (codegen.formulation.tree), M = sum_b G_bᵀ W_b G_b with each body's partial
velocities carried from its parent's, G_b = X_b G_parent + s_b (on its own
speeds). Gathering the inertias from the tips in,

    I^c_b = W_b + sum_c X_cᵀ I^c_c X_c          (the composite inertia of b's subtree)

each joint's block row follows by walking its force up to the root:

    f = I^c_b s_b,   M[b, b] = s_bᵀ f,   then for each ancestor a (f carried, f <- X_jᵀ f
    from the body j below a):   M[b, a] = fᵀ s_a

(Featherstone, Rigid Body Dynamics Algorithms, 6.2). Entries between
bodies of different branches are zero by structure and never written, so
the packed triangle shows the tree's sparsity to the unrolled solve
(codegen.algorithms.ldlt). The program is O(n · depth) operations and, above all,
cheap to form: the symbolic M of the formulation (n² cells, each a SymPy
expression, then their CSE) is never built for a tree, where it dominated
the build of large models.

The tree's inputs (one CSE over s, W, h, R, r, Q, with q') and transports
are those of the forward recursion (codegen.algorithms.aba); F = -tau(u' = 0) by
the Newton–Euler passes of codegen.algorithms.rnea, in the same program. The mass
matrix alone (``mass_matrix``, as a robot's crba) is a program of its own,
the same definitions without F's passes and q'.
"""
from __future__ import annotations

import sympy as sm

from sympy.core.function import AppliedUndef

from ..programs.program import Input, Program, dependents, live_temporaries
from ..programs.schedule import fewer_reloads
from ..progress import checkpoint
# the forward recursion's inputs and transports, shared
from .tree_passes import planar, skew_vector, transported, tree_inputs
from ..symbolic.spatial import skew
from .rnea import newton_euler

__all__ = ["composite_programs", "eval_program", "mass_columns_program", "mass_entries",
           "MASS_LOOP_ENTRIES", "NODES_NAMED"]

#: the statements whose names give more nodes than their own (cg_<kind><node>_<rest>):
#: (kind, components of rest) -> the components that are nodes. Node k's column carried up
#: to its ancestor is cf<k>_<up>_<i>_<a>, through node t's transport cT<k>_<up>_<a>_<t>_<i>_<j>
#: (composite_mass, _carried_up); mirrored limbs map them through the partner nodes
#: (codegen.algorithms.lanes)
NODES_NAMED = {("cf", 3): (0,), ("cT", 5): (0, 2)}

#: above this many structurally nonzero entries in M's lower triangle, a tree's mass
#: function is the column loop (mass_columns_program) instead of the straight-line
#: composite-rigid-body program: its n² statements would be most of the build (the
#: 200-link pendulum's: 21,700 of 33,400 statements, two thirds of its compiling), for a
#: mass_matrix that is rarely on a hot path (the recursion solves the right-hand side)
MASS_LOOP_ENTRIES = 1000

#: the composite eval program (M and F) is reordered for the registers where that reloads
#: at most this fraction (codegen.programs.schedule.fewer_reloads): HyQ's, 0.47 of the
#: reloads, ran its right-hand side 11 % faster reordered, the UR5's, 0.85, 4 % slower
EVAL_REORDER_BELOW = 0.75

#: M alone takes the grouped inertias (codegen.formulation.grouping) where they save at
#: least this fraction of its operations (HyQ's 4 %, the UR5's 10 %, the iiwa's 13 %, each
#: faster); less is within what the registers' order does (Atlas's 0.5 % ran 9 % slower)
GROUPED_MASS_SAVES = 0.02


def mass_entries(nodes) -> int:
    """The structurally nonzero entries of a tree's M in its lower triangle: each
    speed with itself, the speeds of its own joint and those of its ancestors'."""
    before = []
    for nd in nodes:
        before.append(len(nd.speeds) + (before[nd.parent] if nd.parent >= 0 else 0))
    return sum(len(nd.speeds) * (b - len(nd.speeds)) + len(nd.speeds) * (len(nd.speeds) + 1) // 2
               for nd, b in zip(nodes, before))


def composite_programs(eom) -> dict | None:
    """The programs of a tree model's values, from one set of definitions: "eval",
    the right-hand side's (outputs qd (q'), M (packed lower triangle, by the
    composite-rigid-body algorithm) and F (minus the Newton–Euler passes at u' = 0,
    codegen.algorithms.rnea: fewer operations than the formulation's F on every tree measured,
    2 % on the pendulums, a third on Atlas)), "mass", M alone, and "forces", q' and F
    alone (with "mass", 1 to 9 % more operations than "eval": the kinematics both
    need, counted twice); None without a tree or with run-time constraints (then M and
    F are the formulation's). Above MASS_LOOP_ENTRIES entries of M, "mass" is the column
    loop (mass_columns_program) and "eval" None: M's straight-line program is not formed."""
    if eom.tree is None or eom.constraints is not None:
        return None
    nodes = eom.tree.nodes
    carry = eom.tree.carried
    prog, define, qd, S, Wx, h, Q, T = tree_inputs(eom, split=carry, carry=carry, grouped=carry)
    # carried: F by the inverse dynamics' passes over the grouped inertias, M over their rows
    W = [w.extract(list(range(len(nd.rows))), nd.rows) for w, nd in zip(Wx, nodes)] \
        if carry else Wx
    F = [-e for e in newton_euler(nodes, S, Wx, h, Q, T, define, [0] * eom.nu, carried=carry)]
    if mass_entries(nodes) > MASS_LOOP_ENTRIES:
        return {"eval": None, "mass": mass_columns_program(eom),
                "forces": _program(prog.inputs, define, [("qd", qd), ("F", F)])}
    mass = composite_mass(nodes, S, W, T, define, eom.nu)
    programs = {kind: _program(prog.inputs, define, outputs) for kind, outputs in (
        ("eval", [("qd", qd), ("M", mass), ("F", F)]), ("forces", [("qd", qd), ("F", F)]))}
    # M alone over the inputs without the biases (eval's own where it has none), the
    # grouped inertias' where that saves GROUPED_MASS_SAVES of the operations
    own = _mass_program(eom, False) if carry else \
        fewer_reloads(_program(prog.inputs, define, [("M", mass)]))
    grouped = _mass_program(eom, True) if any(nd.Wg is not None for nd in nodes) else own
    programs["mass"] = grouped if grouped.operation_count \
        <= (1 - GROUPED_MASS_SAVES) * own.operation_count else own
    # M and F reordered only where that spills far less (EVAL_REORDER_BELOW)
    for kind in ("eval", "forces"):
        programs[kind] = fewer_reloads(programs[kind], EVAL_REORDER_BELOW)
    return programs


def eval_program(eom) -> Program | None:
    """composite_programs' "eval" (None where it gives none)."""
    programs = composite_programs(eom)
    return None if programs is None else programs["eval"]


def _program(inputs, define, outputs) -> Program:
    """The program of outputs over define's temporaries: those they need, and of the
    inputs those read (the mass matrix reads no speed; an unread input would be a C
    compiler warning)."""
    temps = live_temporaries(define.temps, outputs)
    used = set()
    for e in [e for _, e in temps] + [e for _, exprs in outputs for e in exprs]:
        used |= e.free_symbols | e.atoms(sm.Derivative, AppliedUndef)
    read = {define.names[o] for o in used if o in define.names}
    return Program(inputs=[i for i in inputs if i.name in read], names=define.names,
                   temporaries=temps, outputs=outputs)


def mass_columns_program(eom) -> Program | None:
    """M's packed lower triangle column by column, for a loop over the columns in C
    (codegen.emit.column_loops): the composite inertias Ic_b and the forces f_b = Ic_b s_b once, then
    for the unit vector e_c (input array "E") the accelerations a_b = X_b a_parent +
    s_b e_c outward and M[i, c] = f_bᵀ a_b (i a speed of body b), the descendants' rows
    of column c; the emitted loop keeps the rows i >= c. O(n) statements, O(n²)
    operations per call (a chain: about 7 n² against the straight-line program's 1.5 n²).
    Needs each body's speeds after its ancestors' (then a row i >= c is never an
    ancestor's); None otherwise, without a tree or with run-time constraints."""
    if eom.tree is None or eom.constraints is not None:
        return None
    return _mass_columns(eom, *_mass_inputs(eom, False))


def _mass_program(eom, grouped) -> Program:
    """M alone, reordered where that spills less (HyQ's four legs, 954 -> 839
    instructions)."""
    prog, define, S, W, T = _mass_inputs(eom, grouped)
    mass = composite_mass(eom.tree.nodes, S, W, T, define, eom.nu)
    return fewer_reloads(_program(prog.inputs, define, [("M", mass)]))


def _mass_inputs(eom, grouped):
    """(program, define, S, W, T) of tree_inputs(eom) for M alone; grouped: a grouped node's
    inertia its grouped rows (numbers: codegen.formulation.grouping groups numeric inertias
    only; M is the same)."""
    prog, define, _, S, W, _, _, T = tree_inputs(eom)
    W = [w if nd.Wg is None or not grouped else
         sm.Matrix([[row[c] for c in nd.rows] for row in nd.Wg]) for w, nd in zip(W, eom.tree.nodes)]
    return prog, define, S, W, T


def _mass_columns(eom, prog, define, S, W, T) -> Program | None:
    """mass_columns_program over the tree's inputs (codegen.algorithms.tree_passes.tree_inputs)."""
    nodes = eom.tree.nodes
    if any(nd.parent >= 0 and min(nd.speeds) < max(nodes[nd.parent].speeds) for nd in nodes):
        return None
    Ic = composite_inertias(nodes, W, T, define)
    f = [[[define(f"cf{k}_{i}_{a}", v) for i, v in enumerate(Ic[k] * S[k][:, a])]
          for a in range(len(nd.speeds))] for k, nd in enumerate(nodes)]
    once = len(define.temps)
    e = [sm.Dummy(f"e{j}") for j in range(eom.nu)]
    for j, s in enumerate(e):
        define.names[s] = f"cg_e{j}"
        define.used.add(f"cg_e{j}")
    A, column = [None] * len(nodes), [None] * eom.nu
    for k, nd in enumerate(nodes):
        checkpoint()
        Ak = transported(k, nd, T, A) + S[k] * sm.Matrix([e[j] for j in nd.speeds])
        A[k] = sm.Matrix([define(f"ca{k}_{i}", v) for i, v in enumerate(Ak)])
        for a, j in enumerate(nd.speeds):
            column[j] = _dot(list(zip(f[k][a], A[k])))
    # the transports' temporaries free of e, defined on first use inside the outward
    # pass, go before the loop with the rest (an order that keeps every use after its
    # definition: a temporary free of e reads none of e's)
    later = define.temps[once:]
    loop = dependents(later, set(e))
    define.temps[once:] = [t for t in later if t[0] not in loop] + [t for t in later
                                                                    if t[0] in loop]
    program = _program(prog.inputs, define, [("M", column)])
    used = set().union(*(x.free_symbols for x in [x for _, x in program.temporaries] + column))
    program.inputs += [Input(f"cg_e{j}", "E", j, f"e[{j}]") for j, s in enumerate(e) if s in used]
    return program


def composite_inertias(nodes, W, T, define) -> list:
    """Each body's composite inertia Ic_b (its subtree's, on its rows), from the tips in,
    its upper triangle named through define."""
    Ic = list(W)
    for k in reversed(range(len(nodes))):            # children come after their parents
        checkpoint()
        nd, m = nodes[k], len(nodes[k].rows)
        coupling = _skew_block(Ic[k], m, define, f"Ic{k}_")
        upper = {(i, c): coupling[i, c] if (i, c) in coupling else
                 define(f"Ic{k}_{i}_{c}", Ic[k][i, c]) for i in range(m) for c in range(i, m)}
        Ic[k] = sm.Matrix(m, m, lambda i, c: upper[min(i, c), max(i, c)])
        if nd.parent >= 0:
            if planar(nd):
                X = T[k].matrix()
                Ic[nd.parent] += Ic[k] if X.is_Identity else X.T * Ic[k] * X
            else:
                Ic[nd.parent] += T[k].congruence(Ic[k])
    return Ic


def _skew_block(I, m, define, label) -> dict:
    """A rigid body's coupling block h× (rows 0-2 x 3-5 of a 6-row inertia) kept skew
    through the naming, so that the transport's congruence finds it so: {(i, c): entry}
    of the upper triangle, its three distinct entries named once (label h0, h1, h2); {}
    where it is not skew by structure."""
    v = skew_vector(I[:3, 3:]) if m == 6 else None
    if v is None:
        return {}
    h = skew(sm.Matrix([define(f"{label}h{i}", e) for i, e in enumerate(v)]))
    return {(i, c): h[i, c - 3] for i in range(3) for c in range(3, 6)}


def composite_mass(nodes, S, W, T, define, nu) -> list:
    """M's packed lower triangle (row by row) from the tree's motion subspaces S,
    inertias W and transports T, each new quantity named through define."""
    Ic = composite_inertias(nodes, W, T, define)
    M = {}
    for k, nd in enumerate(nodes):
        checkpoint()
        f = Ic[k] * S[k]               # the joint's force, one column per speed
        f = [[define(f"cf{k}_{i}_{a}", f[i, a]) for a in range(f.cols)] for i in range(f.rows)]
        below, up = k, k
        while up >= 0:
            if up != k:
                f = _carried_up(nodes[below], T[below], f, define, f"cf{k}_{up}_",
                                f"cT{k}_{up}_")
            s_up = S[up]
            for a, j in enumerate(nd.speeds):
                for b, i in enumerate(nodes[up].speeds):
                    if i <= j or up != k:
                        M[max(i, j), min(i, j)] = _dot([(f[r][a], s_up[r, b])
                                                        for r in range(len(f))])
            below, up = up, nodes[up].parent
    return [sm.sympify(M.get((i, j), 0)) for i in range(nu) for j in range(i + 1)]


def _carried_up(nd, transport, f, define, label, inner) -> list:
    """Xᵀ f on the parent's rows (f: rows of nd x columns, lists), named (label; inner:
    the transport's own temporaries). Planar links in plain loops over X's nonzeros (an
    identity X, as between a chain's particles, leaves f as it is)."""
    if planar(nd):
        X = transport.matrix()
        if X.is_Identity:
            return f
        cols = [[_dot([(X[r, c], f[r][a]) for r in range(X.rows)]) for c in range(X.cols)]
                for a in range(len(f[0]))]
    else:
        cols = [list(transport.transposed([row[a] for row in f], f"{inner}{a}_"))
                for a in range(len(f[0]))]
    return [[define(f"{label}{i}_{a}", cols[a][i]) for a in range(len(cols))]
            for i in range(len(cols[0]))]


def _dot(pairs):
    """Σ a b, zeros and ones folded, built unevaluated: SymPy's flattening of each of
    the n² entries would cost more than the rest of the program."""
    terms = []
    for a, b in pairs:
        if (a.is_Number and a.is_zero) or (b.is_Number and b.is_zero):
            continue
        one_a, one_b = a.is_Number and a == 1, b.is_Number and b == 1
        terms.append(b if one_a else a if one_b else sm.Mul(a, b, evaluate=False))
    if not terms:
        return sm.S.Zero
    return terms[0] if len(terms) == 1 else sm.Add(*terms, evaluate=False)
