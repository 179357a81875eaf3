"""Tree-structured systems: the bodies of a formed model as a tree of joints.

When every body's motion is its parent's, carried rigidly, plus speeds of
its own (a chain or tree of joints), M u' = F can be solved in O(n) by the
articulated-body recursion (codegen.algorithms.aba). This module finds the tree:
each body's partial velocities Γ_b (rows ω, v), spatial inertia W_b and
inertial bias wrench h_b (W times the u'-free acceleration, plus ω × Iω),
in its own components (a rigid body's frame, the Newtonian frame for a
particle), and the transport X_b = [[R, 0], [-R r×, R]] from its parent's.
A particle's reference point is itself; a rigid body's is its joint point
(``_at_joint``), where a spherical joint or a hinge about a body axis moves
only angular rows and the transport from the parent is a rotation and a
constant offset.

Detection (``tree_of``) is exact in structure and checked numerically in
value: the transport Γ_b = X_b Γ_parent on the parent's speeds is tested at
two generic points, on the bodies' velocities V_b - s_b u_b = X_b V_parent
(six numbers a body, so that detection stays O(n)) and on Γ's columns where
that fails (``_carried``); anything else (a body moved
by two branches, bodies with the same speeds, a speed no body has, a single
body) returns None and the dense solve is used.
"""
from __future__ import annotations

import numpy as np
import sympy as sm
from sympy.core.function import AppliedUndef

from ..equations.tree import Tree, TreeNode
from .chain_rule import generalized_forces
from .grouping import group_inertias
from .motions import dyadic_components, is_rigid
from ..progress import checkpoint
from ..symbolic.expressions import VANISH_TOL, as_number, generic_values, vanishes
from ..symbolic.spatial import skew, spatial_transform
from ..symbolic.vec3 import add, cross, cross_kept, matvec, matvec_kept

__all__ = ["tree_of", "tree_of_bodies"]


def tree_of(bodies: list, Q: list, nspeeds: int, transport, numeric=generic_values,
            why: list | None = None, omegas: list | None = None,
            speeds: list | None = None, velocities: list | None = None,
            loads: list | None = None) -> Tree | None:
    """The tree of bodies [(G, W, h)] or [(G, W, h, (a0, b))] or None.

    G: 6 x nspeeds partial velocities (rows ω, v), W: 6 x 6 spatial inertia,
    h: 6 bias wrench, each body in its own components (optionally split as
    h = W a0 + b, a0 its u'-free acceleration); transport(k, parent):
    (R, r), the rotation from the parent's components to body k's and the offset of
    k's reference point from the parent's in the parent's, so that (ω; v)_k =
    X (ω; v)_parent with X = [[R, 0], [-R r×, R]] for a rigid connection; numeric:
    see codegen.symbolic.expressions.vanishes; why: a list that gets the reason when the answer is None;
    omegas (each body's angular velocity in its components, None for a particle) and
    speeds (the speeds' symbols): with the split, each child's velocity product c
    (TreeNode, _velocity_product); velocities (with speeds: each body's velocity (ω; v),
    whose derivatives over the speeds are G, in its components, no auxiliary speeds):
    the transport checked on them, O(1) per body (_carried); loads (with omegas: each
    body's loads at its reference point, the part of b that is no inertia's): the
    grouped inertias (codegen.formulation.grouping)."""
    def no(reason):
        if why is not None:
            why.append(reason)
        return None
    live_rows, nz = zip(*[_structure(G) for G, *_ in bodies]) if bodies else ((), ())
    live = sorted((k for k in range(len(bodies)) if nz[k]), key=lambda k: len(nz[k]))
    by_set = {}
    for k in live:
        if nz[k] in by_set:
            return no("two bodies move with the same speeds (not one joint each)")
        by_set[nz[k]] = k
    owned, parent = {}, {}
    for k in live:
        below = [c for c in live if nz[c] < nz[k]]
        if not below:
            parent[k] = -1
        else:
            pk = max(below, key=lambda c: len(nz[c]))
            if any(not nz[c] <= nz[pk] for c in below):
                return no("a body moves with the speeds of two branches (a closed loop, "
                          "or speeds shared between branches)")
            parent[k] = pk
        owned[k] = sorted(nz[k] - (nz[parent[k]] if parent[k] != -1 else frozenset()))
    if sorted(j for k in live for j in owned[k]) != list(range(nspeeds)):
        return no("a speed moves no body (a massless last link)")
    if len(live) < 2:
        return no("one moving body (the dense solve is the same work)")
    rows = {k: live_rows[k] for k in live}
    index, nodes = {}, []
    for k in live:                          # sorted by |nz|: parents come first
        checkpoint()
        G, W, h = bodies[k][:3]
        a0, b = _split_on(rows[k], W, *bodies[k][3]) if len(bodies[k]) > 3 else (None, None)
        own = owned[k]
        pk = parent[k]
        c = None
        if pk != -1:
            R, r = transport(k, pk)
            if not _carried(G, bodies[pk][0], sorted(nz[pk]), R, r, numeric,
                            None if velocities is None else (velocities[k], velocities[pk],
                                                             [speeds[j] for j in own], own)):
                return no("a body does not carry its parent's motion rigidly")
            if a0 is not None and omegas is not None and speeds is not None:
                c = _velocity_product(R, r, G, own, speeds, omegas[k], omegas[pk],
                                      _all_rows(bodies[k]), _all_rows(bodies[pk]), numeric)
        index[k] = len(nodes)
        nodes.append(TreeNode(speeds=own, parent=index[pk] if pk != -1 else -1, rows=rows[k],
                              s=[[G[i][j] for j in own] for i in rows[k]],
                              W=[[W[i][c] for c in rows[k]] for i in rows[k]],
                              h=[h[i] for i in rows[k]],
                              R=None if pk == -1 else [list(row) for row in R.tolist()],
                              r=None if pk == -1 else list(r), a0=a0, b=b,
                              a0x=None if a0 is None else _all_rows(bodies[k]), c=c,
                              Wx=[list(W[i]) for i in rows[k]],
                              bx=None if a0 is None else [bodies[k][3][1][i] for i in rows[k]]))
    if loads is not None and omegas is not None:
        group_inertias(nodes, [bodies[k][1] for k in live], [omegas[k] for k in live],
                       [loads[k] for k in live])
    return Tree(nodes=nodes, Q=list(Q))


