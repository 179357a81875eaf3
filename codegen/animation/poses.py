"""The outputs an animation needs, found in a description: every drawn frame's
orientation and every drawn point's position, compiled with the model and evaluated
in C at a run's output times.

Each is compiled as the description gives it, relative to its neighbour (a frame to the
frame it is oriented from, a point to the point it is located from), so that the
expressions stay small however deep the tree is; codegen.animation.page composes them
along the paths from the Newtonian frame and the origin. Their names carry the scene,
so that a compiled model (and a run of it) says what to draw without the SymPy objects:

- ``anim_R__<frame>__<parent>``: (3, 3) ``parent.dcm(frame)``;
- ``anim_d__<point>__<parent>__<frame>``: (3,) the components in ``frame`` of the point's
  position from its parent (one output per frame its vector is written in);
- ``anim_v__<point>``: (3,) the velocity in N of a drawn point that the description does
  not locate from the origin (the rolling disk's centre); the page integrates it from
  ``anim_a__<point>``, its position at the run's first time (zero unless anchored);
- ``anim_body__<body>__<frame>__<point>``: (7,) a rigid body's mass and central inertia
  (xx, yy, zz, xy, yz, zx in its frame), for its equivalent box;
- ``anim_particle__<particle>__<point>``: () its mass;
- ``anim_link__<point>__<point>``: () 0, a joint link between two drawn points;
- ``anim_flex__<body>__<frame>__<point>__<style>``: (K, 3) a flexible body's deformed
  sample points in ``frame``'s components from ``point`` (its frame and origin): r0 +
  sum_k phi_k eta_k, foreshortening included, by the body's own ``point_at`` (a beam:
  K = FLEX_POINTS stations from root to tip) or ``node`` (node data: every node, or
  FLEX_POINTS of them evenly picked). ``style`` is ``line`` (a beam, or nodes on its
  axis, drawn as a chain in axial order) or ``dots`` (other node data);
- ``anim_up``: (3,) the up direction, opposite to the constant loads (gravity).
"""
from __future__ import annotations

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me
from sympy.core.function import AppliedUndef

from ..flexible.body import FlexibleBody

__all__ = ["pose_outputs", "flexible_points", "PREFIX", "SEP", "FLEX_POINTS"]

PREFIX, SEP = "anim_", "__"
#: the most sample points drawn per flexible body (3 outputs each)
FLEX_POINTS = 21


def _name(obj, what: str) -> str:
    name = obj if isinstance(obj, str) else getattr(obj, "name", None)
    if not (isinstance(name, str) and name.isidentifier() and SEP not in name
            and not name.startswith("_") and not name.endswith("_")):
        raise ValueError(f"the {what} {name!r} cannot name an animation output: give it an "
                         f"identifier without '__' and without a leading or trailing '_'")
    return name


def _description(description, frame):
    """(N, bodies, loads) of a Model, a GibbsAppellMethod or a KanesMethod."""
    N = frame if frame is not None else getattr(description, "frame", None)
    if not isinstance(N, me.ReferenceFrame):
        raise TypeError("pose_outputs needs the Newtonian frame: give a codegen.examples.Model, "
                        "a GibbsAppellMethod, or frame=")
    bodies = getattr(description, "bodies", None)
    loads = getattr(description, "loads", None) or []
    if not bodies:
        raise ValueError("pose_outputs: the description has no bodies to draw")
    return N, list(bodies), list(loads)


def _neighbours(point):
    return list(point._pos_dict)          # SymPy keeps the located-from graph here


def _reachable(points):
    seen, todo = [], list(points)
    while todo:
        p = todo.pop(0)
        if p not in seen:
            seen.append(p)
            todo += _neighbours(p)
    return seen


def _is_fixed(point, N) -> bool:
    v = point._vel_dict.get(N)
    return v is not None and v == me.Vector(0)


def _constant_in(vector, frame) -> bool:
    """Each term of vector constant in a frame fixed in frame (no simplification: a
    vector written otherwise counts as moving)."""
    return all(not comps.atoms(AppliedUndef)
               and (G is frame or not frame.dcm(G).atoms(AppliedUndef))
               for comps, G in vector.args)


def _matrix(dyadic, frame):
    """dyadic.to_matrix(frame), directly from its terms when all are in frame (SymPy's
    to_matrix dots every pair of axes through the frames' tree)."""
    if all(len(v.args) == 1 and v.args[0][1] is frame
           for _, a, b in dyadic.args for v in (a, b)):
        return sum((c * a.args[0][0] * b.args[0][0].T for c, a, b in dyadic.args), sm.zeros(3, 3))
    return dyadic.to_matrix(frame)


