"""A URDF model's link visuals as animation shapes (codegen.robots keeps them in
``RobotModel.geometry``): boxes, cylinders, spheres and meshes on the bodies' frames,
at the visuals' origins, in their colours."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from ..description.shapes import Box, Cylinder, Mesh, Sphere

__all__ = ["urdf_shapes"]


def _mesh_file(filename: str, mesh_dirs) -> Path | None:
    """A mesh's file from its URDF name: package://pkg/rest and relative names are
    looked for under mesh_dirs (as pkg/rest and as rest)."""
    name = filename.removeprefix("file://")
    if Path(name).is_absolute():
        return Path(name) if Path(name).is_file() else None
    rest = name.removeprefix("package://")
    tails = [rest, rest.split("/", 1)[1]] if "/" in rest else [rest]
    for folder in map(Path, mesh_dirs):
        for tail in tails:
            if (folder / tail).is_file():
                return folder / tail
    return None


def urdf_shapes(model, mesh_dirs=()) -> list:
    """The visuals of a codegen.robots RobotModel as shapes for codegen.animate. Meshes
    are looked for under mesh_dirs (the URDF's folder, package roots); one that is not an
    STL, OBJ or COLLADA file, or that cannot be found, is left out with a warning that
    names it."""
    from ..robots.rotations import rpy_matrix
    shapes = []
    for visual, body, R, p in model.geometry:
        frame, point = model.links[body] if body is not None else (model.frame, model.origin)
        R, p = np.array(R, dtype=float), np.array(p, dtype=float)
        offset = R @ np.array(visual.xyz, dtype=float) + p
        rotation = R @ np.array(rpy_matrix(visual.rpy), dtype=float)
        rgba = visual.rgba or (0.6, 0.6, 0.65, 1.0)
        where = dict(color="#%02x%02x%02x" % tuple(int(round(255 * c)) for c in rgba[:3]),
                     offset=tuple(offset), rotation=tuple(map(tuple, rotation)))
        kind, params = visual.shape, visual.params
        if kind == "box":
            shapes.append(Box(frame, point, params["size"], **where))
        elif kind == "cylinder":
            shapes.append(Cylinder(frame, point, params["radius"], params["length"], axis="z",
                                   **where))
        elif kind == "sphere":
            shapes.append(Sphere(frame, point, radius=params["radius"], **where))
        else:
            found = _mesh_file(params["filename"], mesh_dirs)
            if found is None or found.suffix.lower() not in (".stl", ".obj", ".dae"):
                warnings.warn(f"link {visual.link!r}: mesh {params['filename']!r} left out "
                              f"({'not found' if found is None else 'not STL, OBJ or DAE'})",
                              stacklevel=2)
                continue
            shapes.append(Mesh(frame, point, file=found, scale=params["scale"], **where))
    return shapes
