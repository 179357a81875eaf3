"""A flexible body's terms of the Gibbs–Appell function, from its inertia invariants.

The model
---------
Floating frame of reference: body frame B (angular velocity w, angular
acceleration alpha), origin O (acceleration a_O), all in B's components. A mass
point at r (in B) moves to

    p = r + Phi(r) eta - 1/2 (eta^T G(r) eta) e,

the small deflection Phi eta plus its second-order foreshortening along the beam
axis e (Kane, Ryan & Banerjee 1987: a beam point whose axis is bent keeps its arc
length, so its axial position shortens by 1/2 int_0^x |v'|^2 dxi; with
v = phi eta this is 1/2 eta^T G(x) eta, G_kl(x) = int_0^x phi_k' phi_l' dxi).
Its acceleration is a_P = T_P A + b_P with the body-level acceleration
A = [a_O; alpha; eta''] and

    T_P = [ I3,  -[p x],  Phi - e (G eta)^T ],
    b_P = w x (w x p) + 2 w x p' - e (eta'^T G eta'),   p' = (Phi - e (G eta)^T) eta',

so S_body = 1/2 int |T_P A + b_P|^2 dm = 1/2 A^T M_b A + A^T h_b + (A-free), with
M_b = int T_P^T T_P dm and h_b = int T_P^T b_P dm.

Geometric stiffening, and why this truncation
---------------------------------------------
Count eta, eta', eta'' as first order and the rigid motion (a_O, alpha, w) as
order zero. S is kept **to second order**: M_b's rigid block to second order in
eta, its rigid-modal block to first, its modal block to zeroth; h_b's rigid rows
to second order and its modal rows to first. Three reasons:

- It is the exact Gibbs–Appell function of the kinetic energy truncated at second
  order (differentiation commutes with the expansion), so the equations are
  Lagrange's equations of that energy: energy and momentum are conserved
  exactly, and the mass matrix stays symmetric.
- The modal equations come out linear in eta, eta' for any rigid motion, which is
  Kane, Ryan & Banerjee's consistent linearization. The foreshortening's partial
  velocity -(G eta)_k e against the centripetal acceleration w x (w x r) gives the
  motion-induced stiffness w^2 int x G dm (for spin about an axis normal to e):
  the centrifugal stiffening that the classical linear modal model lacks, with
  the same term from a_O and gravity along e (buckling under axial acceleration).
- The rigid-body equations keep the second-order couplings (the change of the
  body's inertia with its deflection, where the foreshortening and the deflection
  nearly cancel for a spinning beam), which the first-order model gets wrong.

This is the foreshortening approach rather than a separately added motion-induced
stiffness (Banerjee & Dickens 1990): it follows from the kinematics alone, so the
stiffening from spin, angular acceleration, base acceleration and gravity all come
out of one S with no load case to foresee. ``geometric_stiffening=False`` drops G:
the classical linear modal model, which diverges in the spin-up manoeuvre.

Rotary inertia of FE nodes enters as 1/2 (w + Psi eta')^T J (w + Psi eta') (the
node's inertia not rotated by its small rotation): consistent and conservative,
exact to first order in eta.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sm

from .invariants import Invariants

__all__ = ["BodyTerms", "body_terms", "coefficient"]

_LEVI = np.zeros((3, 3, 3))
for _a, _b, _c in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
    _LEVI[_a, _b, _c], _LEVI[_a, _c, _b] = 1.0, -1.0


@dataclass(frozen=True)
class BodyTerms:
    """M (6+n square), h and Q (6+n) over A = [a_O; alpha; eta''], B components.

    Q holds gravity (if given), -K eta and -D eta'. The body adds Gamma^T M Gamma to
    the mass matrix and Gamma^T (M A0 + h - Q) to dS/du'|0 - Q."""
    M: sm.Matrix
    h: sm.Matrix
    Q: sm.Matrix


def coefficient(c):
    """A number as an exact-double Float; a symbolic invariant (a beam's scaled by
    its constants) as it is."""
    if isinstance(c, (int, float, np.floating, np.integer)):
        return sm.Float(float(c), 17)
    return sm.sympify(c)


