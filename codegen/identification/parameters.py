"""The standard inertial parameters of a model's bodies: 10 per rigid body, 1 per particle.

A rigid body's are Pinocchio's dynamic parameters, in its order: the mass m, the first
moments m·c (c the mass centre from the body's origin, in the body's frame), and the
inertia about the body's origin, Ixx, Ixy, Iyy, Ixz, Iyz, Izz, in the body's frame. The
origin is the link frame's origin for a URDF robot (``RobotModel.links``), the point the
caller names (``origins=``), or else the mass centre. A particle has its mass alone.

An inertia given in another frame is re-expressed in the body's: its matrix must not
depend on the coordinates once simplified (a wheel's inertia in a frame it spins
relative to, about its axis, does not), else a ValueError names the body and the frame.
A body whose frame has no orientation in the model (only an angular velocity, a wheel
whose spin angle is left out) has its parameters taken in its inertia's frame, provided
the relative turn leaves the inertia and the mass centre unchanged
(``BodyParameters.rotating`` is then the body's own frame).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sm
import sympy.physics.mechanics as me

from ..formulation.motions import components, dyadic_components, frames_of
from .exact import exact_number

__all__ = ["BodyParameters", "standard_parameters", "gravity_of", "INERTIA_ORDER", "NAMES"]

#: the inertia's entries in Pinocchio's order, as (row, column) of the 3 x 3 matrix
INERTIA_ORDER = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))
#: a rigid body's ten parameters, in order
NAMES = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


@dataclass
class BodyParameters:
    """One body's parameters: its name, frame and origin (a point fixed in it), its
    symbols in NAMES' order (just m for a particle) and their values. rotating: the
    body's own frame where it differs from frame (module docstring): the body has its
    angular velocity, and its parameters are constant in frame too."""
    name: str
    frame: me.ReferenceFrame
    origin: me.Point
    symbols: list
    values: list
    rigid: bool = True
    rotating: me.ReferenceFrame | None = None


def _number(expr, values: dict, what: str) -> float:
    """expr as a float, the model's constants replaced by their values."""
    e = sm.sympify(expr).xreplace(values)
    if e.free_symbols:          # an inertia constant in the body, written through a turn
        e = sm.simplify(e)
    if e.free_symbols:
        raise ValueError(f"{what} has the symbols {sorted(map(str, e.free_symbols))} that the "
                         f"model's parameter_values do not give")
    return float(e)


def _constants(model) -> dict:
    """{Symbol: value} of the model's parameter_values (keyed by name)."""
    by_name = {str(s): s for s in model.constants}
    return {by_name.get(k, sm.Symbol(k)): sm.Float(v) for k, v in model.parameter_values.items()}


def _exact(values: dict) -> dict:
    """values as exact rationals, so that equal numbers cancel in a simplification."""
    return {k: sm.Rational(str(exact_number(v))) for k, v in values.items()}


def _simplified(e, exact: dict, done):
    """e simplified until done(e): trigsimp first (a turn about a symmetry axis leaves
    cos² + sin²), then with the model's numbers exact (exact: _exact's; equal inertias
    under two names cancel)."""
    e = sm.sympify(e)
    for step in (sm.trigsimp, lambda x: sm.trigsimp(sm.expand(x.xreplace(exact)))):
        if done(e):
            break
        e = step(e)
    return e


def _fixed(exprs, values: dict):
    """exprs without the model's time functions (coordinates, speeds), simplified
    (_simplified), or None where one still has them."""
    exact = _exact(values)

    def constant(e):
        return not me.find_dynamicsymbols(e)
    out = [_simplified(e, exact, constant) for e in exprs]
    return out if all(constant(e) for e in out) else None


def _connected(A, B) -> bool:
    try:
        A.dcm(B)
    except ValueError:
        return False
    return True


