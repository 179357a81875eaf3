"""URDF files read into plain data, checked: links, joints and the tree they form.

Only the standard library's ``xml.etree`` is used. The result, a
:class:`Description`, holds the file's numbers as floats and its names as
strings; :mod:`codegen.robots.builder` turns it into ``sympy.physics.mechanics``
objects. Every refusal is a :class:`URDFError` that names the file, the link
or the joint, and what is wrong.

The tree is walked as Pinocchio's URDF parser walks it (urdfdom keeps a
link's child joints in a map ordered by joint name; Pinocchio adds joints
depth first in that order), so that coordinates and speeds come in
Pinocchio's order.
"""
from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from .rotations import snap_unit

__all__ = ["URDFError", "Inertial", "Visual", "Link", "Joint", "Description", "parse_urdf",
           "MOVABLE"]

#: the joint types a model can be built from (fixed joints merge their child into the parent)
MOVABLE = ("revolute", "continuous", "prismatic")
_HINTS = {
    "floating": "a free-flying root is built by from_urdf(..., floating_base=True); "
                "a floating joint below the root is not supported",
    "planar": "planar joints are not supported; write it as two prismatic joints and a "
              "revolute one through massless links",
}
_XACRO_NAMESPACES = ("http://www.ros.org/wiki/xacro", "http://wiki.ros.org/xacro",
                     "http://ros.org/wiki/xacro")


class URDFError(ValueError):
    """A URDF file that cannot be turned into a model: the message names the file,
    the link or joint, and what is wrong."""


@dataclass(frozen=True)
class Inertial:
    """A link's mass, mass centre and inertia about it, as the file gives them: the
    inertia tensor's entries in the inertial frame, which is turned by rpy from the
    link frame and whose origin (xyz) is the mass centre."""
    mass: float
    xyz: tuple
    rpy: tuple
    inertia: tuple          # (ixx, iyy, izz, ixy, iyz, ixz)

    def is_zero(self) -> bool:
        return self.mass == 0 and not any(self.inertia)


@dataclass(frozen=True)
class Visual:
    """One visual element of a link: a shape at an origin in the link frame.

    shape: 'mesh' (params: filename, scale), 'box' (size), 'cylinder' (radius,
    length) or 'sphere' (radius); rgba: the material's colour, if the file gives one."""
    link: str
    xyz: tuple
    rpy: tuple
    shape: str
    params: dict
    rgba: tuple | None = None


@dataclass(frozen=True)
class Link:
    name: str
    inertial: Inertial | None
    visuals: tuple = ()


@dataclass(frozen=True)
class Joint:
    name: str
    type: str
    parent: str
    child: str
    xyz: tuple
    rpy: tuple
    axis: tuple             # unit vector in the joint (child) frame
    damping: float = 0.0
    mimic: tuple | None = None      # (joint, multiplier, offset)


@dataclass
class Description:
    """A URDF file's tree. ``joints``: in Pinocchio's depth-first order (fixed joints
    included); ``children``: link -> its child joints in that order."""
    name: str
    path: str
    root: str
    links: dict
    joints: list
    children: dict = field(default_factory=dict)

    def joint(self, name: str) -> Joint:
        return self._by_name[name]

    def __post_init__(self):
        self._by_name = {j.name: j for j in self.joints}

    def subtree(self, link: str) -> list:
        """link and the links below it, depth first."""
        out, stack = [], [link]
        while stack:
            k = stack.pop()
            out.append(k)
            stack.extend(j.child for j in reversed(self.children.get(k, [])))
        return out


# -- reading -----------------------------------------------------------------------

class _Reader:
    """Attribute parsing with errors that say where."""

    def __init__(self, path):
        self.path = path

    def fail(self, where, what):
        return URDFError(f"{self.path}: {where}: {what}")

    def numbers(self, elem, attr, n, where, default=None):
        text = elem.get(attr) if elem is not None else None
        if text is None:
            if default is None:
                raise self.fail(where, f"<{elem.tag if elem is not None else '?'}> has no "
                                       f"'{attr}' attribute")
            return default
        parts = text.split()
        try:
            values = tuple(float(s) for s in parts)
        except ValueError:
            raise self.fail(where, f"{attr}={text!r} is not {n} number(s)") from None
        if len(values) != n or not all(math.isfinite(v) for v in values):
            raise self.fail(where, f"{attr}={text!r} is not {n} finite number(s)")
        return values

    def number(self, elem, attr, where, default=None):
        d = None if default is None else (default,)
        return self.numbers(elem, attr, 1, where, d)[0]

    def origin(self, parent, where):
        o = parent.find("origin")
        if o is None:
            return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
        return (self.numbers(o, "xyz", 3, where, (0.0, 0.0, 0.0)),
                self.numbers(o, "rpy", 3, where, (0.0, 0.0, 0.0)))


