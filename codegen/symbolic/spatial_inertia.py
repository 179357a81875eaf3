"""A rigid body's spatial inertia as its ten parameters: (m, h = m c, I about the reference
point), read back from a 6 x 6 matrix W = [[I, h×], [h×ᵀ, m 1]] (``rigid_parameters``), and
applied to a 6-vector (``SpatialInertia``)."""
from __future__ import annotations

import sympy as sm

from .counting import operation_count
from .expressions import vanishes
from .vec3 import add, cross, matvec

__all__ = ["SpatialInertia", "rigid_parameters", "full6", "SYMMETRY_TOL", "PARAMETER_PLACES"]


#: an inertia's entries that should be equal (or zero) may differ by this much, relative
#: to its largest, as URDF inertias written with round-off do (the iiwa's 1e-8 products
#: of inertia, symmetric to 1e-20)
SYMMETRY_TOL = 1e-12


class SpatialInertia:
    """A spatial inertia about the root's origin as (m, h = m c, I_O) (ten numbers), or
    its rate (m = 0): Y (ω; v) = (I ω + h × v; m v + ω × h)."""

    def __init__(self, m, h, I):
        self.m, self.h, self.I = m, list(h), I       # I: 3 x 3 nested lists (symmetric)

    def __call__(self, x):
        w, v = x[:3], x[3:]
        return add(matvec(self.I, w), cross(self.h, v)) + add([self.m * e for e in v],
                                                              cross(w, self.h))

    def __add__(self, other):
        return SpatialInertia(self.m + other.m, add(self.h, other.h),
                        [add(a, b) for a, b in zip(self.I, other.I)])

    def named(self, label, define):
        d = {(i, c): define(f"{label}I{i}{c}", self.I[i][c]) for i in range(3) for c in range(i, 3)}
        return SpatialInertia(define(f"{label}m", self.m), [define(f"{label}h{i}", e)
                                                      for i, e in enumerate(self.h)],
                        [[d[min(i, c), max(i, c)] for c in range(3)] for i in range(3)])


#: where the parameters of W = [[I, h×], [h×ᵀ, m 1]] sit: (row, column) -> (name, sign)
PARAMETER_PLACES = {}
for _a in range(3):
    for _b in range(3):
        PARAMETER_PLACES[_a, _b] = (f"I{min(_a, _b)}{max(_a, _b)}", 1)
    PARAMETER_PLACES[3 + _a, 3 + _a] = ("m", 1)
for (_a, _b), (_c, _s) in {(0, 1): (2, -1), (0, 2): (1, 1), (1, 0): (2, 1), (1, 2): (0, -1),
                           (2, 0): (1, -1), (2, 1): (0, 1)}.items():
    PARAMETER_PLACES[_a, 3 + _b] = (f"h{_c}", _s)          # h× at [0:3, 3:6]
    PARAMETER_PLACES[3 + _b, _a] = (f"h{_c}", _s)          # its transpose at [3:6, 0:3]


def rigid_parameters(rows, Wx):
    """(m, h, I) of a rigid body's spatial inertia from its rows Wx (len(rows) x 6) at its
    reference point, in its components: the entries off the rows are set to zero, which
    changes no residual (the body's velocities and the axes above it stay on its rows).
    Entries that should be equal may differ in round-off (SYMMETRY_TOL) or, symbolic, in
    form (equal at generic points; the one of fewer operations is kept). None if Wx is not
    of that form."""
    values = {}
    size = max([abs(float(e)) for row in Wx for e in row if sm.sympify(e).is_number] + [0.0])
    for a, i in enumerate(rows):
        for c in range(6):
            e = sm.sympify(Wx[a][c])
            place = PARAMETER_PLACES.get((i, c))
            name, sign = place if place is not None else (None, 1)
            v = sign * e
            known = values.setdefault(name, v) if name else sm.S.Zero
            if known == v:
                continue
            if v.is_number and known.is_number:
                if abs(float(known - v)) > SYMMETRY_TOL * size:
                    return None
            elif not vanishes([known - v], relative=True):
                return None
            elif name and operation_count([v]) < operation_count([known]):
                values[name] = v
    get = values.get
    I = [[get(f"I{min(a, b)}{max(a, b)}", sm.S.Zero) for b in range(3)] for a in range(3)]
    return get("m", sm.S.Zero), [get(f"h{i}", sm.S.Zero) for i in range(3)], I


def full6(rows, values):
    """A 6-vector from its entries on rows (zero elsewhere)."""
    out = [sm.S.Zero] * 6
    for i, e in zip(rows, values):
        out[i] = e
    return out
