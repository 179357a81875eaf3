"""The Gibbs–Appell formulation: S, mass matrix and forcing over all speeds.

For each body with reference point O (velocity v, partial velocities
gamma_j = dv/du_j), angular velocity omega (partial angular velocities
beta_j), inertia I about O and mass-centre offset rho from O, Greenwood's
Gibbs–Appell function (4.292) is

    S = 1/2 m v'.v' + 1/2 w'.I.w' + (w x I w).w' + m v'.rho''
    rho'' = w' x rho + w x (w x rho)

and, because the accelerations are linear in the quasi-accelerations u',
v' = sum_j gamma_j u'_j + a0, w' = sum_j beta_j u'_j + alpha0, its
derivatives follow by the chain rule (4.294)-(4.297):

    M_jk = d2S/du'_j du'_k = m gamma_j.gamma_k + beta_j.I.beta_k
                             + m gamma_j.(beta_k x rho) + m gamma_k.(beta_j x rho)
    dS/du'_j at u' = 0     = m (a0 + rho0'').gamma_j
                             + [I alpha0 + w x I w + m rho x a0].beta_j
    F_j = Q_j - dS/du'_j at u' = 0,       Q_j = sum of loads . partial velocities.

Here j runs over every speed the velocities are written in: independent,
dependent and auxiliary (codegen.formulation.constraints projects onto the independent
ones). Auxiliary speeds are set to zero after their partial velocities are
taken. Differentiating an expanded S twice gives the same M and F but costs
more than the whole Kane derivation, so S is built only when asked for
(GibbsAppellMethod.gibbs_appell_function, by codegen.formulation.public_matrices).

Every vector is taken in components in one frame per body (the frame of
its inertia dyadic, else its own frame; for a particle the frame its
velocity is written in, else the Newtonian frame), so dot products are
plain sums and v' in that frame X is d(components)/dt + omega_X x v.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sm
from sympy.physics.mechanics import Particle, RigidBody
from sympy.physics.vector import Point, ReferenceFrame, Vector, dynamicsymbols

from ..flexible.body import FlexibleBody
from ..flexible.share import Share, flexible_share
from .kinematics import Kinematics
from .motions import Motions, body_frame, dyadic_components, is_rigid
from ..symbolic.simplify import pythagoras, tidy
from ..progress import checkpoint
from .relative import NotRelative, RelativeMotions
from .shared_sums import SharedSums
from ..symbolic.expressions import LazyMatrix, vanishes
from ..symbolic.vec3 import add, cross, dot, matvec, nonzero

__all__ = ["GibbsAppell", "form", "check_bodies", "check_loads", "generalized_forces",
           "collected_scalar", "varying_inertia_loads"]


def check_bodies(bodies) -> list:
    """The bodies, each a Particle, a RigidBody with a symmetric inertia dyadic or a
    FlexibleBody (codegen.flexible)."""
    for b in bodies:
        if isinstance(b, FlexibleBody):
            continue
        if not isinstance(b, (Particle, RigidBody)):
            raise TypeError(f"body {b!r} is neither a Particle, a RigidBody nor a FlexibleBody")
        if is_rigid(b):
            Imat = sm.Matrix(dyadic_components(b.central_inertia, body_frame(b, None)))
            diff = [Imat[i, j] - Imat[j, i] for i in range(3) for j in range(i)]
            if not vanishes(diff, relative=True) and sm.simplify(Imat - Imat.T) != sm.zeros(3, 3):
                raise ValueError(f"inertia dyadic of {b} is not symmetric: {Imat}")
    return list(bodies)


def check_loads(loads) -> list:
    """The (Point or ReferenceFrame, Vector) pairs, zero loads dropped (ValueError otherwise,
    as KanesMethod raises)."""
    out = []
    for load in loads:
        if not (isinstance(load, tuple) and len(load) == 2):
            raise ValueError(f"load {load!r} is not a (Point or ReferenceFrame, Vector) pair")
        where, vec = load
        if not isinstance(where, (Point, ReferenceFrame)):
            raise TypeError(f"load {load!r} acts on {where!r}, which is neither "
                            f"a Point nor a ReferenceFrame")
        if vec == 0:
            continue
        if not isinstance(vec, Vector):
            raise TypeError(f"load on {where} is {vec!r}, not a Vector")
        out.append((where, vec))
    return out


def varying_inertia_loads(bodies, N: ReferenceFrame) -> list:
    """KanesMethod's terms of a mass or inertia that varies in time, as loads: the
    force -m' v on the mass centre and the torque -(dI/dt in the body's frame) . w
    (its inertial force is m' v + m a, its inertial torque adds I' . w). Neither is
    part of S; a body of constant mass and inertia gives none."""
    t = dynamicsymbols._t
    out = []
    for b in bodies:
        if isinstance(b, FlexibleBody):       # its mass and invariants are constants
            continue
        mdot = sm.sympify(b.mass).diff(t)
        if mdot != 0:
            out.append((b.masscenter, -mdot * b.masscenter.vel(N)))
        if is_rigid(b):
            Idot = b.central_inertia.dt(b.frame)
            if Idot != 0:
                torque = -(Idot & b.frame.ang_vel_in(N))
                if torque != 0:
                    out.append((b.frame, torque))
    return out


@dataclass
class GibbsAppell:
    """M, F and Q over ``Kinematics.speeds`` (auxiliary speeds zero), on plain symbols."""
    M: LazyMatrix           # d2S/du'2, symmetric, formed on first use
    F: sm.Matrix            # Q - R
    Q: sm.Matrix            # generalized active forces
    R: sm.Matrix            # dS/du' at u' = 0 (Kane's generalized inertia forces, negated, at u' = 0)
    terms: list             # per body: its kinematic data
    motions: Motions        # the velocities, for the tree of codegen.algorithms.aba
    intermediates: list     # codegen.formulation.constraints.Intermediate the above are written over


def _has_velocity(P: Point, N: ReferenceFrame) -> bool:
    try:
        P.vel(N)
    except ValueError:
        return False
    return True


def _offset(fm: Motions, body, ref: Point, X: ReferenceFrame):
    """The mass centre C from the inertia's reference point O, in components of X, where
    the body's motion may be taken at O: O has a velocity, C - O is fixed in X, and C's
    stored velocity (if it has one) is v_O + w x (C - O), with no stored acceleration of
    its own (KanesMethod reads C's). Else None: the formulation then reads C, as
    KanesMethod does."""
    N, C = fm.N, body.masscenter
    if not _has_velocity(ref, N) or N in C._acc_dict:
        return None
    rho = fm.components(C.pos_from(ref), X)
    moving = set(fm.kin.qs) | set(fm.kin.speeds) | {dynamicsymbols._t}
    if any(sm.sympify(c).free_symbols & moving or sm.sympify(c).has(sm.Function)
           for c in rho):
        return None
    if not _has_velocity(C, N):
        return rho
    vO, vC = fm.velocity_value(ref, X), fm.velocity_value(C, X)
    w = fm.velocity_value(body.frame, X)
    return rho if vanishes([a - b for a, b in zip(add(vO, cross(w, rho)), vC)],
                           fm.numeric) else None


def _body_terms(fm: Motions, body):
    """Per-body kinematic data: mass, inertia matrix, motions, offset."""
    X = fm.body_frame(body)
    name = getattr(body, 'name', str(body))
    kin = fm.kin
    m = kin.to_plain(body.mass, f"the mass of {name}")
    if not is_rigid(body):
        v = fm.point(body.masscenter, X)
        return dict(m=m, v=v, w=None, I=None, rho=None, X=X)
    dyadic, ref = body.inertia
    rho = None
    if ref != body.masscenter:
        rho = _offset(fm, body, ref, X)
        if rho is None:       # KanesMethod's reading: the mass centre, the central inertia
            ref, dyadic = body.masscenter, body.central_inertia
    v = fm.point(ref, X)
    w = fm.frame(body.frame, X)
    I = [[kin.to_plain(c, f"the inertia of {name}") for c in row]
         for row in dyadic_components(dyadic, X)]
    if rho is not None and all(c == 0 for c in rho):
        rho = None
    return dict(m=m, v=v, w=w, I=I, rho=rho, X=X)


def _add_body(b, sums: SharedSums) -> None:
    """One body's node in the shared sums (codegen.formulation.shared_sums): a key per speed it moves
    with, (j, γ_j, β_j), and its coefficients [m, m a, I, h, m ρ] (a: the u'-free
    acceleration of its reference point, with ρ'' where the mass centre is offset;
    h = I α0 + ω × I ω + m ρ × a0). Its pairs of keys go to the cells of M, its
    keys to those of dS/du' (_pair, _single)."""
    m, v, w, I, rho = b['m'], b['v'], b['w'], b['I'], b['rho']
    p = len(v.partials)
    G, a0 = v.partials, v.rate0
    zero = [sm.S.Zero] * 3
    B = w.partials if w is not None else [None] * p
    keys = [(j, tuple(G[j]), None if B[j] is None else tuple(B[j])) for j in range(p)
            if any(c != 0 for c in G[j]) or (B[j] is not None and any(c != 0 for c in B[j]))]
    h, mrho, acc = zero, zero, a0
    if w is not None:
        h = add(matvec(I, w.rate0), cross(w.value, matvec(I, w.value)))   # I alpha0 + w x I w
        if rho is not None:
            acc = add(a0, add(cross(w.rate0, rho), cross(w.value, cross(w.value, rho))))
            h = add(h, [m * c for c in cross(rho, a0)])
            mrho = [m * c for c in rho]
    Iflat = [c for row in I for c in row] if I is not None else [sm.S.Zero] * 9
    node, new = sums.node(keys, [m] + [m * c for c in acc] + Iflat + h + mrho)
    fresh = set(new)
    for K1 in new:                      # the pairs with a new key: O(new x keys)
        for K2 in keys:
            if K2 not in fresh or K2[0] >= K1[0]:
                sums.add(("M", K1, K2) if K1[0] <= K2[0] else ("M", K2, K1), node)
    for K in new:
        sums.add(("R", K), node)


def _pair(K1, K2, C, memo):
    """The cell (K1, K2) of M with the coefficients C summed over its bodies:
    m γ_j.γ_k + β_j.I β_k + γ_j.(β_k x m ρ) + γ_k.(β_j x m ρ)."""
    (_, g1, b1), (_, g2, b2) = K1, K2
    m, I, mrho = C[0], [C[4:7], C[7:10], C[10:13]], C[16:19]
    out = []
    if nonzero(g1) and nonzero(g2) and m != 0:
        gg = dot(g1, g2)
        out.append((pythagoras(gg, memo) if _monomials(g1) and _monomials(g2)
                    else tidy(gg, memo)) * m)
    if nonzero(b1) and nonzero(b2) and any(c != 0 for c in C[4:13]):
        out.append(tidy(dot(b1, matvec(I, b2)), memo))
    if any(c != 0 for c in mrho):
        mixed = [dot(g, cross(bb, mrho)) for g, bb in ((g1, b2), (g2, b1))
                 if nonzero(g) and nonzero(bb)]
        if mixed:
            out.append(tidy(sm.Add(*mixed), memo))
    return sm.Add(*out)


def _key_entries(K) -> list:
    """The partial velocities' entries of a cell's key (j, γ_j, β_j)."""
    return [sm.sympify(c) for v in K[1:] if v is not None for c in v]


def _monomials(v) -> bool:
    """Every entry a product without sums (a link's partial velocity l sin(q)): their
    products are already expanded."""
    return all(not c.is_Add and not (c.is_Mul and any(a.is_Add for a in c.args)) for c in v)


def _single(K, C):
    """The cell K of dS/du'_j: γ_j.(m a) + β_j.h summed over its bodies."""
    _, g, bb = K
    return sm.Add(dot(g, C[1:4]) if nonzero(g) else sm.S.Zero,
                  dot(bb, C[13:16]) if nonzero(bb) else sm.S.Zero)


def collected_scalar(cell: dict):
    """A cell {key: [coefficients]} of a shared sum as one scalar, sum of key * coefficients."""
    return sm.Add(*[key * sm.Add(*coeffs) for key, coeffs in cell.items() if key != 0])


def generalized_forces(fm: Motions, loads, nspeeds):
    """Q_j = sum over loads of force . partial velocity (torque . partial omega).

    Loads that share partial velocities (gravity on every body beyond joint j) are
    summed first, then dotted once, through the same prefix tree as the bodies'
    terms (codegen.formulation.shared_sums): O(n) for a chain."""
    sums = SharedSums(fm.name, "Qs")
    for where, vec in loads:
        X = fm.load_frame(where, vec)
        mo = fm.point(where, X) if isinstance(where, Point) else fm.frame(where, X)
        comps = fm.without_auxiliary(fm.components(vec, mo.frame))
        keys = [(j, tuple(mo.partials[j])) for j in range(nspeeds)
                if any(c != 0 for c in mo.partials[j])]
        node, new = sums.node(keys, comps)
        for K in new:
            sums.add(K, node)
    Q = [[] for _ in range(nspeeds)]
    for (j, partial), total in sums.totals().items():
        Q[j].append(dot(partial, total))
    return [sm.Add(*terms) for terms in Q]


def form(kin: Kinematics, N: ReferenceFrame, bodies, loads, relative: bool = False) -> GibbsAppell:
    """M, F, Q of the bodies and loads over kin.speeds, on plain symbols.

    relative: compose the velocities down the frame and point trees as
    intermediates (codegen.formulation.relative), falling back to SymPy's expanded
    velocities when the model's are not those of its positions."""
    if relative:
        try:
            return _form(RelativeMotions(kin, N, bodies), bodies, loads)
        except NotRelative:
            pass
    return _form(Motions(kin, N), bodies, loads)


def flexible_share_of(fm: Motions, body: FlexibleBody) -> Share:
    """A flexible body's share of M, dS/du'|0 and Q (codegen.flexible.share), from the
    motions of its origin and frame in the frame's components."""
    X, O = body.frame, body.origin
    if not _has_velocity(O, fm.N):
        raise ValueError(f"the origin {O} of flexible body {body.name!r} has no velocity "
                         f"in {fm.N}: set it (set_vel, v2pt_theory) as for any body's point")
    v, w = fm.point(O, X), fm.frame(X, X)
    g = None if body.gravity is None else fm.components(body.gravity, X)
    return flexible_share(body, fm.kin, (v.partials, v.value, v.rate0),
                          (w.partials, w.value, w.rate0), g)


def _form(fm: Motions, bodies, loads) -> GibbsAppell:
    kin = fm.kin
    n = len(kin.speeds)
    sums = SharedSums(fm.name, "mu")
    terms, memo = [], {}
    shares = [flexible_share_of(fm, b) for b in bodies if isinstance(b, FlexibleBody)]
    for body in bodies:
        checkpoint()
        if isinstance(body, FlexibleBody):
            continue
        b = _body_terms(fm, body)
        terms.append(b)
        _add_body(b, sums)
    pairs = []                                                # the cells of M, formed lazily
    cells_R = [[] for _ in range(n)]                          # dS/du'_j at u' = 0
    for cell, C in sums.totals().items():
        if cell[0] == "M":
            pairs.append((cell[1], cell[2], C))
        else:
            cells_R[cell[1][0]].append(_single(cell[1], C))
    Q = generalized_forces(fm, loads, n)
    R = [sm.Add(*cells_R[j]) for j in range(n)]
    for s in shares:
        R = [r + e for r, e in zip(R, s.R)]
        Q = [q + e for q, e in zip(Q, s.Q)]

    def mass() -> sm.Matrix:
        """M from its cells: n² expressions, formed only where read (not by the build of
        a tree of bodies, codegen.algorithms.crba)."""
        cells = [[[] for _ in range(n)] for _ in range(n)]       # upper triangle
        for K1, K2, C in pairs:
            j, k = K1[0], K2[0]
            cells[min(j, k)][max(j, k)].append(_pair(K1, K2, C, memo))
        upper = {(j, k): sm.Add(*cells[j][k]) for j in range(n) for k in range(j, n)}
        for s in shares:
            for key, e in s.M.items():
                upper[key] += e
        upper = {key: pythagoras(e, memo) for key, e in upper.items()}
        return sm.Matrix(n, n, lambda j, k: upper[min(j, k), max(j, k)])
    # the symbols of M's cells, without forming them: those of their keys and coefficients,
    # each key read once (a key is in a pair with every other: O(n²) pairs, O(n) keys)
    keys = {K for K1, K2, _ in pairs for K in (K1, K2)}
    coefficients = {id(C): C for _, _, C in pairs}.values()   # shared lists, each read once
    entries = {e for K in keys for e in _key_entries(K)} | {e for C in coefficients for e in C}
    symbols = set().union(*[e.free_symbols for e in entries])
    for s in shares:
        symbols |= set().union(*[sm.sympify(e).free_symbols for e in s.M.values()])
    M = LazyMatrix(mass, (n, n), symbols)
    R = [pythagoras(r, memo) for r in R]
    F = sm.Matrix([pythagoras(Q[j] - R[j], memo) for j in range(n)])
    return GibbsAppell(M=M, F=F, Q=sm.Matrix(Q), R=sm.Matrix(R), terms=terms, motions=fm,
                       intermediates=list(fm.items))
