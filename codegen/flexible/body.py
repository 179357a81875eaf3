"""FlexibleBody: the description of a flexible body, next to Particle and RigidBody.

Pure description, like SymPy's bodies: a frame and origin that move like a rigid
body's (their kinematics set by the user as for any body), the mode data, and the
modal coordinates and speeds, which are the model's own coordinates and speeds.
It holds no S and no equations; the formulation asks it for its terms
(:meth:`FlexibleBody.terms`, from :mod:`codegen.flexible.terms`) given the
body's angular velocity and modal symbols in its own plain form.
"""
from __future__ import annotations

from dataclasses import replace
from functools import cached_property

import numpy as np
import sympy as sm
from sympy.physics.vector import Point, ReferenceFrame, Vector, dynamicsymbols

from .invariants import Invariants, beam_invariants, invariants
from .modes import Modes, check_modal_matrix
from .terms import BodyTerms, body_terms, coefficient

__all__ = ["FlexibleBody"]


def _symbols(what: str, values, n: int) -> list:
    values = list(values)
    if len(values) != n:
        raise ValueError(f"the body has {n} modes but {len(values)} {what} were given")
    for v in values:
        if not isinstance(v, (sm.Symbol, sm.Function, sm.core.function.AppliedUndef)):
            raise TypeError(f"{what} must be symbols or dynamicsymbols, got {v!r}")
    if len(set(values)) != n:
        raise ValueError(f"the {what} are not distinct: {values}")
    return values


