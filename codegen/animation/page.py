"""The animation page: a run's poses (from the model's animation outputs, see
codegen.animation.poses) and the shapes to draw, checked, packed and rendered into one
self-contained HTML file (templates/animation/, with three.js inlined), written
atomically.
"""
from __future__ import annotations

import base64
import html
import json
import os
from importlib import resources
from pathlib import Path

import numpy as np

from ..abi import TEMPLATE_DIR
from ..emit.render import render
from ..pipeline.files import write_atomic
from .poses import PREFIX, SEP
from ..description.shapes import Box, Shape, equivalent_box, name_of

__all__ = ["animate", "Scene", "THREE_VERSION"]

THREE_VERSION = "0.170.0"
BOX_OPACITY = 0.7
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")


class Scene:
    """The animation outputs of a run, read back from their names: frames' orientations,
    points' positions (integrated from their velocities where the model does not locate
    them), bodies, particles and links."""

    def __init__(self, t, values: dict, model: str):
        self.model, self.t = model, np.asarray(t, dtype=float)
        rel_R, rel_d, self.v, self.a, flex = {}, {}, {}, {}, []
        self.bodies, self.particles, self.links, self.up = [], [], [], np.array([0.0, 0.0, 1.0])
        for name, value in values.items():
            if not name.startswith(PREFIX):
                continue
            kind, *parts = name[len(PREFIX):].split(SEP)
            value = np.asarray(value, dtype=float)
            if kind == "R" and len(parts) == 2:
                rel_R[parts[0]] = (parts[1], value.reshape(-1, 3, 3))
            elif kind == "d" and len(parts) == 3:
                rel_d.setdefault(parts[0], (parts[1], []))[1].append((parts[2], value.reshape(-1, 3)))
            elif kind in ("v", "a") and len(parts) == 1:
                getattr(self, kind)[parts[0]] = value.reshape(-1, 3)
            elif kind == "body" and len(parts) == 3:
                self.bodies.append((*parts, value[0]))
            elif kind == "particle" and len(parts) == 2:
                self.particles.append((*parts, float(value[0])))
            elif kind == "link" and len(parts) == 2:
                self.links.append(tuple(parts))
            elif kind == "flex" and len(parts) == 4:
                flex.append((*parts, value.reshape(len(self.t), -1, 3)))
            elif kind == "up":
                self.up = value[0]
        if not (self.bodies or self.particles or flex):
            raise ValueError(f"{model}: the run has no animation outputs: compile the model with "
                             f"generate(..., outputs=codegen.animation.pose_outputs(description)) "
                             f"or codegen.animation.generate_animated")
        self.R, self.p = {}, {}

        def rotation(frame):                 # composed from N down; None: N itself
            if frame not in rel_R:
                return None
            if frame not in self.R:
                parent, rel = rel_R[frame]
                above = rotation(parent)
                self.R[frame] = rel if above is None else np.einsum("tij,tjk->tik", above, rel)
            return self.R[frame]

        def position(point):                 # composed from the origin out
            if point not in self.p:
                if point in rel_d:
                    parent, terms = rel_d[point]
                    p = position(parent).copy()
                    for frame, comps in terms:
                        R = rotation(frame)
                        p += comps if R is None else np.einsum("tij,tj->ti", R, comps)
                    self.p[point] = p
                else:
                    self.p[point] = np.zeros((len(self.t), 3))
            return self.p[point]

        eye = np.broadcast_to(np.eye(3), (len(self.t), 3, 3))
        for point, v in self.v.items():          # the trapezoidal rule from the anchor
            steps = 0.5 * (v[1:] + v[:-1]) * np.diff(self.t)[:, None]
            self.p[point] = self.a[point][0] + np.vstack([np.zeros(3), np.cumsum(steps, axis=0)])
        for frame in rel_R:
            rotation(frame)
        for parent, _ in list(rel_R.values()):       # N: shapes may stand in it
            self.R.setdefault(parent, eye)
        for point in rel_d:
            position(point)
        # flexible bodies: (body, style, (t, K, 3) sample points in N), from their frame
        # and origin and the points' positions in the frame's components
        self.flexible = [(body, style, position(point)[:, None, :]
                          + np.einsum("tij,tkj->tki", self.R.get(frame, eye), local))
                         for body, frame, point, style, local in flex]
        for name, series in {**self.R, **self.p,
                             **{body: x for body, _, x in self.flexible}}.items():
            bad = ~np.isfinite(series.reshape(len(self.t), -1)).all(axis=1)
            if bad.any():
                raise ValueError(f"{model}: the pose of {name!r} is not finite at t = "
                                 f"{self.t[bad.argmax()]:g}")

    def extent(self) -> tuple:
        """(centre, size) of the box every drawn point stays in."""
        allp = np.concatenate([p.reshape(-1, 3) for p in self.p.values()]
                              + [x.reshape(-1, 3) for _, _, x in self.flexible])
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        return (lo + hi) / 2, float(np.linalg.norm(hi - lo))