def _scaled(c, x):
    """c x, for a coefficient c and a product of symbols x, built directly: SymPy's
    Mul would reach the same canonical product (number first, then x's factors) ten
    times slower. Sums, numeric factors and symbolic coefficients take the usual way."""
    c = coefficient(c)
    if c.is_Float and not (x.is_Add or x.is_Number or (x.is_Mul and x.args[0].is_Number)):
        return sm.Mul._from_args((c,) + (x.args if x.is_Mul else (x,)))
    return c * x


def _lin(T: np.ndarray, x) -> np.ndarray:
    """sum_k T[..., k] x_k as an object array of sympy sums (zero coefficients skipped)."""
    x = [sm.sympify(xk) for xk in x]
    out = np.empty(T.shape[:-1], dtype=object)
    for idx in np.ndindex(*T.shape[:-1]):
        out[idx] = sm.Add(*[_scaled(c, xk) for c, xk in zip(T[idx], x) if c != 0])
    return out


def _quad(T: np.ndarray, x, y) -> np.ndarray:
    """sum_kl T[..., k, l] x_k y_l."""
    out = np.empty(T.shape[:-2], dtype=object)
    n = T.shape[-1]
    pairs = [[sm.sympify(x[k]) * sm.sympify(y[l]) for l in range(n)] for k in range(n)]
    for idx in np.ndindex(*T.shape[:-2]):
        t = T[idx]
        out[idx] = sm.Add(*[_scaled(t[k, l], pairs[k][l]) for k in range(n) for l in range(n)
                            if t[k, l] != 0])
    return out


def _const(T: np.ndarray) -> np.ndarray:
    out = np.empty(T.shape, dtype=object)
    for idx in np.ndindex(*T.shape):
        out[idx] = coefficient(T[idx]) if T[idx] != 0 else sm.S.Zero
    return out


def _cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]], dtype=object)


def _along(e: np.ndarray, x) -> np.ndarray:
    """The vector x e for a numeric unit vector e, without multiplying x by 1.0."""
    return np.array([x if c == 1 else (-x if c == -1 else (coefficient(c) * x if c else sm.S.Zero))
                     for c in e], dtype=object)


def _skew(v) -> np.ndarray:
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]], dtype=object)


