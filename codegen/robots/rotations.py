"""A URDF origin's rotation from its roll, pitch and yaw, as floats (rpy_matrix) or
exactly orthogonal in Rationals (exact_rpy_matrix, for from_urdf(..., exact=True)), and
the quarter turns the exact model takes, written back into a URDF's text for a float
reader (snap_quarter_turns: Pinocchio then loads the same model)."""
from __future__ import annotations

import math
import re

import sympy as sm

__all__ = ["rpy_matrix", "exact_rpy_matrix", "QUARTER_TURN_TOL", "quarter_turn_rpy",
           "snap_quarter_turns", "snap_unit"]


def rpy_matrix(rpy) -> list:
    """R = Rz(yaw) Ry(pitch) Rx(roll) (URDF's fixed-axis roll, pitch, yaw): components
    in the parent frame = R components in the child frame. Entries within 1e-14 of 0
    or ±1 are made exact, so that quarter and half turns keep their zeros."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p),
                              math.cos(y), math.sin(y))
    R = [[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
         [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
         [-sp, cp * sr, cp * cr]]
    return [[snap_unit(e) for e in row] for row in R]


#: an rpy angle this close to a multiple of π/2, or a rotation whose entries are all this
#: close to 0 or ±1, is taken as the exact quarter turn or signed permutation in an exact
#: model: files write π/2 to 7 to 12 digits (Atlas's float32 1.5707963705, HyQ's 1.57079632679)
QUARTER_TURN_TOL = 1e-7


def _signed_permutation(rpy) -> list | None:
    """rpy_matrix(rpy) rounded to a signed permutation where every entry is within
    QUARTER_TURN_TOL of 0 or ±1, else None."""
    R = rpy_matrix(rpy)
    near = [[round(e) for e in row] for row in R]
    if all(abs(e - n) < QUARTER_TURN_TOL for row, nrow in zip(R, near) for e, n in zip(row, nrow)):
        return near
    return None


def _quarter_turns(angle: float) -> int | None:
    """k where angle is within QUARTER_TURN_TOL of k·(π/2), else None."""
    k = round(angle / (math.pi / 2))
    return k if abs(angle - k * math.pi / 2) < QUARTER_TURN_TOL else None


def exact_rpy_matrix(rpy):
    """rpy_matrix exactly orthogonal, in Rationals: a signed permutation where every entry
    is within QUARTER_TURN_TOL of 0 or ±1, else Rz(yaw) Ry(pitch) Rx(roll) with each
    factor's cosine and sine (1 - t², 2t) / (1 + t²) of the rational t = tan(angle / 2)
    (the float's exact value), or a quarter turn's exact 0 and ±1."""
    near = _signed_permutation(rpy)
    if near is not None:
        return sm.Matrix(near)

    def cs(angle):
        k = _quarter_turns(angle)
        if k is not None:
            return ((1, 0), (0, 1), (-1, 0), (0, -1))[k % 4]
        t = sm.Rational(math.tan(angle / 2))
        return (1 - t * t) / (1 + t * t), 2 * t / (1 + t * t)
    (cr, sr), (cp, sp), (cy, sy) = (cs(a) for a in rpy)
    Rz = sm.Matrix([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    Ry = sm.Matrix([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rx = sm.Matrix([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    return Rz * Ry * Rx


def quarter_turn_rpy(rpy) -> tuple:
    """rpy as floats whose rotation is exact_rpy_matrix(rpy) to rounding: where that is a
    signed permutation, the multiples of π/2 nearest rpy that make it (a gimbal lock's
    roll and yaw included), else each angle within QUARTER_TURN_TOL of a quarter turn made
    k·(π/2) in floats; rpy itself where nothing is snapped."""
    near = _signed_permutation(rpy)
    if near is not None:
        def off(k, a):                  # distance of a from k·(π/2) around the circle
            d = (a - k * math.pi / 2) % (2 * math.pi)
            return min(d, 2 * math.pi - d)
        best = min(((kr, kp, ky) for kr in range(-1, 3) for kp in range(-1, 3)
                    for ky in range(-1, 3)
                    if _signed_permutation([k * math.pi / 2 for k in (kr, kp, ky)]) == near),
                   key=lambda ks: sum(off(k, a) for k, a in zip(ks, rpy)))
        # the written multiple's turn where it names the same angle
        out = []
        for k, a in zip(best, rpy):
            m = round(a / (math.pi / 2))
            out.append(m * (math.pi / 2) if (m - k) % 4 == 0 else k * (math.pi / 2))
        return tuple(float(a) for a in out)
    return tuple(a if _quarter_turns(a) is None else float(_quarter_turns(a) * (math.pi / 2))
                 for a in rpy)


_ORIGIN = re.compile(r"<origin\b[^>]*>")
_RPY = re.compile(r"""(\brpy\s*=\s*)(["'])([^"']*)\2""")


def snap_quarter_turns(text: str) -> tuple:
    """(text, changed): a URDF's text with each <origin>'s rpy replaced by
    quarter_turn_rpy's floats (repr) where they differ, so that a float reader (Pinocchio)
    loads the rotations from_urdf(..., exact=True) builds; changed: how many origins.
    Everything else is kept as written."""
    changed = 0

    def rpy(m):
        nonlocal changed
        try:
            written = tuple(float(s) for s in m.group(3).split())
        except ValueError:
            return m.group(0)
        if len(written) != 3 or not all(math.isfinite(a) for a in written):
            return m.group(0)
        snapped = quarter_turn_rpy(written)
        if snapped == written:
            return m.group(0)
        changed += 1
        return f"{m.group(1)}{m.group(2)}{' '.join(map(repr, snapped))}{m.group(2)}"
    out = _ORIGIN.sub(lambda o: _RPY.sub(rpy, o.group(0)), text)
    return out, changed


def snap_unit(e: float) -> float:
    """e, or the 0 or ±1 it is within 1e-14 of."""
    for exact in (0.0, 1.0, -1.0):
        if abs(e - exact) < 1e-14:
            return exact
    return e
