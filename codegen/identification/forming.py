"""The regressor Y(q, u, u') of a tree of bodies, τ = Y π, as expressions over named
intermediates.

Each body's velocities come from the formulation's motions (codegen.formulation.relative
composes them joint by joint as intermediates, as the generated dynamics do), in the
components of the body's frame: ω and v of its origin O, their partials over the
speeds (β_j, γ_j) and their accelerations α and a (the rates at u' = 0 plus the
partials times u'). With a' = a - g, the body's wrench about O is linear in its ten
parameters (Newton–Euler about a point that is not the mass centre):

    f = m a' + α × h + ω × (ω × h)          n = I_O α + ω × (I_O ω) + h × a'

and τ_j = Σ_bodies γ_j·f + β_j·n, so that each column of Y is that sum with one
parameter 1 and the rest 0. A particle has f = m a' at its point.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sm

from ..equations.intermediates import define
from ..formulation.constraints import dependent_speeds
from ..formulation.kinematics import Kinematics
from ..formulation.motions import Motions
from ..formulation.points import NotRelative
from ..formulation.relative import RelativeMotions
from ..symbolic.vec3 import add, cross, dot
from .joints import joint_columns
from .loops import Split, split_speeds
from .parameters import INERTIA_ORDER

__all__ = ["FormedRegressor", "form_regressor"]


@dataclass
class FormedRegressor:
    """Y's entries (rows: speeds, columns: parameters) over plain symbols and the
    intermediates (codegen.equations.intermediates.Intermediate) they read."""
    kin: Kinematics
    Y: list                 # n rows of len(parameters) expressions
    intermediates: list
    speeds: list            # the state's speeds (plain symbols): the independent ones
    accelerations: list     # their rates u' (plain symbols)
    inputs: list            # (plain symbol, its index in the model's state) of q and speeds
    split: Split            # the constraints' split (codegen.identification.loops)

    def substituted(self, values: dict) -> "FormedRegressor":
        """The same with symbols replaced by values ({Symbol: number}): a symbolic
        model's geometry as Floats for C, or as exact Rationals."""
        items = [type(i)(i.symbol, i.expr.xreplace(values), i.name) for i in self.intermediates]
        return FormedRegressor(self.kin, [[e.xreplace(values) if not e.is_number else e
                                           for e in row] for row in self.Y], items,
                               self.speeds, self.accelerations, self.inputs, self.split)


def _scaled(v, s):
    return [s * e for e in v]


def _unit(k):
    return [sm.S.One if i == k else sm.S.Zero for i in range(3)]


def _inertia_columns(a):
    """L(a): I a = L(a) [Ixx, Ixy, Iyy, Ixz, Iyz, Izz], as its six columns."""
    cols = []
    for i, j in INERTIA_ORDER:
        col = [sm.S.Zero] * 3
        col[i] += a[j]
        if i != j:
            col[j] += a[i]
        cols.append(col)
    return cols


def _named(items, label, v):
    """v's entries, each long one named once (it is read by many columns)."""
    return [define(items, f"{label}_{i}", e) if len(e.args) > 1 else e
            for i, e in enumerate(v)]


def _rigid_columns(fm, items, body, g, ud):
    """The 6-vectors (f, n) of the body's ten columns, and its (γ_j, β_j)."""
    B = body.frame
    # a body whose own frame is not oriented (a wheel's spin left out) turns as that frame
    w, v = fm.frame(body.rotating or B, B), fm.point(body.origin, B)
    omega = list(w.value)
    alpha = _named(items, f"alpha_{body.name}", add(w.rate0, _accel(w.partials, ud)))
    a = add(add(v.rate0, _accel(v.partials, ud)), _scaled(fm.components(g, B), -1))
    a = _named(items, f"acc_{body.name}", a)
    zero = [sm.S.Zero] * 3
    cols = [(a, zero)]
    for k in range(3):
        e = _unit(k)
        f = add(cross(alpha, e), cross(omega, cross(omega, e)))
        cols.append((f, cross(e, a)))
    La, Lw = _inertia_columns(alpha), _inertia_columns(omega)
    for ca, cw in zip(La, Lw):
        cols.append((zero, add(ca, cross(omega, cw))))
    return cols, v.partials, w.partials


