"""The Newton–Euler residual's derivatives over q and u in the frame of each tree's root.

Carpentier and Mansard ("Analytical Derivatives of Rigid Body Dynamics
Algorithms", RSS 2018), as Pinocchio's computeRNEADerivatives forms them: in a
frame that no joint of the tree turns, the subtree of a joint j turns rigidly with
q_j about its axis S_j, so the derivative over q_j of whatever the subtree carries
(axes, inertias, the loads fixed in a body) is a cross product with S_j, and only
the parent's velocity and acceleration, which do not turn, need a correction.
With, per body in the root's frame, v, a (gravity included), the momentum Y v, the
inertia's rate Ẏ = v×* Y - Y v× and f = Y a + v×* Y v + l, and over each subtree
the sums Yc, Ẏc, Hc = Σ Y v and Fc = Σ f:

    dVdq_j = v_λ × S_j,  dAdq_j = a_λ × S_j + v_λ × dVdq_j,  dAdv_j = 2 dVdq_j
    YS_i = Yc_i S_i,  G_i = Ẏc_i S_i - S_i ×* Hc_i
    i in subtree(j): dτ_i/dq_j = ⟨G_i, dVdq_j⟩ + ⟨YS_i, dAdq_j⟩,
                     dτ_i/du_j = ⟨G_i, S_j⟩ + ⟨YS_i, dAdv_j⟩
    i above j:       dτ_i/dq_j = ⟨S_i, S_j ×* Fc_j + Ẏc_j dVdq_j + dVdq_j ×* Hc_j + Yc_j dAdq_j⟩
                     dτ_i/du_j = ⟨S_i, Ẏc_j S_j + S_j ×* Hc_j + Yc_j dAdv_j⟩

(λ: j's parent; a root's q turns nothing in its own frame). Each pair of joints
then costs a few dot products of 6-vectors formed once per joint, where forward
mode in the bodies' own frames carries each direction through every body below.

What is not the rigid bodies' part is differentiated by forward mode (the caller's
tangents, codegen.algorithms.jacobian): q', the generalized forces Q, a root's u'-free
acceleration (gravity and its velocity products, in its frame), and the loads (the
bias less its part quadratic in u, _loads) over r, over u (a joint's damping) and over
q where one is not fixed in its body.

It applies where every child node is a one-speed joint whose inertia is constant in
its body and whose axis s, rotation R and offset r from its parent depend on its own
coordinate alone, with q' = u for it; a root may have any speeds whose axes are
constant in it (a free-flyer's six). An axis that turns with its own coordinate (the
pendulum on a cart's particles on absolute angles; S' = ∂S_j/∂q_j, S'' its
derivative, in the root's frame, where a rigid joint has S × S = 0) changes only
joint j's own terms:

    dVdq_j = v_λ × S_j + S'_j u_j  (= Ṡ_j),
    dAdq_j = a_λ × S_j + v_λ × dVdq_j + S'_j u'_j + v_λ × S'_j u_j + S''_j u_j²,
    dτ_j/dq_j += ⟨S'_j, Fc_j⟩

(dAdv_j = 2 dVdq_j still). Gravity that a root's rows do not carry (the cart moves
along x alone, the links' particles in the plane) is lifted to the root's
acceleration from its children's acceleration at rest (_lifts). The residual it forms is then checked against
the tree's Newton–Euler one (codegen.algorithms.rnea) at two generic points; where they
differ (a load not affine in u; a body whose gravity is a load rather than the root's
carried acceleration, as in the Panda's merged hand with symbolic numbers) it returns
None, and forward mode over the Newton–Euler program is used. Its programs are a half to
two thirds of forward mode's (docs/design.md gives the figures).
"""
from __future__ import annotations

import sympy as sm
from sympy.core.function import AppliedUndef

from ..symbolic.forward_mode import forward
from ..symbolic.spatial import add6, fcross, mcross
from ..symbolic.spatial_inertia import SpatialInertia, full6, rigid_parameters
from .rnea_derivatives_solve import agrees_with_newton_euler, paths, residual_vanishes, solve_ud
from ..programs.program import dependency_order, live_temporaries
from .tree_passes import tree_inputs
from ..symbolic.vec3 import add, cross, dot, matvec

__all__ = ["rnea_derivatives"]