def flexible_points(body) -> tuple:
    """(points, style) of a FlexibleBody as drawn: its material points (the body's own
    Points, their positions from its origin the body's deformed-position formula), in
    axial order for ``style`` "line", else "dots"."""
    modes = body.modes
    if modes.shape_at is not None:                       # a beam: stations root to tip
        length = float(modes.beam["L"]) if modes.beam else \
            float(np.max(modes.position @ modes.axis))
        return [body.point_at(x) for x in np.linspace(0.0, length, FLEX_POINTS)], "line"
    position, axis = np.asarray(modes.position, float), np.asarray(modes.axis, float)
    along = position @ axis
    on_axis = np.abs(position - np.outer(along, axis)).max() <= 1e-9 * max(
        1.0, np.abs(position).max())
    order = np.argsort(along, kind="stable") if on_axis else np.arange(len(position))
    if len(order) > FLEX_POINTS:                          # both ends kept
        order = order[np.round(np.linspace(0, len(order) - 1, FLEX_POINTS)).astype(int)]
    return [body.node(int(k)) for k in order], "line" if on_axis else "dots"


def _constant_length(vector) -> bool:
    return not sm.trigsimp(vector.magnitude() ** 2).atoms(AppliedUndef)


def _oriented(F, N):
    """F, or for a frame given only an angular velocity (the Whipple bicycle's wheels, whose
    angles are ignorable) the frame it turns in, which is drawn instead."""
    try:
        N.dcm(F)
        return F
    except ValueError:
        for other in F._ang_vel_dict:
            try:
                N.dcm(other)
                return other
            except ValueError:
                continue
    raise ValueError(f"frame {F.name!r} has no orientation in {N.name} (nor an angular velocity "
                     f"relative to a frame that has one): it cannot be drawn")


def _origin(points, N, origin):
    if origin is not None:
        return origin
    fixed = [p for p in _reachable(points) if _is_fixed(p, N)]
    named = [p for p in fixed if p.name == "O"]
    return (named or fixed or [None])[0]


def _up(loads, N):
    """Opposite to the sum of the constant forces (gravity), all constants at 1."""
    total = sm.zeros(3, 1)
    for where, load in loads:
        if isinstance(where, me.Point) and isinstance(load, me.Vector) \
                and not any(comps.atoms(AppliedUndef) for comps, _ in load.args):
            m = load.to_matrix(N)
            if not m.atoms(AppliedUndef):
                total += m.subs({s: 1 for s in m.free_symbols})
    try:
        down = [float(c) for c in total]
    except TypeError:
        down = [0.0, 0.0, 0.0]
    if max(abs(c) for c in down) < 1e-12:
        return sm.Matrix([0, 0, 1])
    k = max(range(3), key=lambda i: abs(down[i]))   # the nearest axis: grids lie on a plane
    up = [0, 0, 0]
    up[k] = -1 if down[k] > 0 else 1
    return sm.Matrix(up)


def _links(bodies, N, origin):
    """Joint links: from each rigid body's mass centre to the points near it (two steps in
    the located-from graph) that are fixed in its frame and in another body's (or in N),
    and from each particle to its drawn or fixed neighbours."""
    rigid = [b for b in bodies if isinstance(b, me.RigidBody)]
    fixed_in = {}
    for b in rigid:
        C = b.masscenter
        near = [p for p in _neighbours(C)] + [q for p in _neighbours(C) for q in _neighbours(p)]
        fixed_in[b] = [p for p in dict.fromkeys(near) if p is not C
                       and _constant_in(p.pos_from(C), _oriented(b.frame, N))]
    centres = {b.masscenter for b in rigid} | {b.point for b in bodies if isinstance(b, me.Particle)} \
        | {b.origin for b in bodies if isinstance(b, FlexibleBody)}
    links = []
    for b in rigid:
        for p in fixed_in[b]:
            other = any(p in fixed_in[o] or p is o.masscenter for o in rigid if o is not b)
            if other or p in centres or _is_fixed(p, N):
                links.append((b.masscenter, p))
    for b in bodies:
        if isinstance(b, me.Particle):
            links += [(b.point, p) for p in _neighbours(b.point)
                      if (p in centres or _is_fixed(p, N)) and _constant_length(p.pos_from(b.point))]
    unique = {}
    for a, c in links:
        unique.setdefault(frozenset((a, c)), (a, c))
    return list(unique.values())


