"""Each joint's own parameters beside the bodies': viscous friction fv·u, Coulomb friction
fc·sign(u), rotor inertia (armature) Ia·u' and a torque offset τ0, each entering its
joint's row of Y alone (Khalil's standard set adds them to each link's ten)."""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sm

__all__ = ["JointTerm", "joint_terms", "joint_columns", "KINDS"]

#: the terms by name: (symbol prefix, the column's entry in u, u')
KINDS = {"viscous": "fv", "coulomb": "fc", "armature": "Ia", "offset": "tau0"}


@dataclass
class JointTerm:
    """One joint parameter: its symbol, the speed it acts along and its kind (KINDS)."""
    symbol: sm.Symbol
    speed: int
    kind: str


def joint_terms(model, kinds) -> list:
    """The JointTerms of kinds (a subset of KINDS) for each joint: a URDF robot's joints
    (a floating base's six speeds have none), else every speed of the model."""
    kinds = list(kinds or ())
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"joint terms {unknown} are not among {sorted(KINDS)}")
    names = getattr(model, "joint_names", None)
    if names:
        first = 6 if getattr(model, "floating_base", False) else 0
        joints = [(first + k, name) for k, name in enumerate(names)]
    else:
        joints = [(k, str(u.func).removeprefix("u_")) for k, u in enumerate(model.u_ind)]
    return [JointTerm(sm.Symbol(f"{KINDS[kind]}_{name}", real=True), k, kind)
            for k, name in joints for kind in kinds]


def joint_columns(terms, kin) -> list:
    """Y's column of each term over kin's speeds (plain symbols): nonzero in its row."""
    n = len(kin.us)
    cols = []
    for term in terms:
        u, ud = kin.us[term.speed], kin.uds[term.speed]
        entry = {"viscous": u, "coulomb": sm.sign(u), "armature": ud,
                 "offset": sm.S.One}[term.kind]
        cols.append([entry if j == term.speed else sm.S.Zero for j in range(n)])
    return cols