def _reason(eom) -> str | None:
    """Why the tree does not fit the rigid-joint derivatives (structure only), or None."""
    tree = eom.tree
    if tree is None or eom.constraints is not None:
        return "no tree"
    if any(nd.a0x is None or nd.a0 is None for nd in tree.nodes):
        return "a body whose u'-free acceleration is not split off"
    consts = set(eom.constants)
    coordinate = _coordinates(eom)

    def over(values, allowed):
        for e in values:
            e = sm.sympify(e)
            if not e.free_symbols <= allowed or e.atoms(AppliedUndef):
                return False
        return True
    for nd in tree.nodes:
        if not over([e for row in nd.Wx for e in row], consts):
            return "an inertia that is not constant in its body"
        if rigid_parameters(nd.rows, nd.Wx) is None:
            return "an inertia that is not a rigid body's"
        if nd.parent < 0:               # a root, of any speeds: its frame is the reference
            if not over([e for row in nd.s for e in row], consts):
                return "a root's axis that is not constant in it"
            continue
        if len(nd.speeds) != 1 or nd.speeds[0] not in coordinate:
            return "a joint of several speeds, or of a speed that is no coordinate's rate"
        # the axis may turn with its own coordinate (a particle on its link, absolute angles)
        if not over([e for row in nd.s for e in row] + [e for row in nd.R for e in row]
                    + list(nd.r), consts | {coordinate[nd.speeds[0]]}):
            return "a joint whose axis or transport depends on more than its own coordinate"
    return None


def _coordinates(eom) -> dict:
    """speed index -> the coordinate whose rate it is (q' = u exactly)."""
    out = {}
    for i, e in enumerate(eom.qdot):
        for j, u in enumerate(eom.u):
            if sm.sympify(e) == u:
                out[j] = eom.q[i]
    return out


def _loads(temporaries, exprs, speeds):
    """exprs (the bodies' biases) less their parts quadratic in the speeds (the rigid
    bodies' v×* W v, and the classical acceleration's products): each one's value and
    first derivatives at rest, through the temporaries, as value + Σ u_j ∂/∂u_j. That
    is the loads where they are affine in the speeds (a joint's damping); agrees_with_newton_euler
    checks it."""
    seeds = {u: {j: sm.S.One} for j, u in enumerate(speeds)}
    point = {u: sm.S.Zero for u in speeds}
    memo = {}
    for s, e in temporaries:
        if e.free_symbols & seeds.keys():
            (value, grad), = forward([e], seeds, point, memo)
            point[s] = value
            if grad:
                seeds[s] = grad
    out = []
    for e in exprs:
        (value, grad), = forward([sm.sympify(e)], seeds, point, memo)
        out.append(value + sm.Add(*[speeds[j] * d for j, d in sorted(grad.items())]))
    return out


def root_acceleration(a0x, v) -> list:
    """A root's u'-free spatial acceleration in its own frame from the tree's a0x, whose
    linear part is its reference point's (the classical acceleration, codegen.formulation.tree):
    less ω × v (v = (ω; v) the root's velocity)."""
    return list(a0x[:3]) + [x - y for x, y in zip(a0x[3:], cross(v[:3], v[3:]))]


