"""What is drawn: the user's shapes on frames and points (as PyDy's ``pydy.viz.shapes``
had them), and each rigid body's equivalent box.

A shape is attached to a point (its centre) and, except a sphere, to a frame (its
axes); the frame and the point are named by the SymPy objects or their names and must
be carried by the model's animation outputs (``pose_outputs(..., frames=, points=)``
adds frames and points that no body has). ``offset`` moves the shape in the frame's
components and ``rotation`` (3 x 3, the shape's axes in the frame's components) turns
it. A shape on a body's frame replaces that body's equivalent box.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .collada import read_collada

__all__ = ["Shape", "Box", "Sphere", "Cylinder", "Mesh", "equivalent_box", "read_mesh", "MeshError",
           "name_of"]


def name_of(obj) -> str:
    """The name of a frame or point given as a SymPy object or as a string."""
    return obj if isinstance(obj, str) else getattr(obj, "name", repr(obj))


@dataclass(frozen=True)
class Shape:
    frame: object
    point: object
    color: str = field(default=None, kw_only=True)            # a CSS colour
    offset: tuple = field(default=(0.0, 0.0, 0.0), kw_only=True)
    rotation: tuple = field(default=None, kw_only=True)       # 3 x 3, its axes in the frame

    def geometry(self) -> dict:
        raise NotImplementedError

    def _numbers(self, what, values, count):
        values = np.array(values, dtype=float).ravel()
        if values.shape != (count,) or not np.isfinite(values).all() or (values < 0).any():
            raise ValueError(f"{type(self).__name__} on {name_of(self.point)!r}: {what} must be "
                             f"{count} finite numbers >= 0, got {values.tolist()}")
        return values.tolist()


@dataclass(frozen=True)
class Box(Shape):
    size: tuple = (0.1, 0.1, 0.1)            # along the frame's x, y, z

    def geometry(self):
        return {"kind": "box", "size": self._numbers("size", self.size, 3)}


@dataclass(frozen=True)
class Sphere(Shape):
    frame: object = None
    point: object = None
    radius: float = 0.05

    def geometry(self):
        return {"kind": "sphere", "radius": self._numbers("radius", self.radius, 1)[0]}


@dataclass(frozen=True)
class Cylinder(Shape):
    radius: float = 0.05
    length: float = 0.1
    axis: str = "z"                          # the frame's axis it lies along

    def geometry(self):
        if self.axis not in ("x", "y", "z"):
            raise ValueError(f"Cylinder on {name_of(self.point)!r}: axis must be 'x', 'y' or "
                             f"'z', got {self.axis!r}")
        radius, length = self._numbers("radius and length", (self.radius, self.length), 2)
        return {"kind": "cylinder", "radius": radius, "length": length, "axis": self.axis}


@dataclass(frozen=True)
class Mesh(Shape):
    file: object = None                      # an STL (binary or ASCII), OBJ or COLLADA file
    scale: object = 1.0                      # a factor, or one per axis

    def geometry(self):
        vertices, faces = read_mesh(self.file)
        scale = np.broadcast_to(np.array(self.scale, dtype=float), 3) if np.size(self.scale) \
            in (1, 3) else self.scale
        scale = np.array(self._numbers("scale", scale, 3))         # one factor or one per axis
        return {"kind": "mesh", "vertices": (vertices * scale).astype(np.float32),
                "faces": faces.astype(np.uint32)}


class MeshError(ValueError):
    """A mesh file that cannot be read: the message names the file and what is wrong."""


def _obj(data: bytes) -> tuple:
    """(vertices, triangles) of a Wavefront OBJ (polygons fanned, 1-based or negative
    indices); a line it cannot read is a ValueError that names it."""
    vertices, faces = [], []
    for n, line in enumerate(data.decode(errors="replace").splitlines(), 1):
        parts = line.split()
        try:
            if parts[:1] == ["v"]:
                if len(parts) < 4:
                    raise ValueError(f"a vertex has {len(parts) - 1} coordinates, not 3")
                vertices.append([float(c) for c in parts[1:4]])
            elif parts[:1] == ["f"]:
                idx = [int(p.split("/")[0]) for p in parts[1:]]
                if 0 in idx:
                    raise ValueError("a face names vertex 0 (OBJ counts from 1)")
                idx = [i - 1 if i > 0 else len(vertices) + i for i in idx]
                faces += [[idx[0], idx[k], idx[k + 1]] for k in range(1, len(idx) - 1)]
        except ValueError as exc:
            raise ValueError(f"line {n} ({line.strip()[:60]!r}): {exc}") from None
    return np.array(vertices, float).reshape(-1, 3), np.array(faces, int).reshape(-1, 3)


def _stl(data: bytes) -> tuple:
    """(vertices, triangles) of a binary or ASCII STL; a truncated binary one (its size
    not what its header counts) or an ASCII vertex that is not 3 numbers is a ValueError."""
    # a binary STL's triangle count holds a zero byte (below 2**24 triangles), text none
    if data.lstrip()[:5].lower() == b"solid" and b"\0" not in data:      # ASCII
        words, vertices = data.decode(errors="replace").split(), []
        for i, w in enumerate(words):
            if w == "vertex":
                try:
                    vertices.append([float(c) for c in words[i + 1:i + 4]])
                except ValueError:
                    raise ValueError(f"vertex {len(vertices)} ({' '.join(words[i + 1:i + 4])!r})"
                                     f" is not 3 numbers") from None
                if len(vertices[-1]) != 3:
                    raise ValueError(f"vertex {len(vertices) - 1} is cut short: the file ends")
        if len(vertices) % 3:
            raise ValueError(f"{len(vertices)} vertices are not whole triangles (truncated?)")
        vertices = np.array(vertices, float).reshape(-1, 3)
    elif len(data) < 84:
        raise ValueError(f"{len(data)} bytes: too short for an STL (a binary one has an "
                         f"84-byte header)")
    else:                                                                # binary
        count = struct.unpack("<I", data[80:84])[0]
        if len(data) != 84 + 50 * count:
            raise ValueError(f"a binary STL whose header counts {count} triangles "
                             f"({84 + 50 * count} bytes) has {len(data)} bytes: truncated or "
                             f"damaged")
        rec = np.frombuffer(data, dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)),
                                                  ("a", "<u2")]), count=count, offset=84)
        vertices = rec["v"].reshape(-1, 3).astype(float)
    return vertices, np.arange(len(vertices)).reshape(-1, 3)


#: the mesh readers by suffix: bytes -> (vertices (n, 3), triangles (m, 3))
_READERS = {".obj": _obj, ".stl": _stl, ".dae": read_collada}


def read_mesh(path) -> tuple:
    """(vertices (n, 3), triangles (m, 3)) of an STL, OBJ or COLLADA (.dae) file. A file
    that is not there is a FileNotFoundError, one that cannot be read a MeshError; both
    name the file."""
    path = Path(path) if path is not None else None
    if path is None or not path.is_file():
        raise FileNotFoundError(f"mesh file {path} not found")
    suffix = path.suffix.lower()
    if suffix not in _READERS:
        raise MeshError(f"mesh file {path}: give an .stl, .obj or .dae file")
    try:
        vertices, faces = _READERS[suffix](path.read_bytes())
    except (ValueError, IndexError, TypeError, struct.error) as exc:   # the file's fault
        raise MeshError(f"mesh file {path}: {exc}; export it again (e.g. from MeshLab or "
                        f"Blender), or give another file") from None
    if not len(faces) or not np.isfinite(vertices).all() or faces.max() >= len(vertices) \
            or faces.min() < 0:
        raise MeshError(f"mesh file {path} has no valid triangles (none, a coordinate that is "
                        f"not finite, or a face naming a vertex it does not have)")
    return vertices, faces


def equivalent_box(mass: float, inertia: np.ndarray) -> tuple:
    """(sides (3,), principal axes (3, 3), columns right-handed) of the uniform box with
    the body's mass and principal moments: I1 = m (b² + c²) / 12 and so on. A flat or
    thin body (a disk's I3 = I1 + I2) gets a thickness of 2 % of its largest side."""
    inertia = np.asarray(inertia, dtype=float)
    moments, axes = np.linalg.eigh(inertia)
    if np.linalg.det(axes) < 0:
        axes[:, 2] *= -1
    if not (mass > 0) or not np.isfinite(moments).all():
        return np.zeros(3), axes
    total = moments.sum()
    sides = np.sqrt(np.clip(6.0 * (total - 2.0 * moments) / mass, 0.0, None))
    return np.maximum(sides, 0.02 * sides.max()), axes