def _nonzero_entry(e) -> bool:
    """e is not zero by structure (the identity test first: most entries are S.Zero)."""
    return e is not sm.S.Zero and e != 0


def _structure(G) -> tuple:
    """(rows, columns) of G that hold a nonzero entry."""
    cols = [[j for j, e in enumerate(row) if _nonzero_entry(e)] for row in G]
    return [i for i, c in enumerate(cols) if c], frozenset(j for c in cols for j in c)


def _all_rows(body) -> list:
    """A split body's a0 on all six rows, the uniform field's (0; g) added."""
    a0, _, g = body[3][:3]
    return list(a0[:3]) + add(a0[3:], g)


def _velocity_product(R, r, G, own, speeds, omega, omega_p, a0, a0_p, numeric):
    """(c_ω; e) with a0 = X (a0_p + (0; e)) + (c_ω; 0), X = [[R, 0], [-R r×, R]], or
    None: for a joint that turns about its point (r constant in the parent, s constant in
    the child, no linear rows), c_ω = ω × (s_ω u) and e = ω_p × (ω_p × r), the
    derivative of ω = R ω_p + s_ω u and of the offset's R (ω_p × r), as Pinocchio's RNEA
    forms them. Checked at two generic points (numeric) instead of assumed."""
    if omega is None or omega_p is None:
        return None
    rel = [sm.Add(*[G[i][j] * speeds[j] for j in own]) for i in range(3)]
    c = cross(omega, rel) + cross(omega_p, cross_kept(omega_p, r))
    shifted = sm.Matrix(a0_p[:3] + add(a0_p[3:], c[3:]))
    carried = spatial_transform(R, r) * shifted
    if not vanishes([a0[i] - carried[i] - (c[i] if i < 3 else 0) for i in range(6)],
                    numeric, relative=True):
        return None
    return c


def _split_on(rows, W, a0, b, g=(0, 0, 0)):
    """(a0, b) of h = W a0 + b restricted to rows, a0 with the uniform field g's
    acceleration (0; g) added: W's columns off the rows (where A, linear in u', is
    zero but a0 need not be) folded into b."""
    a0 = a0[:3] + add(a0[3:], g)
    off = [c for c in range(6) if c not in rows and a0[c] != 0]
    return [a0[i] for i in rows], [b[i] + sm.Add(*[W[i][c] * a0[c] for c in off])
                                   for i in rows]