class _World:
    """Each body's pose, axes, velocity and acceleration in its root's frame, every
    quantity named once: E turns the body's components into the root's, p is its
    reference point, S[k] the columns of its joint's axes."""

    def __init__(self, nodes, S, h, T, ud, u, define, turn, lift, split=False):
        self.define, self.u, self.ud = define, u, ud
        n = len(nodes)
        self.E, self.p, self.S, self.v, self.a, self.dV = ([None] * n for _ in range(6))
        # split (u' solved by the caller, solve_ud): the acceleration at u' = 0 (a0) and
        # u''s share (A) apart, a = a0 + A
        self.a0, self.A = ([None] * n for _ in range(2)) if split else (None, None)
        self.Sp, self.Spp = [None] * n, [None] * n      # a joint's axis turning with its q
        for k, nd in enumerate(nodes):
            if nd.parent < 0:
                E = [[sm.S.One if a == b else sm.S.Zero for b in range(3)] for a in range(3)]
                p = [sm.S.Zero] * 3
            else:
                Ep, pp, R = self.E[nd.parent], self.p[nd.parent], T[k].R
                E = [[define(f"wE{k}_{a}{b}", sm.Add(*[Ep[a][c] * R[b, c] for c in range(3)]))
                      for b in range(3)] for a in range(3)]
                p = [define(f"wp{k}_{a}", e) for a, e in enumerate(add(pp, matvec(Ep, T[k].r)))]
            self.E[k], self.p[k] = E, p
            self.S[k] = [self.named(f"wS{k}_{c}_", self.motion(k, full6(nd.rows, list(S[k][:, c]))))
                         for c in range(len(nd.speeds))]
            own = [sm.Add(*[col[i] * u[j] for col, j in zip(self.S[k], nd.speeds)])
                   for i in range(6)]
            if nd.parent < 0:       # the root's velocity products are in its a0x
                v, a = own, add6(root_acceleration(h[k][0], own), lift[k])
            else:
                # Ṡ = v_λ × S + S' u (S' = ∂S/∂q of its own q, turn's): the joint's dV
                # (_analytic's), and the acceleration's velocity product Ṡ u
                vp, j = self.v[nd.parent], nd.speeds[0]
                dV = mcross(vp, self.S[k][0])
                if turn[k] is not None:
                    self.Sp[k] = self.named(f"wSp{k}_", self.motion(k, turn[k][0]))
                    self.Spp[k] = self.named(f"wSpp{k}_", add6(
                        mcross(self.S[k][0], self.Sp[k]), self.motion(k, turn[k][1])))
                    dV = add6(dV, [e * u[j] for e in self.Sp[k]])
                self.dV[k] = self.named(f"wdV{k}_", dV)
                v = add6(vp, own)
                a = add6((self.a0 if split else self.a)[nd.parent],
                          [e * u[j] for e in self.dV[k]])
            self.v[k] = self.named(f"wv{k}_", v)
            own_ud = [sm.Add(*[col[i] * ud[j] for col, j in zip(self.S[k], nd.speeds)])
                      for i in range(6)]
            if split:
                if nd.parent >= 0:
                    own_ud = add6(self.A[nd.parent], own_ud)
                self.a0[k] = self.named(f"wa0{k}_", a)
                self.A[k] = self.named(f"wA{k}_", own_ud)
                a, own_ud = self.a0[k], self.A[k]
            self.a[k] = self.named(f"wa{k}_", add6(a, own_ud))

    def named(self, label, vec):
        return [self.define(f"{label}{i}", e) for i, e in enumerate(vec)]

    def motion(self, k, m):
        """A motion in body k's components at its reference point, in the root's."""
        E, p = self.E[k], self.p[k]
        w, v = matvec(E, m[:3]), matvec(E, m[3:])
        return w + add(v, cross(p, w))

    def force(self, k, f):
        """A force in body k's components at its reference point, in the root's."""
        E, p = self.E[k], self.p[k]
        n, g = matvec(E, f[:3]), matvec(E, f[3:])
        return add(n, cross(p, g)) + g


