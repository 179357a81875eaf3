"""Mode data of a flexible body: its mass as points, each carrying its mode shapes.

Every source of mode data ends as the same :class:`Modes` value: a cloud of mass
points in the body frame B (quadrature stations of a continuous beam, or the
nodes of a finite-element model), each with

- its mass ``m_i`` and undeformed position ``r_i`` (components in B),
- its translation mode shapes ``Phi_i`` (3 x n): the displacement is Phi_i eta,
- optionally its rotary inertia ``J_i`` (3 x 3) and rotation mode shapes ``Psi_i``
  (3 x n, small rotations Psi_i eta),
- optionally its foreshortening matrix ``G_i`` (n x n, symmetric): the second-order
  axial shift -1/2 eta^T G_i eta along the body's axis ``e`` that geometric
  stiffening needs (see :mod:`codegen.flexible.body`),

plus the modal stiffness K and damping D (n x n). The inertia invariants
(:mod:`codegen.flexible.invariants`) are sums over these points. A continuous
beam is integrated by its quadrature stations, so "integrated by quadrature" and
"summed from the nodes" are one computation.

Everything is checked on entry; bad data raises ValueError naming what is wrong.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Modes", "fe_modes", "check_modal_matrix"]

#: relative tolerance of the symmetry and definiteness checks
_TOL = 1e-9


def _array(name: str, value, shape: tuple) -> np.ndarray:
    """value as a float array of the given shape (None entries: any size), finite."""
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} is not an array of numbers: {exc}") from None
    if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
        want = " x ".join("?" if s is None else str(s) for s in shape)
        raise ValueError(f"{name} has shape {arr.shape}, expected {want}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} has non-finite entries (nan or inf)")
    return arr


def check_modal_matrix(name: str, mat, n: int, definite: bool = False) -> np.ndarray:
    """An n x n modal matrix that is symmetric and positive semidefinite
    (positive definite with ``definite``), else ValueError saying which it is not."""
    mat = _array(name, mat, (n, n))
    scale = max(np.abs(mat).max(), np.finfo(float).tiny)
    asym = np.abs(mat - mat.T).max()
    if asym > _TOL * scale:
        i, j = np.unravel_index(np.argmax(np.abs(mat - mat.T)), mat.shape)
        raise ValueError(f"{name} is not symmetric: entry ({i}, {j}) is {mat[i, j]:.6g} "
                         f"but ({j}, {i}) is {mat[j, i]:.6g}")
    sym = (mat + mat.T) / 2
    low = np.linalg.eigvalsh(sym).min() if n else 0.0
    if definite and low <= _TOL * scale:
        raise ValueError(f"{name} is not positive definite (smallest eigenvalue {low:.6g}): "
                         f"the mode shapes are linearly dependent or carry no mass")
    if low < -_TOL * scale:
        raise ValueError(f"{name} is not positive semidefinite: it has the negative "
                         f"eigenvalue {low:.6g}")
    if np.any(np.diag(sym) < 0):
        k = int(np.argmin(np.diag(sym)))
        raise ValueError(f"{name} has the negative diagonal entry {sym[k, k]:.6g} at mode {k}")
    return sym


@dataclass(frozen=True, eq=False)
class Modes:
    """Mode data as mass points in the body frame (see the module docstring).

    Build it with :func:`codegen.flexible.beam_modes` (an analytic beam) or
    :func:`fe_modes` (finite-element node data) rather than directly.
    ``shape_at(x)`` (beams only) gives (Phi (3 x n), G (n x n)) at a station x
    of the axis, for points placed anywhere along the beam.
    """
    mass: np.ndarray                    # (N,)
    position: np.ndarray                # (N, 3)
    shape: np.ndarray                   # (N, 3, n)
    stiffness: np.ndarray               # (n, n)
    damping: np.ndarray                 # (n, n)
    names: tuple                        # n mode names
    axis: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    foreshortening: np.ndarray | None = None   # (N, n, n)
    rotary_inertia: np.ndarray | None = None   # (N, 3, 3)
    rotation_shape: np.ndarray | None = None   # (N, 3, n)
    shape_at: object = None             # callable x -> (Phi (3, n), G (n, n)), beams only
    node_labels: tuple = ()             # FE data: the node each point is
    beam: dict | None = None            # analytic beams: L, EI, rho_A, EI_z, axial, damping_ratio

    @property
    def n(self) -> int:
        return self.shape.shape[2]

    @property
    def modal_mass(self) -> np.ndarray:
        """sum m_i Phi_i^T Phi_i + Psi_i^T J_i Psi_i."""
        out = np.einsum("i,iak,ial->kl", self.mass, self.shape, self.shape)
        if self.rotary_inertia is not None:
            out = out + np.einsum("iak,iab,ibl->kl", self.rotation_shape,
                                  self.rotary_inertia, self.rotation_shape)
        return out

    def __post_init__(self):
        n = self.shape.shape[2] if self.shape.ndim == 3 else 0
        if n == 0:
            raise ValueError("the body has no modes (the mode shapes have no columns)")
        if len(self.names) != n:
            raise ValueError(f"{len(self.names)} mode names for {n} modes")
        if np.any(self.mass < 0):
            i = int(np.argmin(self.mass))
            raise ValueError(f"point {i} has the negative mass {self.mass[i]:.6g}")
        if self.mass.sum() <= 0:
            raise ValueError("the body has no mass")
        if abs(np.linalg.norm(self.axis) - 1) > 1e-9:
            raise ValueError(f"the beam axis {self.axis} is not a unit vector")
        check_modal_matrix("the modal stiffness", self.stiffness, n)
        check_modal_matrix("the modal damping", self.damping, n)
        check_modal_matrix("the modal mass matrix", self.modal_mass, n, definite=True)
        if self.foreshortening is not None:
            G = self.foreshortening
            if np.abs(G - G.transpose(0, 2, 1)).max() > _TOL * max(np.abs(G).max(), 1e-300):
                raise ValueError("the foreshortening matrices G are not symmetric")


def _rotary(value, N: int) -> np.ndarray | None:
    """Rotary inertia per node: None, (N,) scalars (isotropic) or (N, 3, 3)."""
    if value is None:
        return None
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 1:
        arr = _array("the rotary inertia", arr, (N,))
        return arr[:, None, None] * np.eye(3)
    arr = _array("the rotary inertia", arr, (N, 3, 3))
    if np.abs(arr - arr.transpose(0, 2, 1)).max() > _TOL * max(np.abs(arr).max(), 1e-300):
        raise ValueError("the rotary inertia of a node is not symmetric")
    if np.any(np.linalg.eigvalsh((arr + arr.transpose(0, 2, 1)) / 2) < -_TOL * np.abs(arr).max()):
        raise ValueError("the rotary inertia of a node is not positive semidefinite")
    return arr


def _slopes_foreshortening(x: np.ndarray, shape: np.ndarray, rot: np.ndarray,
                           anchor: float) -> np.ndarray:
    """G_i = int_anchor^{x_i} (v'_k v'_l + w'_k w'_l) dxi for beam-like node data.

    Between two nodes the transverse displacement v (w) is the Hermite cubic of its
    end values and slopes (v' = theta_z, w' = -theta_y, the beam element's own
    interpolation), so v'_k v'_l is a quartic: three Gauss points integrate it exactly.
    """
    order = np.argsort(x)
    xs = x[order]
    disp = np.stack([shape[order, 1, :], shape[order, 2, :]])          # (2, N, n)
    slope = np.stack([rot[order, 2, :], -rot[order, 1, :]])            # (2, N, n)
    gp, gw = np.polynomial.legendre.leggauss(3)
    n = shape.shape[2]
    seg = np.zeros((len(xs) - 1, n, n))
    for s in range(len(xs) - 1):
        h = xs[s + 1] - xs[s]
        xi = (gp + 1) / 2                                              # in [0, 1]
        # derivatives of the Hermite basis in xi, divided by h for d/dx
        dH = np.stack([6 * xi**2 - 6 * xi, 3 * xi**2 - 4 * xi + 1,
                       -6 * xi**2 + 6 * xi, 3 * xi**2 - 2 * xi])        # (4, 3)
        dv = (dH[0][:, None, None] * disp[:, s][None] / h + dH[1][:, None, None] * slope[:, s][None]
              + dH[2][:, None, None] * disp[:, s + 1][None] / h
              + dH[3][:, None, None] * slope[:, s + 1][None])          # (3, 2, n)
        seg[s] = np.einsum("g,gdk,gdl->kl", gw * h / 2, dv, dv)
    cum = np.concatenate([np.zeros((1, n, n)), np.cumsum(seg, axis=0)])
    hits = np.flatnonzero(np.abs(xs - anchor) <= 1e-12 * max(1.0, np.abs(xs).max()))
    if hits.size == 0:
        raise ValueError(f"the foreshortening is held at x = {anchor}, but no node lies there "
                         f"(nodes span {xs[0]:.6g} .. {xs[-1]:.6g})")
    cum = cum - cum[hits[0]]
    out = np.empty_like(cum)
    out[order] = cum
    return out


def fe_modes(positions, masses, shapes, stiffness, damping=None, rotations=None,
             rotary_inertia=None, names=None, geometric_stiffening: bool = True,
             foreshortening=None, anchor: float = 0.0) -> Modes:
    """Mode data from a finite-element model reduced to modes, as FE programs export it.

    Parameters
    ----------
    positions : (N, 3) node positions in the body frame.
    masses : (N,) lumped node masses.
    shapes : (N, 3, n) node translations per mode, or (N, 6, n) translations then
        rotations (the usual six nodal DOFs).
    stiffness, damping : (n, n) modal stiffness and damping (damping defaults to zero).
    rotations : (N, 3, n) node rotations per mode, if ``shapes`` holds translations only.
    rotary_inertia : (N,) or (N, 3, 3) node rotary inertia (needs rotations).
    geometric_stiffening : build the foreshortening G from the slopes. Supported for
        beam-like data: nodes on the body's x axis (y = z = 0) with rotation DOFs,
        the axial position held at the node at x = ``anchor``. Other data must pass
        ``foreshortening`` (N, n, n) itself or ``geometric_stiffening=False``.
    """
    positions = _array("the node positions", positions, (None, 3))
    N = positions.shape[0]
    masses = _array("the node masses", masses, (None,))
    if masses.shape[0] != N:
        raise ValueError(f"{masses.shape[0]} node masses for {N} node positions")
    shapes = np.array(shapes, dtype=float) if shapes is not None else None
    if shapes is None or shapes.ndim != 3:
        raise ValueError("the mode shapes must be an (N nodes, 3 or 6 DOFs, n modes) array, "
                         f"got shape {None if shapes is None else shapes.shape}")
    if shapes.shape[0] != N:
        raise ValueError(f"the mode shapes have {shapes.shape[0]} nodes, but there are "
                         f"{N} node positions")
    if shapes.shape[1] == 6:
        if rotations is not None:
            raise ValueError("rotations given twice: in the 6-DOF mode shapes and as rotations")
        shapes, rotations = shapes[:, :3], shapes[:, 3:]
    elif shapes.shape[1] != 3:
        raise ValueError(f"the mode shapes have {shapes.shape[1]} DOFs per node, expected 3 "
                         f"(translations) or 6 (translations and rotations)")
    shapes = _array("the mode shapes", shapes, (N, 3, None))
    n = shapes.shape[2]
    if rotations is not None:
        rotations = _array("the mode rotations", rotations, (N, 3, n))
    J = _rotary(rotary_inertia, N)
    if J is not None and rotations is None:
        raise ValueError("rotary inertia given without the mode rotations of the nodes")
    damping = np.zeros((n, n)) if damping is None else damping
    G = None
    if foreshortening is not None:
        G = _array("the foreshortening", foreshortening, (N, n, n))
    elif geometric_stiffening:
        if rotations is None:
            raise ValueError("geometric stiffening from FE node data needs the slopes: give "
                             "the mode rotations (6-DOF shapes), or the foreshortening G per "
                             "node, or geometric_stiffening=False")
        off_axis = np.abs(positions[:, 1:]).max()
        if off_axis > 1e-9 * max(1.0, np.abs(positions).max()):
            raise ValueError("geometric stiffening from FE node data is supported for beam-like "
                             "data only: nodes on the body's x axis (y = z = 0); this data has a "
                             f"node {off_axis:.6g} off the axis. Give the foreshortening G per "
                             "node, or geometric_stiffening=False")
        if len(np.unique(positions[:, 0])) != N:
            raise ValueError("two nodes of the beam-like data are at the same x")
        G = _slopes_foreshortening(positions[:, 0], shapes, rotations, anchor)
    names = tuple(names) if names is not None else tuple(f"mode{k}" for k in range(n))
    return Modes(mass=masses, position=positions, shape=shapes,
                 stiffness=np.asarray(stiffness, dtype=float),
                 damping=np.asarray(damping, dtype=float), names=names,
                 foreshortening=G, rotary_inertia=J,
                 rotation_shape=rotations if J is not None else None,
                 node_labels=tuple(range(N)))
