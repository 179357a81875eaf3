"""Triangles of a COLLADA (.dae) file, as URDF visuals use them: every geometry the
file's scene instantiates, through its nodes' transforms (matrix, translate, rotate,
scale; nested nodes and instance_node), in metres (the asset's ``<unit meter>``).

The asset's ``<up_axis>`` is not applied: robot description files carry the link's own
coordinates whatever it says (MeshLab writes Y_UP into every file it saves), and the
tools that draw URDF models (rviz, Pinocchio's loaders through assimp) read them so.
Triangles, polylists and polygons are read (polygons fanned); lines, materials,
textures and skinning are not.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

__all__ = ["read_collada"]


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _children(element, name: str):
    return [c for c in element if _local(c.tag) == name]


def _numbers(element, dtype=float) -> np.ndarray:
    return np.array((element.text or "").split(), dtype=dtype)


def _transform(node) -> np.ndarray:
    """The node's 4 x 4 transform, its elements applied in document order."""
    T = np.eye(4)
    for c in node:
        kind, v = _local(c.tag), None
        if kind in ("matrix", "translate", "rotate", "scale"):
            v = _numbers(c)
        if kind == "matrix" and v.size == 16:
            T = T @ v.reshape(4, 4)
        elif kind == "translate" and v.size == 3:
            M = np.eye(4)
            M[:3, 3] = v
            T = T @ M
        elif kind == "scale" and v.size == 3:
            T = T @ np.diag([*v, 1.0])
        elif kind == "rotate" and v.size == 4:
            axis, angle = v[:3] / np.linalg.norm(v[:3]), np.radians(v[3])
            K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]],
                          [-axis[1], axis[0], 0]])
            M = np.eye(4)
            M[:3, :3] = np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K
            T = T @ M
    return T


def _geometry(mesh, ids) -> tuple:
    """(vertices (n, 3), triangles (m, 3)) of a <mesh>."""
    verts = {}
    for v in _children(mesh, "vertices"):
        for inp in _children(v, "input"):
            if inp.get("semantic") == "POSITION":
                verts[v.get("id")] = inp.get("source", "").lstrip("#")
    positions, faces = [], []
    for prim in mesh:
        kind = _local(prim.tag)
        if kind not in ("triangles", "polylist", "polygons"):
            continue
        inputs = _children(prim, "input")
        stride = 1 + max([int(i.get("offset", 0)) for i in inputs] or [0])
        vin = [i for i in inputs if i.get("semantic") == "VERTEX"]
        if not vin:
            continue
        offset = int(vin[0].get("offset", 0))
        source = ids.get(verts.get(vin[0].get("source", "").lstrip("#")))
        arrays = _children(source, "float_array") if source is not None else []
        if not arrays:
            raise ValueError(f"a {kind}'s vertex positions are missing")
        xyz = _numbers(arrays[0])
        accessor = source.find(".//{*}accessor")
        step = int(accessor.get("stride", 3)) if accessor is not None else 3
        points = xyz[:xyz.size // step * step].reshape(-1, step)[:, :3]
        base = sum(len(p) for p in positions)
        positions.append(points)
        polygons = [_numbers(p, int) for p in _children(prim, "p")]
        if kind == "polylist":
            counts = _numbers(_children(prim, "vcount")[0], int) if _children(prim, "vcount") \
                else np.full(int(prim.get("count", 0)), 3)
            flat = polygons[0] if polygons else np.zeros(0, int)
            ends = np.cumsum(counts) * stride
            polygons = np.split(flat[:ends[-1] if len(ends) else 0], ends[:-1])
        elif kind == "triangles":
            flat = polygons[0] if polygons else np.zeros(0, int)
            polygons = list(flat[:flat.size // (3 * stride) * 3 * stride].reshape(-1, 3 * stride))
        for poly in polygons:
            idx = poly[offset::stride] + base
            faces += [[idx[0], idx[k], idx[k + 1]] for k in range(1, len(idx) - 1)]
    if not positions:
        return np.zeros((0, 3)), np.zeros((0, 3), int)
    return np.concatenate(positions), np.array(faces, int).reshape(-1, 3)


def read_collada(data: bytes) -> tuple:
    """(vertices (n, 3) in metres, triangles (m, 3)) of a COLLADA document; one it cannot
    read is a ValueError saying why (codegen.description.shapes.read_mesh names the file)."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ValueError(f"not valid COLLADA XML: {exc}") from None
    ids = {e.get("id"): e for e in root.iter() if e.get("id")}
    unit = root.find("./{*}asset/{*}unit")
    meter = float(unit.get("meter", 1.0)) if unit is not None else 1.0
    scene = root.find("./{*}scene/{*}instance_visual_scene")
    top = ids.get(scene.get("url", "").lstrip("#")) if scene is not None else None
    if top is None:                               # no scene: the first visual scene
        top = root.find(".//{*}library_visual_scenes/{*}visual_scene")
    vertices, faces, count, cache = [], [], 0, {}

    def walk(node, T, depth):
        nonlocal count
        if depth > 64:
            raise ValueError("its nodes nest too deep (a cycle?)")
        T = T @ _transform(node)
        for c in node:
            kind = _local(c.tag)
            if kind == "instance_geometry":
                geometry = ids.get(c.get("url", "").lstrip("#"))
                mesh = geometry.find("./{*}mesh") if geometry is not None else None
                if mesh is None:
                    continue
                key = id(mesh)
                if key not in cache:
                    cache[key] = _geometry(mesh, ids)
                v, f = cache[key]
                vertices.append(v @ T[:3, :3].T + T[:3, 3])
                faces.append(f + count)
                count += len(v)
            elif kind == "node":
                walk(c, T, depth + 1)
            elif kind == "instance_node" and c.get("url", "").lstrip("#") in ids:
                walk(ids[c.get("url").lstrip("#")], T, depth + 1)

    if top is not None:
        walk(top, np.eye(4), 0)
    if not vertices:
        return np.zeros((0, 3)), np.zeros((0, 3), int)
    faces = np.concatenate(faces)
    used, faces = np.unique(faces, return_inverse=True)   # sources may hold more points
    return meter * np.concatenate(vertices)[used], faces.reshape(-1, 3)