def pose_outputs(description, frame=None, *, frames=(), points=(), anchors=None,
                 origin=None) -> dict:
    """The outputs to compile with a model so that it can be animated.

    Parameters
    ----------
    description : codegen.examples.Model, GibbsAppellMethod or KanesMethod
        Its bodies are drawn: a rigid body as its equivalent box (its frame's
        orientation, its mass centre's position, its mass and central inertia), a
        particle as a sphere, a flexible body (codegen.flexible) deformed, through
        at most FLEX_POINTS of its material points, and links between joint points
        where they are found.
    frame : ReferenceFrame, optional
        The Newtonian frame (a Model and a GibbsAppellMethod know theirs).
    frames, points : more frames and points to carry, for the user's shapes and traces.
    anchors : {Point: Vector}, optional
        Where points the description does not locate from the origin are at the run's
        first time (their velocity moves them on). A Model's own ``anchors`` are used
        by default.
    origin : Point, optional
        The point drawn at the world's origin; by default a point of the description with
        zero velocity (one named O if there are several).

    Returns {name: expression} for ``generate(..., outputs=...)``; merge your own.
    """
    N, bodies, loads = _description(description, frame)
    anchors = dict(getattr(description, "anchors", None) or {}) if anchors is None else anchors
    drawn = [b.masscenter if isinstance(b, me.RigidBody) else
             b.origin if isinstance(b, FlexibleBody) else b.point for b in bodies]
    roots = drawn + list(points)
    origin = _origin(roots, N, origin or getattr(description, "origin", None))
    out, names = {}, {}

    def unique(obj, what):
        name = _name(obj, what)
        if names.setdefault((what, name), obj) is not obj:
            raise ValueError(f"two different {what}s are named {name!r}: rename one")
        return name

    def orientation(F):
        F = _oriented(F, N)
        path = N._dict_list(F, 0)            # N, ..., F, as the description orients them
        for parent, child in zip(path, path[1:]):
            out[f"{PREFIX}R{SEP}{unique(child, 'frame')}{SEP}{unique(parent, 'frame')}"] = \
                parent.dcm(child)
        return F

    def alias(F):                            # a frame drawn in another's orientation
        G = orientation(F)
        if G is not F:
            out[f"{PREFIX}R{SEP}{unique(F, 'frame')}{SEP}{unique(G, 'frame')}"] = sm.eye(3)

    def located(path):                      # a chain of relative positions
        for parent, child in zip(path, path[1:]):
            for comps, G in child.pos_from(parent).args or [(sm.zeros(3, 1), N)]:
                orientation(G)
                out[f"{PREFIX}d{SEP}{unique(child, 'point')}{SEP}"
                    f"{unique(parent, 'point')}{SEP}{unique(G, 'frame')}"] = comps

    def position(P):
        name = unique(P, "point")
        try:
            path = origin._pdict_list(P, 0) if origin is not None else None
        except ValueError:                   # not located from the origin
            path = None
        if path is not None:
            located(path)
            return name
        # not located from the origin: from the first drawn point located with it that
        # has a velocity in N (the spacecraft's hub centre for its panels), else itself
        near = _reachable([P])
        root = next((R for R in roots if R in near and N in R._vel_dict), P)
        if root is not P:
            located(root._pdict_list(P, 0))
            position(root)
            return name
        try:
            out[f"{PREFIX}v{SEP}{name}"] = P.vel(N).to_matrix(N)
        except ValueError:
            raise ValueError(f"point {name!r} is neither located from the origin nor given "
                             f"a velocity in {N.name}: it cannot be drawn") from None
        start = anchors.get(P, me.Vector(0))
        out[f"{PREFIX}a{SEP}{name}"] = (start.to_matrix(N) if isinstance(start, me.Vector)
                                        else sm.Matrix(start))
        return name

    for b in bodies:
        if isinstance(b, me.RigidBody):
            alias(b.frame)
            C = position(b.masscenter)
            I = _matrix(b.central_inertia, _oriented(b.frame, N))
            key = SEP.join([_name(b, "body"), b.frame.name, C])
            out[f"{PREFIX}body{SEP}{key}"] = sm.Matrix([b.mass, I[0, 0], I[1, 1], I[2, 2],
                                                        I[0, 1], I[1, 2], I[2, 0]])
        elif isinstance(b, me.Particle):
            out[f"{PREFIX}particle{SEP}{_name(b, 'particle')}{SEP}{position(b.point)}"] = b.mass
        elif isinstance(b, FlexibleBody):
            alias(b.frame)
            stations, style = flexible_points(b)
            key = SEP.join([_name(b, "body"), b.frame.name, position(b.origin), style])
            out[f"{PREFIX}flex{SEP}{key}"] = sm.Matrix.vstack(
                *[P.pos_from(b.origin).to_matrix(b.frame).T for P in stations])
        else:
            raise TypeError(f"pose_outputs draws rigid, flexible bodies and particles, got {b!r}")
    for a, c in _links(bodies, N, origin):
        out[f"{PREFIX}link{SEP}{position(a)}{SEP}{position(c)}"] = sm.S.Zero
    for F in frames:
        alias(F)
    for P in points:
        position(P)
    out[f"{PREFIX}up"] = _up(loads, N)
    return out
