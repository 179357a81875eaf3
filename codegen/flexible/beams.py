"""Analytic mode data of a slender (Euler–Bernoulli) beam along the body's x axis.

The beam runs from the body origin to x = L. Its shapes, per bending direction
(``"y"``: in the x-y plane, ``"z"``: in the x-z plane) and optionally axial:

- ``"cantilever"``: clamped at x = 0, free at L; beta_k L the roots of
  1 + cos(bL) cosh(bL) = 0 (1.8751, 4.6941, 7.8548, ...);
- ``"free-free"``: roots of cos(bL) cosh(bL) = 1 (4.7300, 7.8532, ...), elastic modes
  only (the floating frame carries the rigid motion; these shapes satisfy the
  mean-axis conditions int phi dx = int x phi dx = 0);
- ``"polynomial"``: admissible shapes (x/L)^(k+1), k = 1..n, clamped at x = 0.

Exact shapes are normalized to int_0^L phi^2 dx = L (tip value 2 for a cantilever),
so eta is a length. Roots are solved to machine precision by Newton's method from
the asymptotic values; the shapes are evaluated in a form free of the cosh - sinh
cancellation, so high modes stay accurate. Axial modes (clamped-free)
sin((2k-1) pi x / 2L) need ``EA``.

Mass, stiffness and foreshortening are integrated by composite Gauss–Legendre
quadrature (``segments`` x ``order`` stations): exact for the polynomial shapes,
and to rounding for the exact ones at the default. The stations become the mass
points of :class:`~codegen.flexible.modes.Modes`.
"""
from __future__ import annotations

import math

import numpy as np

from .modes import Modes

__all__ = ["beam_modes", "beam_roots"]

_KINDS = ("cantilever", "free-free", "polynomial")


def beam_roots(kind: str, n: int) -> np.ndarray:
    """The first n roots beta_k L of the cantilever or free–free frequency equation."""
    if kind == "cantilever":
        f = lambda b: math.cos(b) * math.cosh(b) + 1                    # noqa: E731
        df = lambda b: math.cos(b) * math.sinh(b) - math.sin(b) * math.cosh(b)  # noqa: E731
        guess = [(2 * k - 1) * math.pi / 2 for k in range(1, n + 1)]
        guess[0] = 1.875
    elif kind == "free-free":
        f = lambda b: math.cos(b) * math.cosh(b) - 1                    # noqa: E731
        df = lambda b: math.cos(b) * math.sinh(b) - math.sin(b) * math.cosh(b)  # noqa: E731
        guess = [(2 * k + 1) * math.pi / 2 for k in range(1, n + 1)]
    else:
        raise ValueError(f"no frequency equation for beam kind {kind!r}")
    roots = []
    for b in guess:
        # divide by cosh: f/cosh is O(1) near the high roots, so Newton converges
        for _ in range(100):
            step = (f(b) / math.cosh(b)) / (df(b) / math.cosh(b))
            b -= step
            if abs(step) < 1e-15 * b:
                break
        roots.append(b)
    return np.array(roots)


def _exact_shapes(kind: str, betaL: np.ndarray, L: float, x: np.ndarray, d: int):
    """d-th derivative (d = 0, 1, 2) of the normalized shapes at x: (len(x), n)."""
    b = betaL / L
    bL, bx = betaL[None, :], b[None, :] * x[:, None]
    if kind == "cantilever":
        sigma = (np.cosh(bL) + np.cos(bL)) / (np.sinh(bL) + np.sin(bL))
        one_minus = (np.sin(bL) - np.cos(bL) - np.exp(-bL)) / (np.sinh(bL) + np.sin(bL))
    else:
        sigma = (np.cosh(bL) - np.cos(bL)) / (np.sinh(bL) - np.sin(bL))
        one_minus = (np.cos(bL) - np.sin(bL) - np.exp(-bL)) / (np.sinh(bL) - np.sin(bL))
    # cosh(bx) - sigma sinh(bx) and its derivatives, without cancellation
    ep, em = one_minus * np.exp(bx) / 2, (1 + sigma) * np.exp(-bx) / 2
    hyp = [ep + em, ep - em, ep + em][d]
    # cantilever: cosh - cos - sigma (sinh - sin); free-free: cosh + cos - sigma (sinh + sin)
    trig = [-np.cos(bx) + sigma * np.sin(bx),
            np.sin(bx) + sigma * np.cos(bx),
            np.cos(bx) - sigma * np.sin(bx)][d]
    if kind == "free-free":
        trig = -trig
    return (b[None, :] ** d) * (hyp + trig)


