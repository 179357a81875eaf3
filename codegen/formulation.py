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
dependent and auxiliary (codegen.constraints projects onto the independent
ones). Auxiliary speeds are set to zero after their partial velocities are
taken. Differentiating an expanded S twice gives the same M and F but costs
more than the whole Kane derivation, so S is built only when asked for
(GibbsAppellMethod.gibbs_appell_function, by codegen.public).

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

from .flexible.body import FlexibleBody
from .flexible.share import Share, flexible_share
from .kinematics import Kinematics
from .motions import Motions, frames_of, is_rigid, simplest_frame
from .program import operation_count
from .relative import NotRelative, RelativeMotions
from .symbolic import vanishes
from .vec3 import add, cross, dot, matvec

__all__ = ["GibbsAppell", "form", "check_bodies", "check_loads", "generalized_forces",
           "pythagoras", "varying_inertia_loads"]


def check_bodies(bodies) -> list:
    """The bodies, each a Particle, a RigidBody with a symmetric inertia dyadic or a
    FlexibleBody (codegen.flexible)."""
    for b in bodies:
        if isinstance(b, FlexibleBody):
            continue
        if not isinstance(b, (Particle, RigidBody)):
            raise TypeError(f"body {b!r} is neither a Particle, a RigidBody nor a FlexibleBody")
        if is_rigid(b):
            Imat = b.central_inertia.to_matrix(body_frame(b, None))
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


def body_frame(body, N):
    """The frame a body's vectors are taken in (see the module docstring).

    A particle's: of the frames its velocity is written in, and N, the one
    the others rotate into most simply (an adjacent link's frame rather than
    N for a joint's child, N when every link is oriented from N), so that
    the products of partial velocities stay short."""
    if is_rigid(body):
        frames = frames_of(body.inertia[0])
        return frames[0] if len(frames) == 1 else body.frame
    return simplest_frame([body.masscenter.vel(N)], N)


@dataclass
class GibbsAppell:
    """M, F and Q over ``Kinematics.speeds`` (auxiliary speeds zero), on plain symbols."""
    M: sm.Matrix            # d2S/du'2, symmetric
    F: sm.Matrix            # Q - R
    Q: sm.Matrix            # generalized active forces
    R: sm.Matrix            # dS/du' at u' = 0 (Kane's generalized inertia forces, negated, at u' = 0)
    terms: list             # per body: its kinematic data
    motions: Motions        # the velocities, for the tree of codegen.recursive
    intermediates: list     # codegen.constraints.Intermediate the above are written over


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
    N = fm.N
    X = body_frame(body, N)
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
         for row in dyadic.to_matrix(X).tolist()]
    if rho is not None and all(c == 0 for c in rho):
        rho = None
    return dict(m=m, v=v, w=w, I=I, rho=rho, X=X)


#: partial-velocity products up to this many operations are expanded by _tidy
_EXPAND_LIMIT = 80


def _tidy(e, memo):
    """A short product of partial velocities expanded, its sin**2 + cos**2 pairs
    summed (they come from rotating components; Kane's dot products of unit
    vectors avoid them): the mass matrix in the short form users compare with.
    Longer products are left as they are (expanding them costs more than it saves)."""
    if operation_count([e]) <= _EXPAND_LIMIT:
        e = e.expand(power_exp=False, power_base=False, log=False)
    return pythagoras(e, memo)


def _accumulate(b, mm, res, memo):
    """Add one body's chain-rule terms to M (upper triangle) and dS/du'|0.

    Terms are collected by their velocity factor: M_jk gathers
    {gamma_j.gamma_k: [masses]} and dS/du'_j gathers {gamma_j: [m a0 vectors]},
    so that bodies sharing a partial velocity (every body beyond joint j
    of a chain) give gamma_j.(sum m a0) instead of sum m (gamma_j.a0):
    an O(n) sum per entry instead of O(n) dot products.
    """
    m, v, w, I, rho = b['m'], b['v'], b['w'], b['I'], b['rho']
    p = len(res)
    G = v.partials
    nzv = [j for j in range(p) if any(c != 0 for c in G[j])]
    a0 = v.rate0
    if w is not None:
        B = w.partials
        nzw = [j for j in range(p) if any(c != 0 for c in B[j])]
        IB = {j: matvec(I, B[j]) for j in nzw}
        wIw = cross(w.value, matvec(I, w.value))
        h = add(matvec(I, w.rate0), wIw)          # I alpha0 + w x I w
        if rho is not None:
            Bxr = {j: cross(B[j], rho) for j in nzw}
            rho_dd0 = add(cross(w.rate0, rho), cross(w.value, cross(w.value, rho)))
            h = add(h, [m * c for c in cross(rho, a0)])
    nz = sorted(set(nzv) | (set(nzw) if w is not None else set()))
    acc = a0 if w is None or rho is None else add(a0, rho_dd0)
    macc = [m * c for c in acc]
    for ij, j in enumerate(nz):
        for k in nz[ij:]:
            cell = mm[j][k]
            if j in nzv and k in nzv:
                cell.setdefault(_tidy(dot(G[j], G[k]), memo), []).append(m)
            if w is not None and j in IB and k in IB:
                cell.setdefault(_tidy(dot(B[j], IB[k]), memo), []).append(sm.S.One)
                if rho is not None:
                    cell.setdefault(_tidy(dot(G[j], Bxr[k]) + dot(G[k], Bxr[j]), memo),
                                    []).append(m)
        if j in nzv:
            res[j].setdefault(tuple(G[j]), []).append(macc)
        if w is not None and j in IB:
            res[j].setdefault(tuple(B[j]), []).append(h)


