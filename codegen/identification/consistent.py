"""Physically consistent estimates: the standard parameters π fitted to measured torques
with every body's pseudo-inertia positive semidefinite (Wensing, Kim and Slotine, "Linear
Matrix Inequalities for Physically Consistent Inertial Parameter Identification: A
Statistical Perspective on the Mass Distribution", IEEE RA-L 3(1), 2018; the LMI view of
Sousa and Cortesão, IJRR 33(6), 2014).

A rigid body's ten parameters (m, h = m·c, Ī the inertia about its origin) have the
pseudo-inertia

    J = [[½ tr(Ī)·1₃ − Ī, h], [hᵀ, m]] = ∫ [p; 1][p; 1]ᵀ dm(p),

the second moments of its mass distribution: J = m [c; 1][c; 1]ᵀ + diag(Σ_c, 0), Σ_c the
covariance about the mass centre. So with m > 0, J ⪰ 0 exactly when some nonnegative mass
distribution (point masses allowed) has (m, h, Ī), which is the same as the principal
moments about the mass centre obeying the triangle inequalities; J ≻ 0 when a density
does (Wensing et al.). Unlike those inequalities, J is linear in π, so the fit is a
semidefinite program. A particle's J is diag(0, 0, 0, m).

The base regressor cannot express the constraints (a base parameter mixes several
bodies), so the fit runs on the full regressor Y (``stack_full``) and reports the base
parameters β̂ = R π̂ as well (``base_matrix``). It needs cvxpy (``pip install
gibbs-appell-codegen[identification]``). The solver is Clarabel, an interior-point
method with semidefinite cones of its own: it solves these small programs to its 1e-8
tolerances in about 0.06 s on the iiwa, where a first-order method (SCS) at its defaults
stops far less accurate.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .estimation import check_samples, check_sigma, check_system, estimate
from .parameters import INERTIA_ORDER

__all__ = ["ConsistentEstimate", "InconsistentSolve", "estimate_consistent", "stack_full",
           "pseudo_inertia", "consistency", "base_matrix"]

#: the joint terms that cannot be negative (codegen.identification.joints): friction that
#: takes energy out, a rotor's inertia. An offset τ0 has either sign.
NONNEGATIVE = ("viscous", "coulomb", "armature")
#: how far below its bound (relative to the body's J) a solver's optimum may leave a
#: body before _lift's correction becomes a failed solve (Clarabel's are about 1e-8)
LIFT = 1e-6


class InconsistentSolve(RuntimeError):
    """The solver did not return an optimal point (its status is in the message)."""


@dataclass
class ConsistentEstimate:
    """The fit: π̂ (``values``, in reg.parameters' order), its base parameters β̂ = R π̂
    (``base``), each body's smallest pseudo-inertia eigenvalue (``min_eigenvalues``, by
    name), the torque residual τ − Y π̂ (N·n, as Estimate's), the joints' σ, the same fit
    without the constraints (``unconstrained``, π: the least-squares π nearest the prior),
    the solver's status, its time [s] (cvxpy's compilation included), and ``lift``: the
    largest t by which _lift raised a body onto its bound after the solve (0 when the
    solver's point met them all, about its tolerance otherwise)."""
    values: np.ndarray
    base: np.ndarray
    min_eigenvalues: dict
    residual: np.ndarray
    sigma: np.ndarray
    unconstrained: np.ndarray
    status: str
    solve_time: float
    lift: float


def stack_full(module, X, UD) -> np.ndarray:
    """The full regressors Y of the samples stacked as ``stack`` stacks the base ones:
    (N·n) x len(π), rows k·n + j."""
    return module.batch("regressor", *check_samples(module, X, UD))


def pseudo_inertia(values) -> np.ndarray:
    """The 4 x 4 pseudo-inertia J of one body's parameters: ten in NAMES' order (m, m·c,
    the inertia about the origin as Ixx, Ixy, Iyy, Ixz, Iyz, Izz), or a particle's mass
    alone. J ⪰ 0 exactly when some nonnegative mass distribution has these parameters."""
    v = np.asarray(values, dtype=float).ravel()
    J = np.zeros((4, 4))
    if v.shape == (1,):
        J[3, 3] = v[0]
        return J
    if v.shape != (10,):
        raise ValueError(f"a body has 10 parameters (or a particle 1), got {v.shape[0]}")
    inertia = np.zeros((3, 3))
    for x, (i, j) in zip(v[4:], INERTIA_ORDER):
        inertia[i, j] = inertia[j, i] = x
    J[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    J[:3, 3] = J[3, :3] = v[1:4]
    J[3, 3] = v[0]
    return J


def _positions(reg) -> dict:
    """{parameter symbol: its index in π}."""
    return {s: k for k, s in enumerate(reg.parameters)}


def _body_slices(reg) -> list:
    """(name, indices into π) of each body of reg, in reg.bodies' order."""
    index = _positions(reg)
    return [(b.name, [index[s] for s in b.symbols]) for b in reg.bodies]


def consistency(reg, pi) -> dict:
    """{body name: the smallest eigenvalue of its pseudo-inertia} at the parameters pi (in
    reg.parameters' order). Negative: no mass distribution has them."""
    pi = np.asarray(pi, dtype=float)
    if pi.shape != (len(reg.parameters),):
        raise ValueError(f"pi must have {len(reg.parameters)} entries, got shape {pi.shape}")
    return {name: float(np.linalg.eigvalsh(pseudo_inertia(pi[k]))[0])
            for name, k in _body_slices(reg)}


def base_matrix(reg) -> np.ndarray:
    """R (len(reg.base) x len(π)), β = R π: reg.base's exact coefficients as floats."""
    index = _positions(reg)
    R = np.zeros((len(reg.base), len(reg.parameters)))
    for row, b in enumerate(reg.base):
        for s, c in b.as_coefficients_dict().items():
            R[row, index[s]] = float(c)
    return R


def _cvxpy():
    try:
        import cvxpy
    except ImportError as e:
        raise ImportError("physically consistent estimates need cvxpy: pip install "
                          "gibbs-appell-codegen[identification]") from e
    return cvxpy


def estimate_consistent(reg, Y, tau, sigma=None, prior=None, regularization: float = 1e-8,
                        margin: float = 0.0, solver: str = "CLARABEL", solver_options=None,
                        max_condition: float = 1e10) -> ConsistentEstimate:
    """π̂ minimizing Σ_j ||(τ_j − (Y π)_j)/σ_j||² + λ ||P D (π − π₀)||² subject to every
    body's pseudo-inertia J ⪰ margin·1 (a particle: m ≥ margin) and each joint's viscous
    and Coulomb friction and armature ≥ 0 (an offset is free).

    reg: the model's Regressor; Y: stack_full's (N·n x len(π)); tau: N x n torques.
    sigma: each joint's torque noise, or None for the σ that ``estimate`` finds on Y's
    base columns (Y[:, reg.pivots], Gautier's weighting; that needs data exciting every
    base parameter, as estimate does: give sigma for poorer data). prior: π₀ (default:
    the model's own reg.values).

    regularization: λ. D is diagonal, D_k the norm of π_k's column in the weighted stack
    (so λ is unit-free; a parameter no torque sees gets the smallest nonzero column's
    norm), and P projects onto the directions of D (π − π₀) that leave β = R π unchanged:
    the prior decides only what the data cannot see, which makes π̂ unique. Where no
    constraint is active it leaves β̂ exactly the constrained least-squares one; where one
    is, holding the unseen part at the prior can move β̂. The default 1e-8 is about the
    smallest that still fixes π̂ at Clarabel's tolerances, and it moved the iiwa's β̂ by at
    most 0.05 of their standard deviations (docs/identification.md); 0 turns it off.
    margin: ε in J's units (kg·m², kg); a massless body (a URDF link without inertia)
    needs ε = 0. solver, solver_options: cvxpy's solver name and its keyword options.
    max_condition: as estimate's, when it finds σ."""
    cp = _cvxpy()
    n, p = reg.n, len(reg.parameters)
    Y, tau = check_system(Y, tau, n, what="Y")
    if Y.shape[1] != p:
        raise ValueError(f"Y has {Y.shape[1]} columns; {reg.model.name!r} has {p} parameters "
                         f"(Y is stack_full's, not stack's)")
    pi0 = np.array([reg.values[s] for s in reg.parameters] if prior is None else prior,
                   dtype=float)
    if pi0.shape != (p,) or not np.all(np.isfinite(pi0)):
        raise ValueError(f"prior must be {p} finite numbers, got shape {pi0.shape}")
    if not (np.isfinite(regularization) and regularization >= 0):
        raise ValueError(f"regularization must be >= 0, got {regularization}")
    if not (np.isfinite(margin) and margin >= 0):
        raise ValueError(f"margin must be >= 0, got {margin}")
    N = len(tau)
    if sigma is None:
        sigma = estimate(Y[:, reg.pivots], tau, n, names=reg.base_names,
                         max_condition=max_condition).sigma
    sigma = check_sigma(sigma, n)

    # the weighted least squares reduced to p rows (a thin QR): ||A π − b||² equals
    # ||Rq π − c||² plus a constant, so the cone program does not carry N·n rows
    w = np.tile(1.0 / sigma, N)
    A, b = Y * w[:, None], tau.reshape(-1) * w
    Q, Rq = np.linalg.qr(A)
    c = Q.T @ b
    # the variable z = D (π − π₀) / scale: unit columns, a unit-free λ, a program of O(1)
    d = np.linalg.norm(Rq, axis=0)
    if not d.max() > 0:
        raise ValueError("Y is zero: the samples show no parameter")
    seen = d > 1e-12 * d.max()
    d = np.where(seen, d, d[seen].min())
    M, r = Rq / d, c - Rq @ pi0
    scale = max(np.linalg.norm(r), 1e-300)   # the residual at the prior, to O(1)
    r = r / scale

    # the directions of z no torque can see: the null space of β = R π (exact), in z
    R = base_matrix(reg)
    Rz = R / d
    null = np.linalg.svd(Rz)[2][len(reg.base):] * np.sqrt(regularization)
    # the same fit without the constraints, in closed form (lstsq: λ = 0 too)
    z_free = np.linalg.lstsq(np.vstack([M, null]), np.concatenate([r, np.zeros(len(null))]),
                             rcond=None)[0]
    unconstrained = pi0 + scale * z_free / d

    z = cp.Variable(p)
    pi = pi0 + cp.multiply(scale / d, z)
    basis = [pseudo_inertia(e) for e in np.eye(10)]     # J is linear: Σ_i π_i J(e_i)
    constraints = []
    for _, k in _body_slices(reg):
        if len(k) == 1:                                   # a particle: its mass alone
            constraints.append(pi[k[0]] >= margin)
            continue
        J = sum(pi[k[i]] * basis[i] for i in range(10))
        constraints.append((J + J.T) / 2 - margin * np.eye(4) >> 0)
    index = _positions(reg)
    for term in reg.joint_terms:
        if term.kind in NONNEGATIVE:
            constraints.append(pi[index[term.symbol]] >= 0)
    # the norm, not its square: the solver's gap is then on ||·|| itself, which a
    # noiseless fit drives to 0 (the square's 1e-8 would leave residuals of 1e-4)
    objective = cp.Minimize(cp.norm(cp.hstack([M @ z - r, null @ z])))
    problem = cp.Problem(objective, constraints)
    start = time.perf_counter()
    try:
        problem.solve(solver=solver, **(solver_options or {}))
    except cp.error.SolverError as e:
        raise InconsistentSolve(f"{solver} failed on the consistent fit: {e}") from e
    elapsed = time.perf_counter() - start
    if problem.status != cp.OPTIMAL:
        raise InconsistentSolve(f"{solver} ended with status {problem.status!r} on the "
                                f"consistent fit (margin {margin}); no estimate returned")
    values, lift = _lift(reg, pi0 + scale * np.asarray(z.value) / d, pi0, margin)
    return ConsistentEstimate(values, R @ values, consistency(reg, values),
                              tau.reshape(-1) - Y @ values, sigma, unconstrained,
                              problem.status, elapsed, lift)


def _lift(reg, values, prior, margin) -> tuple:
    """(values, the largest t): each body the solver left below margin within its
    tolerance (LIFT of its J's norm) raised onto it, J + t·1₄ being m + t and Ixx, Iyy,
    Izz + 2t (a particle: m + t), and a friction or armature within LIFT below 0 set to
    0. Further below is a failed solve (InconsistentSolve)."""
    values, largest = values.copy(), 0.0
    for name, k in _body_slices(reg):
        J = pseudo_inertia(values[k])
        t = margin - (values[k[0]] if len(k) == 1 else np.linalg.eigvalsh(J)[0])
        if t <= 0:
            continue
        size = max(np.linalg.norm(J, 2), np.linalg.norm(pseudo_inertia(prior[k]), 2), 1e-6)
        if t > LIFT * size:
            raise InconsistentSolve(f"the solver's optimum leaves {name}'s pseudo-inertia "
                                    f"{t:.3g} below the margin {margin}")
        values[k[0]] += t
        if len(k) == 10:
            values[[k[4], k[6], k[9]]] += 2 * t      # Ixx, Iyy, Izz (NAMES' order)
        largest = max(largest, t)
    index = _positions(reg)
    for term in reg.joint_terms:
        k = index[term.symbol]
        if term.kind in NONNEGATIVE and values[k] < 0:
            if values[k] < -LIFT * max(1.0, abs(prior[k])):
                raise InconsistentSolve(f"the solver's optimum has {term.symbol} = "
                                        f"{values[k]:.3g} < 0")
            largest, values[k] = max(largest, -values[k]), 0.0
    return values, largest