def _quaternions(R) -> np.ndarray:
    """(n, 4) unit quaternions (x, y, z, w) of rotation matrices (n, 3, 3), each the sign
    nearest the one before (so the page interpolates the short way)."""
    R = np.asarray(R, dtype=float).reshape(-1, 3, 3)
    w = np.sqrt(np.clip(1 + R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2], 0, None)) / 2
    x = np.sqrt(np.clip(1 + R[:, 0, 0] - R[:, 1, 1] - R[:, 2, 2], 0, None)) / 2
    y = np.sqrt(np.clip(1 - R[:, 0, 0] + R[:, 1, 1] - R[:, 2, 2], 0, None)) / 2
    z = np.sqrt(np.clip(1 - R[:, 0, 0] - R[:, 1, 1] + R[:, 2, 2], 0, None)) / 2
    x = np.copysign(x, R[:, 2, 1] - R[:, 1, 2])
    y = np.copysign(y, R[:, 0, 2] - R[:, 2, 0])
    z = np.copysign(z, R[:, 1, 0] - R[:, 0, 1])
    q = np.stack([x, y, z, w], axis=1)
    q /= np.linalg.norm(q, axis=1)[:, None]
    for k in range(1, len(q)):
        if q[k] @ q[k - 1] < 0:
            q[k] = -q[k]
    return q


def _b64(array, dtype=np.float32) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype=dtype).tobytes()).decode()


def _check_run(mod, run):
    model = getattr(mod, "name", "the model") if mod is not None else "the run"
    x, t = getattr(run, "x", None), getattr(run, "t", None)
    outputs = getattr(run, "outputs", None)
    if x is None or t is None or not isinstance(outputs, dict):
        raise TypeError(f"{model}: animate takes a SimulationResult (mod.simulate(...)), got "
                        f"{type(run).__name__}")
    if len(t) < 1:
        raise ValueError(f"{model}: the run has no output times")
    _check_times(model, t, x, outputs)
    if mod is not None:
        if np.shape(x)[1:] != (mod.nx,) or list(run.states) != list(mod.states):
            raise ValueError(f"{model}: the run has {np.shape(x)[-1]} states ({', '.join(run.states)}) "
                             f"but the model has {mod.nx} ({', '.join(mod.states)}): a run of "
                             f"another model?")
        missing = [n for n in mod.output_names if n.startswith(PREFIX) and n not in outputs]
        if missing:
            raise ValueError(f"{model}: the run lacks the model's outputs {', '.join(missing)}: "
                             f"a run of another model?")
    return model


