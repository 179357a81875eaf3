"""Physical checks of a URDF tree (codegen.robots.urdf): masses, inertias, moving mass.

Each refusal is a URDFError naming the file, the link or the joint, and what
is wrong. The checks read the file's numbers as written (per link, before
fixed joints merge links into bodies).
"""
from __future__ import annotations

import numpy as np

from .urdf import Description, URDFError

__all__ = ["check_inertial", "check_moving_mass", "has_mass", "master"]


def check_inertial(desc: Description, link: str, check: bool):
    """Refuse masses and inertias no body has (URDFError naming the link)."""
    i = desc.links[link].inertial
    if i is None or i.is_zero():
        return
    where = f"{desc.path}: link {link!r}"
    hint = ("; from_urdf(..., check_inertia=False) loads it as written, as Pinocchio does, "
            "if the dynamics may use it")
    if i.mass < 0:
        raise URDFError(f"{where}: mass {i.mass} is negative")
    if not check:
        return
    if i.mass == 0:
        raise URDFError(f"{where}: mass 0 with a nonzero inertia (a massless link has no "
                        f"<inertial>, or zero mass and inertia){hint}")
    ixx, iyy, izz, ixy, iyz, ixz = i.inertia
    ev = np.linalg.eigvalsh(np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]))
    tol = 1e-6 * abs(ixx + iyy + izz) + 1e-15     # the files' six significant digits
    moments = ", ".join(f"{e:.6g}" for e in ev)
    if ev[0] < -tol:
        raise URDFError(f"{where}: the inertia is not positive semidefinite (principal "
                        f"moments {moments}){hint}")
    if ev[0] + ev[1] < ev[2] - tol:
        raise URDFError(f"{where}: the inertia violates the triangle inequality (principal "
                        f"moments {moments}: the two smaller sum to less than the largest)"
                        f"{hint}")


def has_mass(desc, link) -> bool:
    """Whether the link has a mass or an inertia."""
    i = desc.links[link].inertial
    return i is not None and not i.is_zero()


def check_moving_mass(desc, speeds):
    """Each speed must move some mass: a joint whose links below are all massless makes
    M singular (URDFError naming the joint)."""
    followers = {}
    for j in desc.joints:
        if j.mimic is not None:
            followers.setdefault(master(desc, j)[0], []).append(j)
    for j in speeds:
        moved = [k for jj in [j] + followers.get(j.name, []) for k in desc.subtree(jj.child)]
        if not any(has_mass(desc, k) for k in moved):
            raise URDFError(f"{desc.path}: joint {j.name!r} moves only massless links "
                            f"({', '.join(map(repr, moved[:4]))}{', ...' if len(moved) > 4 else ''}"
                            f"): the mass matrix would be singular. Give one of them an "
                            f"<inertial>, or make the joint fixed")


def master(desc, j):
    """(master joint name, multiplier, offset) of a mimic joint, through chains."""
    mult, off = 1.0, 0.0
    while j.mimic is not None:
        name, m, o = j.mimic
        mult, off = mult * m, mult * o + off        # q = mult (m q_next + o) + off
        j = desc.joint(name)
    return j.name, mult, off