def _carried(G, Gp, cols, R, r, numeric, moving=None) -> bool:
    """G = X Gp on the columns cols (the parent's speeds), X = [[R, 0], [-R r×, R]], at
    two generic points (numeric: see codegen.symbolic.expressions.vanishes), in floats.

    moving: (V, Vp, own speeds' symbols, their columns), the body's and its parent's
    velocities (ω; v), G and Gp their derivatives over the speeds. Then first
    V - s u_own = X Vp at the two points, whose speeds are generic too: linear in the
    speeds, that difference is zero only if each speed's coefficient is, the columns'
    G = X Gp with them; six numbers a body where the columns are O(n) (at n = 400
    links, 6 s of forming). Where it fails (a joint moving on its own, in time: a
    velocity free of the speeds that the transport does not carry, which the recursion
    allows), the columns are checked."""
    R = R.tolist() if isinstance(R, sm.MatrixBase) else R
    head = [sm.sympify(e) for e in [e for row in R for e in row] + list(r)]
    if moving is not None:
        V, Vp, u, own = moving
        rest = [sm.Add(V[i], *[-G[i][j] * s for j, s in zip(own, u)]) for i in range(6)]
        if _transported(head + list(Vp) + rest, 1, numeric):
            return True
    return _transported(head + [Gp[i][j] for j in cols for i in range(6)]
                        + [G[i][j] for j in cols for i in range(6)], len(cols), numeric)


def _transported(exprs, m, numeric) -> bool:
    """exprs = R (9), r (3), then m columns of the parent's (6 each), then m of the
    child's: each child's column X times the parent's, X = [[R, 0], [-R r×, R]], at two
    generic points; to rounding relative to the terms' sizes."""
    for point in (0, 1):
        values = [as_number(v) for v in numeric(exprs, point)]
        if None in values:
            return False
        v = np.array(values)
        Rn, rn = v[:9].reshape(3, 3), v[9:12]
        Gpn = v[12:12 + 6 * m].reshape(m, 6).T
        Gn = v[12 + 6 * m:].reshape(m, 6).T
        rx = np.array([[0, -rn[2], rn[1]], [rn[2], 0, -rn[0]], [-rn[1], rn[0], 0]])
        X = np.zeros((6, 6), dtype=complex)
        X[:3, :3] = X[3:, 3:] = Rn
        X[3:, :3] = -Rn @ rx
        scale = 1.0 + np.abs(Gn) + np.abs(X) @ np.abs(Gpn)
        if not np.all(np.abs(Gn - X @ Gpn) <= VANISH_TOL * scale):     # nan: not carried
            return False
    return True


def tree_of_bodies(motions, bodies: list, loads: list, why: list | None = None) -> Tree | None:
    """The bodies of a formed model as a tree, or None.

    Each body's partial velocities, spatial inertia and inertial bias
    wrench, formed at its mass centre (a particle: its point) and moved to its
    joint point (_at_joint), in the body's own frame (a particle: the
    Newtonian frame), so that a rigid body's inertia stays constant; None if
    a mass centre has no velocity or
    position the kinematics can reach, or if the bodies form no tree.
    A load on a body's mass centre or frame (gravity, a joint's torque pair)
    is taken off the body's bias wrench, so that it costs O(1) and not a
    dot product with every partial velocity; the other loads make Q.
    motions: the formulation's codegen.formulation.motions.Motions; why: see tree_of."""
    kin = motions.kin
    p = len(kin.speeds)
    data, places, omegas = [], [], []
    try:
        for body in bodies:
            P = body.masscenter
            X = body.frame if is_rigid(body) else motions.particle_frame(P)
            v = motions.point(P, X)
            m = kin.to_plain(body.mass, f"the mass of {body}")
            G = [[sm.S.Zero] * p for _ in range(3)] + [[v.partials[j][i] for j in range(p)]
                                                       for i in range(3)]
            W = [[sm.S.Zero] * 6 for _ in range(6)]
            for i in range(3, 6):
                W[i][i] = m
            h = [sm.S.Zero] * 3 + [m * c for c in v.rate0]
            a0, b = [sm.S.Zero] * 3 + list(v.rate0), [sm.S.Zero] * 6
            omega = None
            if is_rigid(body):
                w = motions.frame(body.frame, X)
                I = [[kin.to_plain(c, f"the inertia of {body}") for c in row]
                     for row in dyadic_components(body.central_inertia, X)]
                for i in range(3):
                    G[i] = [w.partials[j][i] for j in range(p)]
                    W[i][:3] = I[i]
                # b: the loads alone until _at_joint adds ω × Iω where the body is taken
                h[:3] = add(matvec(I, w.rate0), cross(w.value, matvec(I, w.value)))
                a0[:3], omega = w.rate0, w.value
            data.append((G, W, h, (a0, b, [sm.S.Zero] * 3)))
            omegas.append(omega)
            places.append((P, X))
        Q = generalized_forces(motions, _applied(motions, bodies, places, data, loads), p)
    except ValueError:          # a mass centre the kinematics cannot reach
        if why is not None:
            why.append("a mass centre's velocity is out of the kinematics' reach")
        return None
    loads = [list(datum[3][1]) for datum in data]       # each body's, at its reference point
    for k, body in enumerate(bodies):
        if is_rigid(body):
            data[k], places[k], loads[k] = _at_joint(motions, body, data[k], places[k], omegas[k])
    # each body's (ω; v) at its reference point, for the transport's check (tree_of);
    # the values carry no auxiliary speed, their partials would
    velocities = None if len(kin.uas) else [
        list(omega or (sm.S.Zero,) * 3) + list(motions.point(P, X).value)
        for omega, (P, X) in zip(omegas, places)]

    def transport(k, parent):
        """(R, r): v_k = R (v_p + ω_p × r), ω_k = R ω_p, each in its own frame."""
        (Pk, Xk), (Pp, Xp) = places[k], places[parent]
        return motions.rotation(Xk, Xp), motions.components(_position(Pk, Pp), Xp)

    try:
        return tree_of(data, Q, p, transport, motions.numeric, why, omegas, kin.speeds,
                       velocities, loads)
    except ValueError as exc:
        if why is not None:
            why.append(str(exc))
        return None