def rnea_derivatives(eom, tangents, solve: bool = False):
    """(ud, temporaries, dtau, ddq, count, factor): the derivatives of tau = M u' - F over the
    states and inputs of a tree whose joints fit (see the module), or None. tangents
    (over q, u, r in that order, codegen.algorithms.jacobian's): its definitions take the
    forward-mode parts. temporaries: (symbol, expr) of the values; dtau[i][k] =
    dtau_i/dx_k, ddq[i][k] the same of q'; count: the definitions formed here. ud: the
    symbols of u', inputs cg_ud<j>; with solve, temporaries (cg_ud<j>) of the program,
    u' solved from the quantities the derivatives form anyway (solve_ud), so that the
    Jacobian needs no call of the right-hand side first (False where that solve fails
    its check, residual_vanishes), and factor (order, ldl_factor's factors: solve_ud's), else
    None."""
    if _reason(eom) is not None:
        return None
    nq, nu, nr = eom.nq, eom.nu, len(eom.specifieds)
    nodes = eom.tree.nodes
    prog, define, qd, S, W, h, Q, T = tree_inputs(eom, split=True, carry=True)
    first = len(define.temps)
    u = list(eom.u)
    ud = [sm.Dummy(f"ud{j}") for j in range(nu)]
    for j, s in enumerate(ud):
        define.names[s] = f"cg_ud{j}"
        define.used.add(f"cg_ud{j}")        # an input, or with solve a temporary
    # the loads: the bias less the rigid body's (_loads; a load not affine in u is left
    # to forward mode over the whole program by agrees_with_newton_euler)
    loads = _loads(prog.temporaries, [e for k in range(len(nodes)) for e in h[k][1]], u)
    coordinate = _coordinates(eom)
    world = _World(nodes, S, h, T, ud, u, define, _turns(eom, coordinate), _lifts(eom),
                   split=solve)
    it = iter(loads)
    load_b = [[next(it) for _ in nd.rows] for nd in nodes]
    children = {k: [] for k in range(len(nodes))}
    for k, nd in enumerate(nodes):
        if nd.parent >= 0:
            children[nd.parent].append(k)
    Yc, Ydc, Hc, Fc, Fc0 = _composites(nodes, world, load_b, children, define)
    tau = [None] * nu
    for k, nd in enumerate(nodes):
        for col, j in zip(world.S[k], nd.speeds):
            tau[j] = dot(col, Fc[k]) - Q[j]
    if not agrees_with_newton_euler(eom, define, tau, ud):
        return None
    YS = {(k, c): world.named(f"wYS{k}_{c}_", Yc[k](Sk))
          for k in range(len(nodes)) for c, Sk in enumerate(world.S[k])}
    factor = None
    if solve:
        solved = solve_ud(nodes, world, YS, Fc0, Q, define)
        if solved is None:
            return False
        solved, factor = solved
        define.temps = dependency_order(define.temps + list(zip(ud, solved)))
        if not residual_vanishes(define, tau):
            return False
    nd_ = len(eom.q) + nu + nr
    dtau = [[sm.S.Zero] * nd_ for _ in range(nu)]
    index = {c: i for i, c in enumerate(eom.q)}     # a speed's column: its coordinate's
    _analytic(nodes, world, YS, Ydc, Hc, Fc, Yc, {j: index[c] for j, c in coordinate.items()},
              nq, dtau)
    # forward mode: each root's u'-free acceleration, Q, q' and the loads over r
    roots = [k for k, nd in enumerate(nodes) if nd.parent < 0]
    seeds = [e for k in roots for e in h[k][0]] + list(Q) + list(qd) + loads
    for symbol, expr in live_temporaries(define.temps[:first], [("seeds", seeds)]):
        tangents.define(symbol, expr)
    subtree = {k: [k] for k in range(len(nodes))}
    for k in reversed(range(len(nodes))):
        if nodes[k].parent >= 0:
            subtree[nodes[k].parent] += subtree[k]
    for k in roots:
        own = [sm.Add(*[col[i] * u[j] for col, j in zip(world.S[k], nodes[k].speeds)])
               for i in range(6)]
        grads = [tangents.of(e) for e in root_acceleration(h[k][0], own)]
        for i in subtree[k]:
            for c, j in enumerate(nodes[i].speeds):
                for x, g in enumerate(grads):
                    for d, e in g.items():
                        dtau[j][d] += YS[i, c][x] * e
    for j, e in enumerate(Q):
        for d, g in tangents.of(e).items():
            dtau[j][d] -= g
    # the loads' own derivatives (over r, and over q where a load is not fixed in its
    # body), by forward mode in the body's frame, then in the root's
    Lr = [None] * len(nodes)
    for k in reversed(range(len(nodes))):
        nd = nodes[k]
        grads = [tangents.of(e) for e in load_b[k]]
        acc = {d: world.force(k, full6(nd.rows, [g.get(d, sm.S.Zero) for g in grads]))
               for d in sorted({d for g in grads for d in g})}
        for c in children[k]:
            for d, vec in Lr[c].items():
                acc[d] = add6(acc.get(d, [sm.S.Zero] * 6), vec)
        Lr[k] = {d: world.named(f"wL{k}_{d}_", vec) for d, vec in sorted(acc.items())}
        for d, vec in Lr[k].items():
            for col, j in zip(world.S[k], nd.speeds):
                dtau[j][d] += dot(col, vec)
    ddq = [[tangents.of(e).get(d, sm.S.Zero) for d in range(nd_)] for e in qd]
    return ud, define.temps, dtau, ddq, len(define.temps) - first, factor