def _shapes(kind: str, n: int, L: float, x: np.ndarray, d: int, roots):
    if kind == "polynomial":
        k = np.arange(2, n + 2, dtype=float)[None, :]
        xi = x[:, None] / L
        if d == 0:
            return xi ** k
        if d == 1:
            return k * xi ** (k - 1) / L
        return k * (k - 1) * xi ** (k - 2) / L**2
    return _exact_shapes(kind, roots, L, x, d)


def _axial(n: int, L: float, x: np.ndarray, d: int):
    c = (2 * np.arange(1, n + 1) - 1) * math.pi / (2 * L)
    return np.sin(c * x[:, None]) if d == 0 else c * np.cos(c * x[:, None])


def _gauss(a: float, b: float, segments: int, order: int):
    gp, gw = np.polynomial.legendre.leggauss(order)
    edges = np.linspace(a, b, segments + 1)
    h = np.diff(edges)
    x = (edges[:-1, None] + h[:, None] * (gp[None, :] + 1) / 2).ravel()
    w = (h[:, None] * gw[None, :] / 2).ravel()
    return x, w


def beam_modes(L: float, EI: float, rho_A: float, n_modes: int, kind: str = "cantilever",
               bending=("y",), EI_z: float | None = None, axial: int = 0,
               EA: float | None = None, damping_ratio: float = 0.0,
               anchor: float | None = None, segments: int = 16, order: int = 16) -> Modes:
    """Mode data of a uniform Euler–Bernoulli beam from the body origin along x.

    Parameters
    ----------
    L, EI, rho_A : length, bending stiffness (for "y" bending; ``EI_z`` for "z" if it
        differs), mass per length.
    n_modes : bending modes per direction in ``bending`` (a subset of ("y", "z")).
    kind : "cantilever", "free-free" or "polynomial".
    axial, EA : number of axial modes (clamped-free), and the axial stiffness they need.
    damping_ratio : modal damping D = 2 zeta sqrt(K M) (diagonalized in the modal basis).
    anchor : the x at which the axial position is held by the foreshortening (the
        clamped root by default, the middle for free–free beams).
    """
    for name, value in (("L", L), ("EI", EI), ("rho_A", rho_A)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ValueError(f"the beam's {name} must be a positive number, got {value!r}")
    if kind not in _KINDS:
        raise ValueError(f"beam kind {kind!r} is not one of {_KINDS}")
    if not isinstance(n_modes, int) or n_modes < (0 if axial else 1):
        raise ValueError(f"n_modes must be a positive integer, got {n_modes!r}")
    bending = tuple(bending)
    if not set(bending) <= {"y", "z"} or len(set(bending)) != len(bending):
        raise ValueError(f"bending must name distinct directions among 'y' and 'z', got {bending}")
    if axial and not (EA and EA > 0):
        raise ValueError("axial modes need a positive axial stiffness EA")
    if kind == "free-free" and axial:
        raise ValueError("axial modes are clamped-free; a free-free beam has none here")
    anchor = (L / 2 if kind == "free-free" else 0.0) if anchor is None else float(anchor)
    roots = None if kind == "polynomial" else beam_roots(kind, n_modes)
    x, w = _gauss(0.0, L, segments, order)
    N = x.size
    stiff_of = {"y": EI, "z": EI if EI_z is None else EI_z}

    cols, slopes, curv, names, stiffness_factor = [], [], [], [], []
    for direction in bending:
        a = "xyz".index(direction)
        phi = _shapes(kind, n_modes, L, x, 0, roots)
        for k in range(n_modes):
            col = np.zeros((N, 3))
            col[:, a] = phi[:, k]
            cols.append(col)
            names.append(f"{direction}{k + 1}")
            stiffness_factor.append(stiff_of[direction])
        slopes.append(lambda s: _shapes(kind, n_modes, L, s, 1, roots))
        curv.append(_shapes(kind, n_modes, L, x, 2, roots))
    if axial:
        u = _axial(axial, L, x, 0)
        for k in range(axial):
            col = np.zeros((N, 3))
            col[:, 0] = u[:, k]
            cols.append(col)
            names.append(f"x{k + 1}")
    shape = np.stack(cols, axis=2)                          # (N, 3, n)
    n = shape.shape[2]
    nb = len(bending) * n_modes

    K = np.zeros((n, n))
    for i, direction in enumerate(bending):
        blk = slice(i * n_modes, (i + 1) * n_modes)
        K[blk, blk] = stiff_of[direction] * np.einsum("s,sk,sl->kl", w, curv[i], curv[i])
    if axial:
        du = _axial(axial, L, x, 1)
        K[nb:, nb:] = EA * np.einsum("s,sk,sl->kl", w, du, du)
    mass = rho_A * w
    Mm = np.einsum("i,iak,ial->kl", mass, shape, shape)

    def slope_matrix(s: np.ndarray) -> np.ndarray:
        """(len(s), n, n): sum over directions of phi'_k phi'_l at stations s."""
        out = np.zeros((s.size, n, n))
        for i, fn in enumerate(slopes):
            d = fn(s)
            blk = slice(i * n_modes, (i + 1) * n_modes)
            out[:, blk, blk] = d[:, :, None] * d[:, None, :]
        return out

    def foreshortening(xs: np.ndarray) -> np.ndarray:
        """G(x) = int_anchor^x phi'^T phi' dxi at each x, by Gauss on [anchor, x]."""
        gp, gw = np.polynomial.legendre.leggauss(order)
        out = np.zeros((xs.size, n, n))
        for j, xj in enumerate(xs):
            span = xj - anchor
            if span == 0:
                continue
            sub = max(1, int(math.ceil(segments * abs(span) / L)))
            s, ws = _gauss(anchor, xj, sub, order)
            out[j] = np.einsum("s,skl->kl", ws, slope_matrix(s))
        return out

    def shape_at(xq: float):
        xq = np.array([float(xq)])
        phi = np.zeros((3, n))
        for i, direction in enumerate(bending):
            a = "xyz".index(direction)
            phi[a, i * n_modes:(i + 1) * n_modes] = _shapes(kind, n_modes, L, xq, 0, roots)[0]
        if axial:
            phi[0, nb:] = _axial(axial, L, xq, 0)[0]
        return phi, foreshortening(xq)[0]

    position = np.zeros((N, 3))
    position[:, 0] = x
    D = np.zeros((n, n))
    if damping_ratio:
        # zeta per mode of the undamped problem, back in the shape basis
        lam, V = _modal(K, Mm)
        Dm = np.diag(2 * damping_ratio * np.sqrt(np.maximum(lam, 0)))
        Vinv = np.linalg.inv(V)
        D = Vinv.T @ Dm @ Vinv
        D = (D + D.T) / 2
    return Modes(mass=mass, position=position, shape=shape, stiffness=(K + K.T) / 2,
                 damping=D, names=tuple(names), foreshortening=foreshortening(x),
                 shape_at=shape_at, beam=dict(L=L, EI=EI, rho_A=rho_A, EI_z=EI_z, axial=axial,
                                              damping_ratio=damping_ratio))


def _modal(K, M):
    """Eigenvalues and M-orthonormal eigenvectors of K v = lam M v."""
    Lc = np.linalg.cholesky(M)
    Li = np.linalg.inv(Lc)
    lam, W = np.linalg.eigh(Li @ K @ Li.T)
    return lam, Li.T @ W