def _collected_scalar(cell: dict):
    return sm.Add(*[key * sm.Add(*coeffs) for key, coeffs in cell.items() if key != 0])


def _collected_vector(cell: dict):
    return sm.Add(*[dot(key, [sm.Add(*c) for c in zip(*vectors)])
                    for key, vectors in cell.items()])


def generalized_forces(fm: Motions, loads, nspeeds):
    """Q_j = sum over loads of force . partial velocity (torque . partial omega).

    Collected by partial velocity like the inertia terms: loads on points
    that share gamma_j (gravity on every body beyond joint j) are summed
    first, then dotted once.
    """
    Q = [{} for _ in range(nspeeds)]
    for where, vec in loads:
        X = fm.load_frame(where, vec)
        mo = fm.point(where, X) if isinstance(where, Point) else fm.frame(where, X)
        comps = fm.without_auxiliary(fm.components(vec, mo.frame))
        for j in range(nspeeds):
            if any(c != 0 for c in mo.partials[j]):
                Q[j].setdefault(tuple(mo.partials[j]), []).append(comps)
    return [_collected_vector(cell) for cell in Q]


def pythagoras(expr, memo: dict):
    """expr with each pair a*sin(x)**2 + a*cos(x)**2 of one sum replaced by a.

    Exact and without expansion: a body's partial velocity written in a
    rotating frame gives l**2*(sin(q)**2 + cos(q)**2) on the diagonal of M,
    which would otherwise cost five operations per entry at run time."""
    out = memo.get(expr)
    if out is not None:
        return out
    out = expr
    if expr.args and not expr.is_Atom:
        args = [pythagoras(a, memo) for a in expr.args]
        if expr.is_Add:
            args = _pair_squares(args)
        if args != list(expr.args):
            out = expr.func(*args)
    memo[expr] = out
    return out


def _pair_squares(terms: list) -> list:
    """terms with each pair rest*sin(x)**k + rest*cos(x)**2*... summed: for every
    factor sin(x)**k or cos(x)**k (k >= 2) of a term, its rest is the term
    divided by sin(x)**2 (cos(x)**2); a sin and a cos term with equal rests
    add up to the rest."""
    keys, index = [], {}
    for k, term in enumerate(terms):
        factors = sm.Mul.make_args(term)
        own = []
        for i, f in enumerate(factors):
            if f.is_Pow and f.exp.is_Integer and f.exp >= 2 and isinstance(f.base, (sm.sin, sm.cos)):
                rest = sm.Mul(*(factors[:i] + (f.base**(f.exp - 2),) + factors[i + 1:]))
                key = (type(f.base), f.base.args[0], rest)
                own.append(key)
                index.setdefault(key, []).append(k)
        keys.append(own)
    done, replaced = set(), {}
    for k, own in enumerate(keys):
        for kind, x, rest in own:
            if k in done or kind is not sm.sin:
                continue
            partner = next((j for j in index.get((sm.cos, x, rest), ()) if j != k and j not in done),
                           None)
            if partner is not None:
                done |= {k, partner}
                replaced[k] = rest
    return [replaced.get(k, term) for k, term in enumerate(terms) if k not in done or k in replaced]


def form(kin: Kinematics, N: ReferenceFrame, bodies, loads, relative: bool = False) -> GibbsAppell:
    """M, F, Q of the bodies and loads over kin.speeds, on plain symbols.

    relative: compose the velocities down the frame and point trees as
    intermediates (codegen.relative), falling back to SymPy's expanded
    velocities when the model's are not those of its positions."""
    if relative:
        try:
            return _form(RelativeMotions(kin, N), bodies, loads)
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
    mm = [[{} for _ in range(n)] for _ in range(n)]   # upper triangle, see _accumulate
    res = [{} for _ in range(n)]                      # dS/du'_j at u' = 0
    terms, memo = [], {}
    shares = [flexible_share_of(fm, b) for b in bodies if isinstance(b, FlexibleBody)]
    for body in bodies:
        if isinstance(body, FlexibleBody):
            continue
        b = _body_terms(fm, body)
        terms.append(b)
        _accumulate(b, mm, res, memo)
    Q = generalized_forces(fm, loads, n)
    upper = {(j, k): _collected_scalar(mm[j][k]) for j in range(n) for k in range(j, n)}
    R = [_collected_vector(res[j]) for j in range(n)]
    for s in shares:
        for key, e in s.M.items():
            upper[key] += e
        R = [r + e for r, e in zip(R, s.R)]
        Q = [q + e for q, e in zip(Q, s.Q)]
    upper = {key: pythagoras(e, memo) for key, e in upper.items()}
    M = sm.Matrix(n, n, lambda j, k: upper[min(j, k), max(j, k)])
    R = [pythagoras(r, memo) for r in R]
    F = sm.Matrix([pythagoras(Q[j] - R[j], memo) for j in range(n)])
    return GibbsAppell(M=M, F=F, Q=sm.Matrix(Q), R=sm.Matrix(R), terms=terms, motions=fm,
                       intermediates=list(fm.items))