def _turns(eom, coordinate) -> list:
    """Per node, None, or its axis' first and second derivatives over its own coordinate
    (6-vectors in its components), where the axis turns with it; coordinate: _coordinates'."""
    out = []
    for nd in eom.tree.nodes:
        axis = [e for row in nd.s for e in row]
        q = coordinate.get(nd.speeds[0]) if nd.parent >= 0 else None
        if q is None or all(sm.diff(e, q) == 0 for e in axis):
            out.append(None)
            continue
        first = [sm.diff(e, q) for e in axis]
        out.append((full6(nd.rows, first), full6(nd.rows, [sm.diff(e, q) for e in first])))
    return out


def _lifts(eom) -> dict:
    """root -> the spatial acceleration added to its a0x: gravity where the root's rows do
    not carry it (a cart under a pendulum) and a child whose rest acceleration (a0x at
    u = 0) is constant in the root's axes (numeric R) does; zero otherwise. agrees_with_newton_euler
    checks that it is every body's."""
    nodes, out = eom.tree.nodes, {}
    rest = {u: sm.S.Zero for u in eom.u}
    for k, nd in enumerate(nodes):
        if nd.parent >= 0:
            continue
        out[k] = [sm.S.Zero] * 6
        if any(sm.sympify(e).subs(rest) != 0 for e in nd.a0x):
            continue
        for c in nodes:
            if c.parent != k or not all(sm.sympify(e).is_number for row in c.R for e in row):
                continue
            g = [sm.sympify(e).subs(rest) for e in c.a0x]
            if any(e.free_symbols & set(eom.q) for e in g) or any(e != 0 for e in g[:3]):
                continue
            R = sm.Matrix(c.R)          # child components = R (parent's): back by Rᵀ
            out[k] = [sm.S.Zero] * 3 + list(R.T * sm.Matrix(g[3:]))
            break
    return out


def _composites(nodes, world, load_b, children, define):
    """Over each subtree, in the root's frame: the inertia Yc, its rate Ẏc, the
    momentum Hc and the wrench Fc (W a + v×* W v + the loads); with the world's split
    (_World), also the wrench at u' = 0, Fc0 (else None), and Fc = Fc0 + the sum of the
    bodies' W A."""
    n = len(nodes)
    Yc, Ydc, Hc, Fc = ([None] * n for _ in range(4))
    split = world.a0 is not None
    Fc0, FcA = [None] * n, [None] * n
    for k in reversed(range(n)):
        nd = nodes[k]
        m, hb, Ib = rigid_parameters(nd.rows, nd.Wx)
        E, p = world.E[k], world.p[k]
        h0 = add(matvec(E, hb), [m * e for e in p])
        EI = [[dot(E[a], [Ib[c][b] for c in range(3)]) for b in range(3)] for a in range(3)]
        ph, pp = dot(p, h0), dot(p, p)
        # I about the root's origin: E I Eᵀ - (h× p× + p× h×) + m p× p×
        I0 = [[dot(EI[a], E[b]) - (p[a] * h0[b] + h0[a] * p[b]) + (2 * ph if a == b else 0)
               + m * (p[a] * p[b] - (pp if a == b else 0)) for b in range(3)] for a in range(3)]
        Y = SpatialInertia(m, h0, I0).named(f"wY{k}", define)
        vk = world.v[k]
        w, lin = vk[:3], vk[3:]
        mom = world.named(f"wH{k}_", Y(vk))
        # Ẏ = v×* Y - Y v×: h' = ω × h + m v, the momentum's linear part (named once,
        # Ẏc's h is then Hc's, so that G = Ẏc S - S ×* Hc loses its terms
        # ω_S × h' - ω_S × Hc, which cancel),
        # I' = ω× I - I ω× + 2 (h·v) 1 - v hᵀ - h vᵀ
        wI = [cross(w, [Y.I[0][b], Y.I[1][b], Y.I[2][b]]) for b in range(3)]
        hv = dot(Y.h, lin)
        Idot = [[wI[b][a] + wI[a][b] + (2 * hv if a == b else 0) - lin[a] * Y.h[b]
                 - Y.h[a] * lin[b] for b in range(3)] for a in range(3)]
        Yd = SpatialInertia(sm.S.Zero, mom[3:], Idot).named(f"wYd{k}", define)
        f = add6(Y(world.a0[k] if split else world.a[k]), fcross(vk, mom),
                  world.force(k, full6(nd.rows, load_b[k])))
        fA = Y(world.A[k]) if split else None
        for c in children[k]:
            Y, Yd = Y + Yc[c], Yd + Ydc[c]
            mom = add6(mom, Hc[c])
            if split:
                f, fA = add6(f, Fc0[c]), add6(fA, FcA[c])
            else:
                f = add6(f, Fc[c])
        Yc[k], Ydc[k] = Y.named(f"wYc{k}", define), Yd.named(f"wYdc{k}", define)
        Hc[k] = world.named(f"wHc{k}_", mom)
        if split:
            Fc0[k], FcA[k] = world.named(f"wFc0{k}_", f), world.named(f"wFA{k}_", fA)
            f = add6(Fc0[k], FcA[k])
        Fc[k] = world.named(f"wFc{k}_", f)
    return Yc, Ydc, Hc, Fc, (Fc0 if split else None)