def _refuse_xacro(path, root):
    hint = (f"expand it first: xacro {os.path.basename(path)} > "
            f"{os.path.basename(path).removesuffix('.xacro').removesuffix('.urdf')}.urdf")
    if str(path).endswith(".xacro"):
        raise URDFError(f"{path}: a xacro file, not a URDF; {hint}")
    if root is None:
        return
    for elem in root.iter():
        ns = elem.tag[1:].split("}")[0] if elem.tag.startswith("{") else ""
        if ns in _XACRO_NAMESPACES:
            raise URDFError(f"{path}: contains xacro macros (<xacro:{elem.tag.split('}')[1]}>); "
                            f"{hint}")
        for k, v in elem.attrib.items():
            if "${" in v or "$(" in v:
                raise URDFError(f"{path}: <{elem.tag} {k}={v!r}> is a xacro expression; {hint}")


def _inertial(rd, elem, where) -> Inertial | None:
    i = elem.find("inertial")
    if i is None:
        return None
    xyz, rpy = rd.origin(i, where)
    mass = i.find("mass")
    if mass is None:
        raise rd.fail(where, "<inertial> has no <mass>")
    m = rd.number(mass, "value", where)
    it = i.find("inertia")
    if it is None:
        raise rd.fail(where, "<inertial> has no <inertia>")
    entries = tuple(rd.number(it, k, where) for k in ("ixx", "iyy", "izz", "ixy", "iyz", "ixz"))
    return Inertial(m, xyz, rpy, entries)


def _material_colours(rd, root) -> dict:
    out = {}
    for mat in root.findall("material"):
        c = mat.find("color")
        if mat.get("name") and c is not None:
            out[mat.get("name")] = rd.numbers(c, "rgba", 4, f"material {mat.get('name')!r}")
    return out


def _visuals(rd, elem, name, colours) -> tuple:
    out = []
    for k, v in enumerate(elem.findall("visual")):
        where = f"link {name!r}, visual {k}"
        xyz, rpy = rd.origin(v, where)
        g = v.find("geometry")
        shape = None if g is None or len(g) == 0 else g[0]
        if shape is None:
            raise rd.fail(where, "<visual> has no <geometry>")
        kind = shape.tag
        if kind == "mesh":
            if not shape.get("filename"):
                raise rd.fail(where, "<mesh> has no filename")
            params = {"filename": shape.get("filename"),
                      "scale": rd.numbers(shape, "scale", 3, where, (1.0, 1.0, 1.0))}
        elif kind == "box":
            params = {"size": rd.numbers(shape, "size", 3, where)}
        elif kind == "cylinder":
            params = {"radius": rd.number(shape, "radius", where),
                      "length": rd.number(shape, "length", where)}
        elif kind == "sphere":
            params = {"radius": rd.number(shape, "radius", where)}
        else:
            raise rd.fail(where, f"unknown geometry <{kind}> (mesh, box, cylinder or sphere)")
        rgba = None
        mat = v.find("material")
        if mat is not None:
            c = mat.find("color")
            rgba = rd.numbers(c, "rgba", 4, where) if c is not None else colours.get(mat.get("name"))
        out.append(Visual(name, xyz, rpy, kind, params, rgba))
    return tuple(out)


def _joint(rd, elem, mimic: bool) -> Joint:
    name = elem.get("name")
    if not name:
        raise rd.fail("a <joint>", "has no name")
    where = f"joint {name!r}"
    kind = elem.get("type")
    if kind is None:
        raise rd.fail(where, "has no type")
    if kind not in MOVABLE + ("fixed",):
        hint = _HINTS.get(kind, "the supported types are revolute, continuous, prismatic and fixed")
        raise rd.fail(where, f"joint type {kind!r} is not supported: {hint}")
    ends = []
    for tag in ("parent", "child"):
        e = elem.find(tag)
        if e is None or not e.get("link"):
            raise rd.fail(where, f"has no <{tag} link=...>")
        ends.append(e.get("link"))
    xyz, rpy = rd.origin(elem, where)
    axis = rd.numbers(elem.find("axis"), "xyz", 3, where, (1.0, 0.0, 0.0)) \
        if elem.find("axis") is not None else (1.0, 0.0, 0.0)
    norm = math.sqrt(sum(a * a for a in axis))
    if kind != "fixed" and norm < 1e-12:
        raise rd.fail(where, f"axis {axis} has no direction")
    if kind != "fixed":
        axis = tuple(snap_unit(a / norm) for a in axis)
    dyn = elem.find("dynamics")
    damping = rd.number(dyn, "damping", where, 0.0) if dyn is not None else 0.0
    if damping < 0:
        raise rd.fail(where, f"damping {damping} is negative")
    m = elem.find("mimic") if mimic and kind != "fixed" else None
    if m is not None:
        if not m.get("joint"):
            raise rd.fail(where, "<mimic> names no joint")
        m = (m.get("joint"), rd.number(m, "multiplier", where, 1.0),
             rd.number(m, "offset", where, 0.0))
    return Joint(name, kind, ends[0], ends[1], xyz, rpy, axis, damping, m)