def _accel(partials, ud):
    out = [sm.S.Zero] * 3
    for p, d in zip(partials, ud):
        out = add(out, _scaled(p, d))
    return out


def _particle_columns(fm, items, body, g, ud):
    N = fm.N
    v = fm.point(body.origin, N)
    a = add(add(v.rate0, _accel(v.partials, ud)), _scaled(fm.components(g, N), -1))
    a = _named(items, f"acc_{body.name}", a)
    return [(a, None)], v.partials, None


def form_regressor(model, bodies, gravity, terms=()) -> FormedRegressor:
    """Y of model over the parameters of bodies (codegen.identification.parameters), then
    those of the joints' terms (codegen.identification.joints), gravity a Vector or None.

    Dependent speeds (u_dependent with their velocity constraints) are projected out as
    the formulation projects M and F (codegen.formulation.constraints): with
    u_d = A u_i + b and u_d' = A u_i' + w, Y_r = Y_i + Aᵀ Y_d at those speeds and rates.
    Closed loops and run-time constraints go through the same projection, with the
    independent speeds of codegen.identification.loops.split_speeds: Y_r = Tᵀ Y, T the
    constraints' null space [I; A] at the state."""
    split = split_speeds(model)
    kin = split.kin
    g = gravity if gravity is not None else 0 * model.frame.x
    fm = None
    if not kin.m:
        try:
            fm = RelativeMotions(kin, model.frame, [])
            rows = _rows(fm, bodies, g, kin)
        except NotRelative:
            fm = None
    if fm is None:
        fm = Motions(kin, model.frame)
        rows = _rows(fm, bodies, g, kin)
    # a joint term names its speed by the model's order, which a run-time split reorders
    order = {str(u.func): j for j, u in enumerate(kin.u)}
    terms = [replace(tm, speed=order[str(model.u_ind[tm.speed].func)]) for tm in terms]
    extra = joint_columns(terms, kin)
    rows = [row + [col[j] for col in extra] for j, row in enumerate(rows)]
    p = kin.p
    items = list(fm.items)
    if kin.m:
        rows, items = _projected(kin, split.velocity, rows, items, p)
    # each state the program reads, at its position in the model's state
    position = {str(s.func): k for k, s in enumerate(split.state)}
    inputs = [(s, position[str(orig.func)]) for s, orig in zip(kin.qs, kin.q)]
    inputs += [(s, position[str(orig.func)]) for s, orig in zip(kin.us[:p], kin.u[:p])]
    return FormedRegressor(kin, rows, items, list(kin.us[:p]), list(kin.uds[:p]), inputs,
                           split)


def _projected(kin, velocity, rows, items, p):
    """(Y_r, its intermediates) for dependent speeds: those of u_d, A and w first (the
    motions read u_d), then the motions' own with u_d' replaced."""
    nh = dependent_speeds(kin, velocity, [], "LU")
    nh_items, A, w = nh.intermediates(kin)
    rates = {kin.uds[p + k]: sm.Add(*[A[k, j] * kin.uds[j] for j in range(p)]) + w[k]
             for k in range(nh.m)}
    items = nh_items + [type(i)(i.symbol, i.expr.xreplace(rates), i.name) for i in items]
    full = [[e.xreplace(rates) for e in row] for row in rows]
    reduced = [[full[j][c] + sm.Add(*[A[k, j] * full[p + k][c] for k in range(nh.m)])
                for c in range(len(full[j]))] for j in range(p)]
    return reduced, items


def _rows(fm, bodies, g, kin):
    n = len(kin.us)
    ud = kin.uds
    columns = []
    for body in bodies:
        if body.rigid:
            cols, gamma, beta = _rigid_columns(fm, fm.items, body, g, ud)
        else:
            cols, gamma, beta = _particle_columns(fm, fm.items, body, g, ud)
        for f, m in cols:
            col = []
            for j in range(n):
                e = dot(gamma[j], f)
                if beta is not None and m is not None:
                    e = e + dot(beta[j], m)
                col.append(e)
            columns.append(col)
    return [[columns[c][j] for c in range(len(columns))] for j in range(n)]