def _check_times(model, t, x, outputs):
    """The run's times are the page's frames: 1-D, finite and never going back, with one
    row of states and of each output per time."""
    try:
        t = np.asarray(t, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{model}: the run's times must be numbers, got {t!r}") from None
    if t.ndim != 1:
        raise ValueError(f"{model}: the run's times must be 1-D, got shape {t.shape}")
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise ValueError(f"{model}: the run's time t[{bad[0]}] = {t[bad[0]]} is not finite: "
                         f"the page plays finite times")
    back = np.flatnonzero(np.diff(t) < 0)
    if back.size:
        k = back[0] + 1
        raise ValueError(f"{model}: the run's times go back at t[{k}] = {t[k]:.17g}, after "
                         f"t[{k - 1}] = {t[k - 1]:.17g}: the page plays times in increasing "
                         f"order (sort the run, or take it from one simulate)")
    rows = {"states": np.shape(x)[:1]}
    rows.update((f"output {name!r}", np.shape(value)[:1]) for name, value in outputs.items())
    for what, shape in rows.items():
        if shape != (len(t),):
            raise ValueError(f"{model}: the run has {len(t)} times but "
                             f"{shape[0] if shape else 0} rows of {what}: one row per time")


def writable(path) -> Path:
    """path, if a page can be written there (its folder exists and is writable)."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"cannot write the page to {path}: it is a folder")
    parent = path.resolve().parent
    if not parent.is_dir():
        raise FileNotFoundError(f"cannot write the page to {path}: the folder {parent} does not "
                                f"exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PermissionError(f"cannot write the page to {path}: the folder {parent} is not "
                              f"writable")
    return path


def _named(what, given, known, model, hint):
    names = [name_of(g) for g in given]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"{model}: {what} {', '.join(map(repr, unknown))} not in the model "
                         f"(it has {', '.join(sorted(known)) or 'none'}){hint}")
    return names


def _objects(scene, shapes, boxes, size):
    objects, replaced = [], set()
    for shape in shapes:
        if not isinstance(shape, Shape):
            raise TypeError(f"{scene.model}: shapes must be codegen.animation Box, Sphere, "
                            f"Cylinder or Mesh, got {type(shape).__name__}")
    hint = "; pose_outputs(..., frames=, points=) adds more"
    _named("frame", [s.frame for s in shapes if s.frame is not None], scene.R, scene.model, hint)
    _named("point", [s.point for s in shapes], scene.p, scene.model, hint)
    for k, shape in enumerate(shapes):
        frame = name_of(shape.frame) if shape.frame is not None else None
        replaced.add(frame)
        geometry = shape.geometry()
        for key in ("vertices", "faces"):
            if key in geometry:
                geometry[key] = _b64(geometry[key], geometry[key].dtype)
        offset = np.array(shape.offset, dtype=float).ravel()
        if offset.shape != (3,) or not np.isfinite(offset).all():
            raise ValueError(f"{scene.model}: a shape's offset must be 3 finite numbers, got "
                             f"{shape.offset!r}")
        rotation = np.eye(3) if shape.rotation is None else np.array(shape.rotation, float)
        if rotation.shape != (3, 3) or not np.allclose(rotation @ rotation.T, np.eye(3),
                                                       atol=1e-6) or np.linalg.det(rotation) < 0:
            raise ValueError(f"{scene.model}: a shape's rotation must be a 3 x 3 rotation "
                             f"matrix, got {shape.rotation!r}")
        objects.append(dict(geometry, frame=frame, point=name_of(shape.point), opacity=1.0,
                            rotation=_quaternions(rotation)[0].tolist(), offset=offset.tolist(),
                            color=shape.color or PALETTE[k % len(PALETTE)]))
    for k, (body, frame, point, values) in enumerate(scene.bodies):
        if not boxes or frame in replaced:
            continue
        sides, axes = equivalent_box(values[0], np.array(
            [[values[1], values[4], values[6]], [values[4], values[2], values[5]],
             [values[6], values[5], values[3]]]))
        if not sides.any():
            sides = np.full(3, 0.05 * size)
        objects.append(dict(Box(frame, point, sides).geometry(), frame=frame, point=point,
                            rotation=_quaternions(axes)[0].tolist(), offset=[0, 0, 0],
                            color=PALETTE[k % len(PALETTE)], name=body,
                            opacity=BOX_OPACITY))       # the joint links show through
    for k, (particle, point, mass) in enumerate(scene.particles):
        objects.append(dict(kind="sphere", radius=0.03 * size, frame=None, point=point,
                            opacity=1.0,
                            rotation=[0, 0, 0, 1], offset=[0, 0, 0],
                            color=PALETTE[(k + len(scene.bodies)) % len(PALETTE)], name=particle))
    return objects


def animate(mod, run, path="motion.html", *, shapes=(), outputs=(), traces=(), frames=False,
            boxes=True, title=None, speed=1.0) -> Path:
    """Write one self-contained HTML page that plays the run's motion in 3-D (three.js).

    Parameters
    ----------
    mod : CompiledModel or None
        The model the run comes from, compiled with ``pose_outputs`` among its outputs;
        checked against the run (None: trust the run, as ``run.animate`` does).
    run : SimulationResult
        Its output times are the page's frames (``t_eval=np.arange(0, T, 1 / 60)`` plays
        smoothly); its outputs hold the poses.
    path : where the page goes (written atomically).
    shapes : Box, Sphere, Cylinder, Mesh on the model's frames and points; a shape on a
        body's frame replaces the body's equivalent box.
    outputs : names of the run's outputs to show beside the time.
    traces : names of points whose paths are drawn.
    frames : True (every body's frame) or names of frames whose axes are drawn.
    boxes : draw each rigid body as its equivalent box (default True).
    title, speed : the page's title and its starting playback speed.

    A flexible body is drawn deformed, through its sample points (``pose_outputs``):
    a chain of rods root to tip for a beam, dots for other node data.

    Returns the path. Every check (the run against the model, the names, the folder) is
    made before anything is written.
    """
    model = _check_run(mod, run)
    scene = Scene(run.t, run.outputs, model)
    outputs = [outputs] if isinstance(outputs, str) else list(outputs)
    _named("output", outputs, [n for n in run.outputs if not n.startswith(PREFIX)], model,
           "; generate(..., outputs=...) adds outputs")
    traces = _named("trace point", [traces] if isinstance(traces, str) else traces, scene.p,
                    model, "; pose_outputs(..., points=) adds points")
    body_points = {frame: point for _, frame, point, _ in scene.bodies}
    triads = list(body_points) if frames is True else _named(
        "frame", [] if frames is False else frames, scene.R, model,
        "; pose_outputs(..., frames=) adds frames")
    if not (isinstance(speed, (int, float)) and np.isfinite(speed) and speed > 0):
        raise ValueError(f"{model}: speed must be a positive number, got {speed!r}")
    path = writable(path)
    centre, size = scene.extent()
    objects = _objects(scene, list(shapes), boxes, max(size, 0.1))
    size = max([size, 0.1] + [max(o["size"]) for o in objects if o["kind"] == "box"])
    n = len(scene.t)
    data = dict(
        title=title or model, t=_b64(scene.t, np.float64), up=np.asarray(scene.up, float).tolist(),
        centre=centre.tolist(), size=size, speed=float(speed),
        frames={f: _b64(_quaternions(R)) for f, R in scene.R.items()},
        points={p: _b64(x.reshape(n, 3)) for p, x in scene.p.items()},
        objects=objects,
        links=[list(link) for link in scene.links], traces=traces,
        flexible=[dict(name=body, style=style, count=x.shape[1], nodes=_b64(x),
                       color=PALETTE[(k + len(scene.bodies) + len(scene.particles))
                                     % len(PALETTE)])
                  for k, (body, style, x) in enumerate(scene.flexible)],
        triads=[dict(frame=f, point=body_points.get(f)) for f in triads],
        outputs={o: dict(values=_b64(np.asarray(run.outputs[o], float).reshape(n, -1)),
                         width=int(np.prod(np.shape(run.outputs[o])[1:], dtype=int)))
                 for o in outputs})
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    three = resources.files(__package__).joinpath("vendor/three.module.min.js").read_text()
    player = (TEMPLATE_DIR / "animation" / "player.js").read_text()
    page = render("animation/page.html.j2", title=html.escape(data["title"]), scene=payload, three=three,
                  player=player, three_version=THREE_VERSION)
    write_atomic(path, page)
    return path