def _position(P, O):
    """P.pos_from(O), read directly where it is stored between them (a link's point from
    its parent's): SymPy's pos_from lists every path through the points first, O(n) a
    call on a chain (at n = 400 links, 2.6 s of forming)."""
    stored = P._pos_dict.get(O)
    return P.pos_from(O) if stored is None else stored


def _fixed_points(body) -> list:
    """[(O, d)]: the points joined to the mass centre C by positions fixed in the body's
    frame (every part of each set_pos in that frame, free of coordinates), d = C - O in
    its components; breadth first, by name, C first."""
    B, C = body.frame, body.masscenter
    found, queue = {C: (sm.S.Zero,) * 3}, [C]
    for Q in queue:
        for P in sorted(Q._pos_dict, key=lambda o: o.name):
            r = P._pos_dict[Q]                      # P from Q
            if P in found or any(F != B or any(sm.sympify(c).has(AppliedUndef, sm.Derivative)
                                               for c in comps) for comps, F in r.args):
                continue
            rc = [sum((comps[i] for comps, _ in r.args), sm.S.Zero) for i in range(3)]
            found[P] = tuple(a - b for a, b in zip(found[Q], rc))
            queue.append(P)
    return [(P, list(found[P])) for P in queue]


def _at_joint(motions, body, datum, place, omega):
    """A rigid body's (G, W, h) and place moved from its mass centre C to the point O
    fixed in it whose velocity has the fewest speeds (the joint of a revolute or
    spherical joint: there its own speeds have no linear rows, and the transport from
    its parent's joint is a constant offset). With d = C - O and A_C = T A_O,
    T = [[1, 0], [-d×, 1]]:

        G_O = (ω partials; v_O partials),  W_O = Tᵀ W_C T = [[I - m d×d×, m d×], [-m d×, m]],
        h_O = Tᵀ h_C = (h_ω + d × h_v; h_v)

    The velocities are checked: v_C = v_O - d × ω at two generic points (a stored velocity
    that is not its position's derivative keeps C). The split h = W a0 + b moves with it:
    a0_C = T a0_O + (0; ω × (ω × d)) (ω: the body's angular velocity), so
    a0_O = (α0; a0 of O) and, with b_C = (ω × I ω; 0) + the loads' b_L,
    b_O = Tᵀ b_C + Tᵀ (0; m ω × (ω × d)) = (ω × I_O ω; m ω × (ω × d)) + Tᵀ b_L
    (I_O = I - m d×d×, the inertia about O: one product by it, not two)."""
    G, W, h, (a0, b, g) = datum
    X = place[1]
    p = len(G[0])
    best, count = None, len(_structure(G[3:])[1])
    for O, d in _fixed_points(body)[1:]:
        try:
            v = motions.point(O, X)
        except ValueError:
            continue
        n = sum(any(_nonzero_entry(c) for c in v.partials[j]) for j in range(p))
        if n < count:
            best, count = (O, [motions.kin.to_plain(c, f"the position of {body.masscenter}")
                               for c in d], v), n
    if best is None:
        return _gyroscopic(datum, omega), place, list(b)
    O, d, v = best
    check = []
    for j in range(p):
        shifted = add(v.partials[j], [-e for e in cross(d, [G[i][j] for i in range(3)])])
        check += [G[3 + i][j] - shifted[i] for i in range(3)]
    if not vanishes(check, motions.numeric):
        return _gyroscopic(datum, omega), place, list(b)
    m = W[3][3]
    dx = skew(d)
    top = sm.Matrix(3, 3, lambda i, c: W[i][c]) - m * dx * dx
    G = G[:3] + [[v.partials[j][i] for j in range(p)] for i in range(3)]
    W = [[top[i, c] for c in range(3)] + [m * dx[i, c] for c in range(3)] for i in range(3)] \
        + [[-m * dx[i, c] for c in range(3)] + [m if c == i else sm.S.Zero for c in range(3)]
           for i in range(3)]
    h = add(h[:3], cross(d, h[3:])) + h[3:]
    gyro = cross(omega, matvec_kept(top.tolist(), omega))
    loads = add(b[:3], cross(d, b[3:])) + list(b[3:])
    bv = add(loads[3:], cross(omega, cross_kept(omega, [m * c for c in d])))     # m d: numbers
    return (G, W, h, (a0[:3] + list(v.rate0), add(gyro, loads[:3]) + bv, g)), (O, X), loads