def body_terms(inv: Invariants, w, eta, etad, gravity=None) -> BodyTerms:
    """M_b, h_b and the generalized forces of one flexible body (module docstring).

    Parameters
    ----------
    inv : the body's invariants (:func:`codegen.flexible.invariants.invariants`).
    w : the angular velocity of B in N, 3 expressions in B's components.
    eta, etad : the n modal coordinates and their rates (expressions or symbols).
    gravity : the gravitational acceleration in B's components (3 expressions), or None.
    """
    n = inv.n
    eta, etad = list(eta), list(etad)
    w = np.array(list(w), dtype=object)
    if len(eta) != n or len(etad) != n or w.shape != (3,):
        raise ValueError(f"the body has {n} modes: give 3 components of w and {n} "
                         f"coordinates and {n} rates (got {len(w)}, {len(eta)}, {len(etad)})")
    # numbers are folded into the invariants before expressions are built: SymPy
    # distributes a number over a sum, which costs more than everything else here
    e = inv.axis
    I3 = np.eye(3, dtype=object)
    eta_, etad_ = np.array(eta, dtype=object), np.array(etad, dtype=object)

    # first moment c = int p dm, to second order
    c = _const(inv.s0) + _lin(inv.S1, eta) + _along(e, _quad(-0.5 * inv.Gbar, eta, eta)[()])
    # Pi = int p p^T dm, to second order
    P1 = _lin(inv.C1, eta)                                   # int r_a (Phi eta)_b
    P2 = _quad(inv.C2, eta, eta)                             # int (Phi eta)_a (Phi eta)_b
    F = np.array([_along(e, x) for x in _quad(-0.5 * inv.D, eta, eta)])   # int r_a f_b
    Pi = _const(inv.Irr) + P1 + P1.T + P2 + F + F.T
    J = (Pi[0, 0] + Pi[1, 1] + Pi[2, 2]) * I3 - Pi + _const(inv.Jrot)

    M = np.empty((6 + n, 6 + n), dtype=object)
    M[:3, :3] = coefficient(inv.mass) * I3
    M[:3, 3:6] = _skew(-c)
    M[:3, 6:] = _const(inv.S1) + np.array([_along(e, x) for x in _lin(-inv.Gbar, eta)]).T
    M[3:6, 3:6] = J
    # int [p x] (Phi - e (G eta)^T) dm, to first order
    rPhi = np.einsum("abc,bck->ak", _LEVI, inv.C1)
    PhiPhi = np.einsum("abc,bclk->akl", _LEVI, inv.C2)       # multiplies eta_l
    rG = np.einsum("abc,c,bkl->akl", _LEVI, e, inv.D)
    M[3:6, 6:] = _const(rPhi + inv.JPsi) + _lin(PhiPhi - rG, eta)
    M[6:, 6:] = _const(inv.modal_mass)
    M[3:, :3] = M[:3, 3:].T
    M[6:, 3:6] = M[3:6, 6:].T

    # bias h = int T_P^T b_P dm
    Om2 = np.outer(w, w) - (w @ w) * I3                      # w x (w x .) as a matrix
    W = _skew(w)
    pdot2 = _lin(2 * inv.S1, etad) + _along(e, _quad(-2 * inv.Gbar, eta, etad)[()])  # 2 int p'
    h_o = Om2 @ c + _cross(w, pdot2) + _along(e, _quad(-inv.Gbar, etad, etad)[()])
    # 2 Lambda = 2 int p' p^T dm, to second order
    Lam2 = (_lin(2 * inv.C1, etad).T + _quad(2 * inv.C2, etad, eta)
            + np.array([_along(e, x) for x in _quad(-2 * inv.D.transpose(0, 2, 1), eta, etad)]).T)
    Jrot_w = _const(inv.Jrot) @ w + _const(inv.JPsi) @ etad_
    h_a = (_cross(Pi @ w, w) + (Lam2[0, 0] + Lam2[1, 1] + Lam2[2, 2]) * w - Lam2 @ w
           + _quad(np.einsum("abc,b,ckl->akl", _LEVI, e, inv.D), etad, etad)   # e x int r eta'G eta'
           + _cross(w, Jrot_w))
    # modal rows, to first order
    C1T = inv.C1.transpose(1, 0, 2)                          # [a, b, k] = int Phi_ak r_b
    terms = [[] for _ in range(n)]
    for a in range(3):
        for b in range(3):
            for k in range(n):
                if Om2[a, b] != 0:
                    terms[k].append(Om2[a, b] * (coefficient(C1T[a, b, k])
                                                 + _lin(inv.C2[a, b, k], eta)[()]))
                if W[a, b] != 0:
                    terms[k].append(W[a, b] * _lin(2 * inv.C2[a, b, k], etad)[()])
    eOm2 = Om2.T @ _const(e)                                 # (e^T Om2)_b
    Dl = _lin(-inv.D, eta)                                   # [b, k] = -sum_l D[b,k,l] eta_l
    h_e = [sm.Add(*terms[k], *[eOm2[b] * Dl[b, k] for b in range(3)]) for k in range(n)]
    h = list(h_o) + list(h_a) + h_e

    # generalized forces: gravity acts like a base acceleration -g, then elasticity
    Q = [sm.S.Zero] * (6 + n)
    if gravity is not None:
        g = np.array(list(gravity), dtype=object)
        Q = list(M[:, :3] @ g)
    Ke = _lin(-inv.stiffness, eta)
    De = _lin(-inv.damping, etad)
    for k in range(n):
        Q[6 + k] = Q[6 + k] + Ke[k] + De[k]
    Mm = sm.Matrix(6 + n, 6 + n, [sm.sympify(x) for x in M.ravel()])
    return BodyTerms(M=Mm, h=sm.Matrix([sm.sympify(x) for x in h]),
                     Q=sm.Matrix([sm.sympify(x) for x in Q]))