def _analytic(nodes, world, YS, Ydc, Hc, Fc, Yc, column, nq, dtau) -> None:
    """dtau over q and u from the rigid bodies (the module's formulas), added to dtau;
    YS: (node, column) -> Yc S."""
    G, dV, dA, dAv, dFq, dFv = {}, {}, {}, {}, {}, {}
    for k, nd in enumerate(nodes):
        vp = world.v[k] if nd.parent < 0 else world.v[nd.parent]
        for c, Sk in enumerate(world.S[k]):
            YdS = world.named(f"wYdS{k}_{c}_", Ydc[k](Sk))          # G's and dFv's
            SxH = world.named(f"wSH{k}_{c}_", fcross(Sk, Hc[k]))
            G[k, c] = world.named(f"wG{k}_{c}_", [x - y for x, y in zip(YdS, SxH)])
            if nd.parent < 0:
                # a root's own velocity product is in its a0x: v × S where a joint has 2 v_λ × S
                dV[k, c] = dA[k, c] = None
                dAv[k, c] = world.named(f"wdAv{k}_{c}_", mcross(vp, Sk))
                continue
            ap = world.a[nd.parent]
            dV[k, c] = world.dV[k]
            extra = []
            if world.Sp[k] is not None:     # the axis turning with its own q: ∂(S u' + Ṡ u)
                j, Sp = nd.speeds[0], world.Sp[k]
                u, ud = world.u[j], world.ud[j]
                extra = [[e * ud for e in Sp], [e * u for e in mcross(vp, Sp)],
                         [e * u * u for e in world.Spp[k]]]
            dA[k, c] = world.named(f"wdA{k}_", add6(mcross(ap, Sk), mcross(vp, dV[k, c]),
                                                     *extra))
            dFq[k] = world.named(f"wFq{k}_", add6(fcross(Sk, Fc[k]), Ydc[k](dV[k, c]),
                                                    fcross(dV[k, c], Hc[k]), Yc[k](dA[k, c])))
            # dAdv = 2 dV, named once: each pair's ⟨YS, dAdv⟩ then takes no doubling
            dAv[k, c] = world.named(f"wdAv{k}_{c}_", [2 * e for e in dV[k, c]])
            dFv[k] = world.named(f"wFv{k}_", add6(YdS, SxH, Yc[k](dAv[k, c])))
    path = paths(nodes)
    for k, nd in enumerate(nodes):
        if world.Sp[k] is not None:         # ⟨∂S/∂q, Fc⟩ of its own q (S × S elsewhere)
            j = nd.speeds[0]
            dtau[j][column[j]] += dot(world.Sp[k], Fc[k])
        for c, j in enumerate(nd.speeds):
            for i in path[k]:
                # row j (k in the subtree of i), columns of i's q and u
                for e, r in enumerate(nodes[i].speeds):
                    if dV[i, e] is not None:
                        dtau[j][column[r]] += dot(G[k, c], dV[i, e]) + dot(YS[k, c], dA[i, e])
                    dtau[j][nq + r] += dot(G[k, c], world.S[i][e]) + dot(YS[k, c],
                                                                             dAv[i, e])
                    if i != k:      # row r (i above k), columns of k's q and u
                        dtau[r][column[j]] += dot(world.S[i][e], dFq[k])
                        dtau[r][nq + j] += dot(world.S[i][e], dFv[k])