def _gyroscopic(datum, omega):
    """datum with ω × I ω added to its split's b (taken at the mass centre)."""
    G, W, h, (a0, b, g) = datum
    I = [row[:3] for row in W[:3]]
    return G, W, h, (a0, add(b[:3], cross(omega, matvec(I, omega))) + b[3:], g)


def _applied(motions, bodies, places, data, loads) -> list:
    """Subtract the loads on a body's mass centre or frame from its bias wrench (data's h,
    in place); returns the other loads."""
    centres, frames = {}, {}
    for k, body in enumerate(bodies):
        centres.setdefault(body.masscenter, k)
        if is_rigid(body) and places[k][1] == body.frame:
            frames.setdefault(body.frame, k)
    uniform = _field(motions, centres, data, loads)
    rest = []
    for n, (where, vec) in enumerate(loads):
        k = centres.get(where) if where in centres else frames.get(where)
        if k is None:
            rest.append((where, vec))
            continue
        X, h, (_, b, g) = places[k][1], data[k][2], data[k][3]
        rows = range(3, 6) if where in centres else range(3)
        for i, c in zip(rows, motions.components(vec, X)):
            h[i] -= c
        if uniform is not None and n in uniform[1]:
            # m g on the mass centre is W (0; g) at any point of the body: in a0, not b
            g[:] = add(g, [-c for c in motions.components(uniform[0], X)])
        else:
            for i, c in zip(rows, motions.components(vec, X)):
                b[i] -= c
    return rest


def _field(motions, centres, data, loads):
    """(g, indices): a uniform field, the same constant vector g (in the Newtonian frame)
    times each body's mass, as the loads (their indices) on two or more mass centres;
    or None."""
    N = motions.N
    found, g = set(), None
    for n, (where, vec) in enumerate(loads):
        k = centres.get(where)
        if k is None:
            continue
        m = sm.sympify(data[k][1][3][3])
        if m == 0:
            continue
        comps = [sm.sympify(c) / m for c in motions.components(vec, N)]
        if any(c.has(AppliedUndef, sm.Derivative) or c.free_symbols & m.free_symbols
               for c in comps):
            continue
        if g is None:
            g = comps
        elif not all(_same(a, c) for a, c in zip(g, comps)):
            return None
        found.add(n)
    if len(found) < 2:
        return None
    return N.x * g[0] + N.y * g[1] + N.z * g[2], found


def _same(a, c) -> bool:
    """a = c, exactly or as numbers to rounding (each mass divided out of its m g)."""
    d, size = as_number(a - c), as_number(c)
    if d is None or size is None:
        return d == 0 or sm.simplify(a - c) == 0
    return abs(d) <= 1e-12 * (1 + abs(size))