def _parameter_frame(body, frame, origin, values):
    """(the frame the parameters are taken in, the body's own frame if that differs):
    frame itself when the inertia's frames are oriented from it, else the inertia's
    frame, where the body's turn relative to it leaves the inertia and the mass centre
    from origin unchanged (``[ω×, I] = 0`` and ``ω × c = 0``, ω the relative angular
    velocity)."""
    dyadic, _ = body.inertia
    frames = frames_of(dyadic) or [frame]
    if all(_connected(frame, F) for F in frames):
        return frame, None
    F = frames[0]
    if not all(_connected(F, G) for G in frames):
        raise ValueError(f"the inertia of {body.name} is written in frames {frames} that "
                         f"are not oriented from one another")
    try:
        w = components(frame.ang_vel_in(F), F)
    except ValueError:
        raise ValueError(f"{body.name}'s frame {frame} has neither an orientation nor an "
                         f"angular velocity relative to {F}, the frame its inertia is "
                         f"given in") from None
    W = sm.Matrix([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    inertia = sm.Matrix(dyadic_components(dyadic, F))
    c = body.masscenter.pos_from(origin).to_matrix(F)
    change = list(W * inertia - inertia * W) + list(W * c)

    exact = _exact(values)
    if not all(_simplified(e, exact, lambda x: x == 0) == 0 for e in change):
        raise ValueError(f"{body.name}'s frame {frame} is not oriented in the model, and its "
                         f"inertia, given in {F}, is not fixed in the body: {frame} turns "
                         f"relative to {F} about an axis that the inertia, or the mass "
                         f"centre from {origin}, is not symmetric about")
    return F, frame


def _rigid_values(body, frame, origin, values) -> list:
    """m, m·c and the inertia about origin, in frame's components, as numbers, for a
    RigidBody: its inertia dyadic re-expressed in frame, which it must be constant in."""
    N = frame
    m = _number(body.mass, values, f"the mass of {body.name}")
    c = _fixed(body.masscenter.pos_from(origin).to_matrix(N), values)
    if c is None:
        raise ValueError(f"the mass centre of {body.name} moves relative to its origin "
                         f"{origin} in frame {N}: the origin is not fixed in the body")
    c = [_number(e, values, f"the mass centre of {body.name}") for e in c]
    dyadic, point = body.inertia
    about = point.pos_from(body.masscenter).to_matrix(N)
    if any(_number(e, values, "the inertia's point") != 0 for e in about):
        raise ValueError(f"the inertia of {body.name} is not about its mass centre")
    matrix = _fixed([e for row in dyadic_components(dyadic, N) for e in row], values)
    if matrix is None:
        raise ValueError(f"the inertia of {body.name}, given in {frames_of(dyadic)}, depends "
                         f"on the coordinates in {body.name}'s frame {N}: it is not fixed "
                         f"in the body")
    IC = [[_number(matrix[3 * i + j], values, f"the inertia of {body.name}")
           for j in range(3)] for i in range(3)]
    cc = sum(x * x for x in c)
    IO = [[IC[i][j] + m * ((cc if i == j else 0.0) - c[i] * c[j]) for j in range(3)]
          for i in range(3)]
    return [m] + [m * x for x in c] + [IO[i][j] for i, j in INERTIA_ORDER]


def standard_parameters(model, origins=None) -> list:
    """BodyParameters of every body of model, in order: a URDF robot's moving links in
    its joints' order (massless links included: their columns are Pinocchio's too),
    otherwise model.bodies' order. origins: {body or body name: Point} fixed in it."""
    values = _constants(model)
    origins = {getattr(k, "name", k): v for k, v in (origins or {}).items()}
    links = getattr(model, "links", None) or {}
    by_name = {b.name: b for b in model.bodies}
    out = []
    if links:
        root = model.frame
        for name, (frame, origin) in links.items():
            if frame is root:
                continue
            body = by_name.get(name)
            numbers = [0.0] * 10 if body is None else _rigid_values(body, frame, origin, values)
            out.append(_rigid(name, frame, origin, numbers))
        return out
    for body in model.bodies:
        if isinstance(body, me.RigidBody):
            origin = origins.get(body.name, body.masscenter)
            frame, rotating = _parameter_frame(body, body.frame, origin, values)
            out.append(_rigid(body.name, frame, origin,
                              _rigid_values(body, frame, origin, values), rotating))
        else:
            m = sm.Symbol(f"m_{body.name}", real=True)
            out.append(BodyParameters(body.name, None, body.masscenter, [m],
                                      [_number(body.mass, values, f"the mass of {body.name}")],
                                      rigid=False))
    return out


def _rigid(name, frame, origin, numbers, rotating=None) -> BodyParameters:
    symbols = [sm.Symbol(f"{n}_{name}", real=True) for n in NAMES]
    return BodyParameters(name, frame, origin, symbols, numbers, rotating=rotating)


def gravity_of(model):
    """The uniform field g (a Vector in the model's frame) that the model's weights
    are m g of, or None: each load on a body's mass centre whose force over that
    body's mass is a constant vector the same for all of them."""
    values = _constants(model)
    weights = getattr(model, "weights", None)
    pairs = weights if weights else model.loads
    by_point = {b.masscenter: b for b in model.bodies}
    found = []
    for load in pairs:
        point, force = load[0], load[1]
        body = by_point.get(point)
        if body is None or not isinstance(force, me.Vector):
            continue
        g = force.to_matrix(model.frame) / body.mass
        g = g.applyfunc(lambda e: sm.nsimplify(sm.simplify(e).xreplace(values)))
        if all(e.is_number for e in g):
            found.append(g)
        elif not any(e.atoms(sm.Function) for e in g):
            # a weight whose field has a constant without a value: not silently dropped
            names = sorted({str(x) for e in g for x in e.free_symbols})
            raise ValueError(f"the load on {point} is m times a field with {names}, which the "
                             f"model's parameter_values do not give")
    if not found:
        return None
    g = found[0]
    if any((f - g).norm() != 0 for f in found[1:]):
        raise ValueError("the model's weights are not one uniform field; give gravity=")
    N = model.frame
    return sum((sm.Float(float(e)) * d for e, d in zip(g, (N.x, N.y, N.z)) if e != 0),
               me.Vector(0))