def parse_urdf(path, mimic: bool = True) -> Description:
    """The tree of a URDF file, checked (see the module docstring). mimic=False drops
    the <mimic> tags (each such joint then moves on its own, as in Pinocchio's default)."""
    path = os.fspath(path)
    _refuse_xacro(path, None)
    try:
        tree = ET.parse(path)
    except ET.ParseError as exc:
        raise URDFError(f"{path}: not well-formed XML ({exc})") from None
    except OSError as exc:
        raise URDFError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    root = tree.getroot()
    _refuse_xacro(path, root)
    if root.tag != "robot":
        raise URDFError(f"{path}: the root element is <{root.tag}>, not <robot>")
    rd = _Reader(path)
    colours = _material_colours(rd, root)
    links = {}
    for elem in root.findall("link"):
        name = elem.get("name")
        if not name:
            raise rd.fail("a <link>", "has no name")
        if name in links:
            raise rd.fail(f"link {name!r}", "is defined twice")
        where = f"link {name!r}"
        links[name] = Link(name, _inertial(rd, elem, where), _visuals(rd, elem, name, colours))
    if not links:
        raise URDFError(f"{path}: no <link> in <robot> (an empty description, or one that "
                        f"still needs xacro to expand it)")
    joints, parent_of = {}, {}
    for elem in root.findall("joint"):
        j = _joint(rd, elem, mimic)
        if j.name in joints:
            raise rd.fail(f"joint {j.name!r}", "is defined twice")
        for end in (j.parent, j.child):
            if end not in links:
                raise rd.fail(f"joint {j.name!r}", f"names link {end!r}, which is not defined")
        if j.parent == j.child:
            raise rd.fail(f"joint {j.name!r}", f"joins link {j.child!r} to itself")
        if j.child in parent_of:
            raise rd.fail(f"link {j.child!r}", f"is the child of joints {parent_of[j.child]!r} "
                                               f"and {j.name!r}: a closed kinematic loop "
                                               f"(a URDF describes a tree)")
        parent_of[j.child] = j.name
        joints[j.name] = j
    roots = [k for k in links if k not in parent_of]
    if not roots:
        raise URDFError(f"{path}: every link is some joint's child: the joints form a closed "
                        f"kinematic loop and there is no root link")
    if len(roots) > 1:
        raise URDFError(f"{path}: {len(roots)} root links ({', '.join(map(repr, roots[:5]))}"
                        f"{', ...' if len(roots) > 5 else ''}): the links must form one tree, "
                        f"joined to one root")
    children = {}
    for j in sorted(joints.values(), key=lambda j: j.name):    # urdfdom's std::map order
        children.setdefault(j.parent, []).append(j)
    order = []                  # depth first, each link's child joints in name order
    _depth_first(roots[0], children, order)
    seen = {roots[0]} | {j.child for j in order}
    unreached = [k for k in links if k not in seen]
    if unreached:
        loop = sorted(parent_of[k] for k in unreached if k in parent_of)
        raise URDFError(f"{path}: joints {', '.join(map(repr, loop[:6]))} form a closed "
                        f"kinematic loop not connected to the root link {roots[0]!r}")
    desc = Description(root.get("name") or os.path.splitext(os.path.basename(path))[0],
                       path, roots[0], links, order, children)
    _check_mimic(rd, desc)
    return desc


def _depth_first(root, children, order):
    """Append the joints below root to order, depth first in children's order."""
    stack = [iter(children.get(root, []))]
    while stack:
        j = next(stack[-1], None)
        if j is None:
            stack.pop()
            continue
        order.append(j)
        stack.append(iter(children.get(j.child, [])))


def _check_mimic(rd, desc):
    """Each mimic joint follows a defined, moving joint, and no chain of them is a loop."""
    names = {j.name: j for j in desc.joints}
    for j in desc.joints:
        if j.mimic is None:
            continue
        target = names.get(j.mimic[0])
        where = f"joint {j.name!r}"
        if target is None:
            raise rd.fail(where, f"mimics joint {j.mimic[0]!r}, which is not defined")
        if target.type == "fixed":
            raise rd.fail(where, f"mimics joint {target.name!r}, which is fixed")
        seen = {j.name}
        while target is not None and target.mimic is not None:   # an undefined one: its turn
            if target.name in seen:
                raise rd.fail(where, "mimics itself through a chain of mimic joints")
            seen.add(target.name)
            target = names.get(target.mimic[0])
