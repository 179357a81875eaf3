"""Inertia invariants of a flexible body: sums over its mass points, formed once.

With the mass points of :class:`~codegen.flexible.modes.Modes` (mass m_i,
position r_i, shapes Phi_i, foreshortening G_i, rotary inertia J_i, rotation
shapes Psi_i), the body's terms need only these sums (Shabana's invariants, in
index form; a, b are components in the body frame, k, l modes):

=========  ==========================  ===================================
name       sum over points of           Shabana
=========  ==========================  ===================================
mass       m                            I1
s0[a]      m r_a                        I2 (first moment)
Irr[a,b]   m r_a r_b                    (the rigid inertia)
S1[a,k]    m Phi_ak                     I3 (modal first moments)
C1[a,b,k]  m r_a Phi_bk                 I4, I5 (r x Phi and the r-Phi coupling)
C2[a,b,k,l] m Phi_ak Phi_bl             I6..I9 (modal mass, w-coupling)
Gbar[k,l]  m G_kl                       (foreshortening first moment)
D[a,k,l]   m r_a G_kl                   (geometric stiffening)
Jrot[a,b]  J_ab                         (rotary inertia)
JPsi[a,k]  (J Psi)_ak
PsiJPsi    (Psi^T J Psi)_kl
=========  ==========================  ===================================

The modal mass is sum_a C2[a,a] + PsiJPsi. Entries below 1e-13 of their
tensor's largest magnitude are set to zero: they are quadrature rounding of
couplings that vanish (a y-bending mode with a z one), and would otherwise
become terms of the generated code.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import sympy as sm

from .modes import Modes

__all__ = ["Invariants", "invariants", "beam_invariants"]

_CLEAN = 1e-13


def _clean(arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr, dtype=float)
    scale = np.abs(arr).max() if arr.size else 0.0
    arr[np.abs(arr) <= _CLEAN * scale] = 0.0
    return arr


@dataclass(frozen=True, eq=False)
class Invariants:
    """The sums of the module docstring, plus K, D and the axis e (numpy arrays)."""
    mass: float
    s0: np.ndarray
    Irr: np.ndarray
    S1: np.ndarray
    C1: np.ndarray
    C2: np.ndarray
    Gbar: np.ndarray
    D: np.ndarray
    Jrot: np.ndarray
    JPsi: np.ndarray
    PsiJPsi: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    axis: np.ndarray

    @property
    def n(self) -> int:
        return self.S1.shape[1]

    @property
    def modal_mass(self) -> np.ndarray:
        return np.einsum("aakl->kl", self.C2) + self.PsiJPsi


def invariants(modes: Modes, geometric_stiffening: bool = True) -> Invariants:
    """The invariants of ``modes``; without geometric stiffening (or without
    foreshortening data) Gbar and D are zero: the classical linear modal model."""
    m, r, P = modes.mass, modes.position, modes.shape
    n = modes.n
    G = modes.foreshortening if geometric_stiffening else None
    if geometric_stiffening and G is None:
        raise ValueError("geometric stiffening needs the foreshortening G of the mode data "
                         "(beam slopes); this mode data has none: pass "
                         "geometric_stiffening=False for the linear modal model")
    if G is None:
        Gbar, D = np.zeros((n, n)), np.zeros((3, n, n))
    else:
        Gbar = np.einsum("i,ikl->kl", m, G)
        D = np.einsum("i,ia,ikl->akl", m, r, G)
    if modes.rotary_inertia is None:
        Jrot, JPsi, PsiJPsi = np.zeros((3, 3)), np.zeros((3, n)), np.zeros((n, n))
    else:
        J, Psi = modes.rotary_inertia, modes.rotation_shape
        Jrot = J.sum(axis=0)
        JPsi = np.einsum("iab,ibk->ak", J, Psi)
        PsiJPsi = np.einsum("iak,iab,ibl->kl", Psi, J, Psi)
    C2 = np.einsum("i,iak,ibl->abkl", m, P, P)
    # symmetric by construction up to rounding: make it exactly so
    C2 = (C2 + C2.transpose(1, 0, 3, 2)) / 2
    return Invariants(
        mass=float(m.sum()), s0=_clean(m @ r), Irr=_clean(np.einsum("i,ia,ib->ab", m, r, r)),
        S1=_clean(np.einsum("i,iak->ak", m, P)), C1=_clean(np.einsum("i,ia,ibk->abk", m, r, P)),
        C2=_clean(C2), Gbar=_clean((Gbar + Gbar.T) / 2), D=_clean((D + D.transpose(0, 2, 1)) / 2),
        Jrot=_clean(Jrot), JPsi=_clean(JPsi), PsiJPsi=_clean(PsiJPsi),
        stiffness=_clean(modes.stiffness), damping=_clean(modes.damping),
        axis=np.array(modes.axis, dtype=float))


def _sqrt(x):
    return sm.sqrt(x) if isinstance(x, sm.Basic) else float(np.sqrt(x))


def beam_invariants(modes: Modes, L, EI, rho_A, geometric_stiffening: bool = True) -> Invariants:
    """The invariants of an analytic beam (:func:`~codegen.flexible.beam_modes`) as
    expressions in the constants L, EI, rho_A (symbols or numbers), for a model whose
    constants stay free.

    The shapes are functions of x/L, so with the beam computed at (L0, EI0, rho_A0)
    each invariant scales by a power of l = L/L0 and m = rho_A/rho_A0, the stiffness
    by k/l^3 (k = EI/EI0) and proportional damping by sqrt(k m)/l. Axial modes (EA)
    and a second bending stiffness EI_z do not scale so: they are refused.
    """
    b = modes.beam
    if b is None:
        raise ValueError("symbolic beam constants need an analytic beam's mode data (beam_modes)")
    if b["axial"] or b["EI_z"] is not None:
        raise ValueError("symbolic beam constants support bending with one EI only "
                         "(no axial modes, no EI_z)")
    inv = invariants(modes, geometric_stiffening)
    l, m, k = L / b["L"], rho_A / b["rho_A"], EI / b["EI"]
    scale = dict(mass=m * l, s0=m * l**2, Irr=m * l**3, S1=m * l, C1=m * l**2, C2=m * l,
                 Gbar=m, D=m * l, stiffness=k / l**3, damping=_sqrt(k * m) / l)
    fields = {name: (np.asarray(getattr(inv, name)) * factor if name != "mass"
                     else inv.mass * factor) for name, factor in scale.items()}
    return replace(inv, **fields)