class FlexibleBody:
    """A body deforming by assumed modes in its floating frame of reference.

    Parameters
    ----------
    name : str
    frame : ReferenceFrame, the body frame B (mode shapes are in its components).
    origin : Point, the frame's origin O (the mode data's positions are from it).
    modes : :class:`~codegen.flexible.modes.Modes` (``beam_modes`` or ``fe_modes``).
    q, u : the n modal coordinates eta and their speeds (dynamicsymbols); the user
        relates them with kd_eqs like any other pair, e.g. ``body.kd_eqs()``.
    stiffness, damping : (n, n) modal matrices replacing the mode data's.
    geometric_stiffening : keep the second-order foreshortening (default); False
        gives the classical linear modal model.
    constants : for an analytic beam, ``dict(L=..., EI=..., rho_A=...)`` (symbols or
        numbers) that its terms and points are written in
        (:func:`~codegen.flexible.invariants.beam_invariants`); the mode data's own
        values then only fix the shapes. Stations x of :meth:`point_at` are in the
        mode data's length.
    gravity : a Vector, the gravitational acceleration acting on the body's whole mass
        (deformed), or None. A distributed load cannot be a load on one point; the
        formulation passes it to :meth:`terms` in B's components.

    Examples
    --------
    >>> from sympy.physics.mechanics import ReferenceFrame, Point, dynamicsymbols
    >>> from codegen.flexible import FlexibleBody, beam_modes
    >>> N = ReferenceFrame("N"); B = N.orientnew("B", "Axis", (dynamicsymbols("th"), N.z))
    >>> O = Point("O"); O.set_vel(N, 0)
    >>> eta, zeta = dynamicsymbols("eta1:3"), dynamicsymbols("zeta1:3")
    >>> blade = FlexibleBody("blade", B, O, beam_modes(10.0, 14.0, 1.2, 2), eta, zeta)
    >>> blade.n, blade.kd_eqs()[0]
    (2, -zeta1(t) + Derivative(eta1(t), t))
    """

    def __init__(self, name: str, frame: ReferenceFrame, origin: Point, modes: Modes, q, u,
                 stiffness=None, damping=None, geometric_stiffening: bool = True,
                 constants: dict | None = None, gravity: Vector | None = None):
        if not isinstance(frame, ReferenceFrame):
            raise TypeError(f"the frame of flexible body {name!r} is {frame!r}, not a ReferenceFrame")
        if not isinstance(origin, Point):
            raise TypeError(f"the origin of flexible body {name!r} is {origin!r}, not a Point")
        if not isinstance(modes, Modes):
            raise TypeError(f"the modes of flexible body {name!r} must be Modes "
                            f"(beam_modes or fe_modes), got {type(modes).__name__}")
        self.name, self.frame, self.origin, self.modes = str(name), frame, origin, modes
        n = modes.n
        self.q = _symbols("modal coordinates", q, n)
        self.u = _symbols("modal speeds", u, n)
        self.stiffness = modes.stiffness if stiffness is None else \
            check_modal_matrix(f"the modal stiffness of {name}", stiffness, n)
        self.damping = modes.damping if damping is None else \
            check_modal_matrix(f"the modal damping of {name}", damping, n)
        if geometric_stiffening and modes.foreshortening is None:
            raise ValueError(f"flexible body {name!r}: its mode data has no foreshortening, so "
                             f"no geometric stiffening; pass geometric_stiffening=False for "
                             f"the linear modal model")
        self.geometric_stiffening = bool(geometric_stiffening)
        if constants is not None:
            if set(constants) != {"L", "EI", "rho_A"}:
                raise ValueError(f"flexible body {name!r}: constants must name L, EI and rho_A, "
                                 f"got {sorted(constants)}")
            if stiffness is not None or damping is not None:
                raise ValueError(f"flexible body {name!r}: constants scale the beam's own "
                                 f"stiffness and damping; do not give them as well")
            if modes.beam is None:
                raise ValueError(f"flexible body {name!r}: constants need an analytic beam's "
                                 f"mode data (beam_modes)")
        self.constants = dict(constants) if constants is not None else None
        if gravity is not None and not isinstance(gravity, Vector):
            raise TypeError(f"the gravity of flexible body {name!r} is {gravity!r}, not a Vector")
        self.gravity = gravity
        self._points = {}

    def __repr__(self):
        return f"FlexibleBody({self.name!r}, {self.n} modes)"

    @property
    def n(self) -> int:
        return self.modes.n

    @cached_property
    def invariants(self) -> Invariants:
        """The inertia invariants, formed once."""
        if self.constants is not None:
            return beam_invariants(self.modes, geometric_stiffening=self.geometric_stiffening,
                                   **self.constants)
        inv = invariants(self.modes, self.geometric_stiffening)
        return replace(inv, stiffness=np.array(self.stiffness, dtype=float),
                       damping=np.array(self.damping, dtype=float))

    @property
    def mass(self) -> float:
        return self.invariants.mass

    def kd_eqs(self) -> list:
        """eta_k' - u_k = 0 for each mode."""
        return [qk.diff(dynamicsymbols._t) - uk for qk, uk in zip(self.q, self.u)]

    def terms(self, w, eta, etad, gravity=None) -> BodyTerms:
        """M_b, h_b and Q over A = [a_O; alpha; eta''] (see :mod:`codegen.flexible.terms`),
        given w (B components), the modal coordinates and rates in the caller's plain
        symbols, and gravity in B components (or None)."""
        return body_terms(self.invariants, w, eta, etad, gravity)

    def elastic_energy(self):
        """1/2 eta^T K eta in the body's coordinates."""
        K = self.invariants.stiffness
        return sm.Add(*[coefficient(K[k, l]) * self.q[k] * self.q[l] / 2
                        for k in range(self.n) for l in range(self.n) if K[k, l] != 0])

    def _length_scale(self):
        """L over the mode data's length (1 without constants)."""
        return 1 if self.constants is None else self.constants["L"] / self.modes.beam["L"]

    def displacement(self, shape: np.ndarray, G: np.ndarray | None) -> Vector:
        """Phi eta - 1/2 (eta^T G eta) e as a Vector in B (G ignored without stiffening)."""
        B, q = self.frame, self.q
        G = None if G is None else G / self._length_scale()
        comps = [sm.Add(*[coefficient(shape[a, k]) * q[k] for k in range(self.n)
                          if shape[a, k] != 0]) for a in range(3)]
        if self.geometric_stiffening and G is not None:
            quad = sm.Add(*[coefficient(G[k, l]) * q[k] * q[l] for k in range(self.n)
                            for l in range(self.n) if G[k, l] != 0]) / 2
            comps = [c - quad * float(e) for c, e in zip(comps, self.modes.axis)]
        return comps[0] * B.x + comps[1] * B.y + comps[2] * B.z

    def _place(self, key, label: str, r: np.ndarray, shape, G, N) -> Point:
        if key not in self._points:
            P = Point(f"{self.name}_{label}")
            B = self.frame
            lam = self._length_scale()
            P.set_pos(self.origin, lam * (float(r[0]) * B.x + float(r[1]) * B.y + float(r[2]) * B.z)
                      + self.displacement(shape, G))
            self._points[key] = P
        P = self._points[key]
        if N is not None:
            P.set_vel(self.frame, P.pos_from(self.origin).dt(self.frame))
            P.v1pt_theory(self.origin, N, self.frame)
        return P

    def point_at(self, x: float, N: ReferenceFrame | None = None) -> Point:
        """The material point of a beam at axial station x, deflection and
        foreshortening included (for loads and outputs). With N, its velocity in N
        is set from the origin's (which must be set first)."""
        if self.modes.shape_at is None:
            raise ValueError(f"flexible body {self.name!r} has node data, not a beam's shapes: "
                             f"use node(k)")
        x = float(x)
        r = x * np.asarray(self.modes.axis, dtype=float)
        shape, G = self.modes.shape_at(x)
        return self._place(("x", x), f"x{x:g}", r, shape, G, N)

    def node(self, k: int, N: ReferenceFrame | None = None) -> Point:
        """The point of FE node k (its mass point), as :meth:`point_at`."""
        if not self.modes.node_labels:
            raise ValueError(f"flexible body {self.name!r} has a beam's shapes, not node data: "
                             f"use point_at(x)")
        if not 0 <= k < len(self.modes.node_labels):
            raise IndexError(f"flexible body {self.name!r} has {len(self.modes.node_labels)} "
                             f"nodes, not node {k}")
        G = None if self.modes.foreshortening is None else self.modes.foreshortening[k]
        return self._place(("node", k), f"node{k}", self.modes.position[k],
                           self.modes.shape[k], G, N)
