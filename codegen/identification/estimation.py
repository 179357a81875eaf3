"""Estimating the base parameters from measured motion: the stacked base regressor, weighted
least squares with the estimates' standard deviations, and the stack's condition number.

With W the base regressors of N samples stacked (N·n rows) and τ the measured torques,
β̂ minimizes Σ_j ||(τ_j − W_j β)/σ_j||² over the joints j. Without given σ, each joint's
σ_j comes from the residuals of an unweighted fit, σ_j² = ||r_j||² / (N − nb / n)
(Gautier's weighting, one noise level per joint), and the covariance of β̂ is
(Wᵀ Σ⁻¹ W)⁻¹.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Estimate", "stack", "estimate", "condition_number", "RankDeficientExcitation",
           "check_array", "check_samples", "check_system", "check_sigma"]


class RankDeficientExcitation(ValueError):
    """Data that leave some base parameters unseen (named in the message)."""


@dataclass
class Estimate:
    """β̂, its standard deviations and covariance, the joints' σ and the fit's residual."""
    values: np.ndarray
    std: np.ndarray
    covariance: np.ndarray
    sigma: np.ndarray
    residual: np.ndarray
    condition: float


def check_array(a, shape_tail, what) -> np.ndarray:
    """a as floats of shape (N, *shape_tail) with finite entries, else a ValueError
    naming it (what)."""
    a = np.asarray(a, dtype=float)
    if a.ndim != 2 or a.shape[1:] != shape_tail:
        raise ValueError(f"{what} must have shape (N, {shape_tail[0]}), got {a.shape}")
    if not np.all(np.isfinite(a)):
        rows = sorted(set(np.argwhere(~np.isfinite(a))[:, 0].tolist()))[:5]
        raise ValueError(f"{what} has NaN or infinite entries (samples {rows}...)")
    return a


def stack(module, X, UD) -> np.ndarray:
    """The base regressors of the samples (X: N x nx states, UD: N x n accelerations)
    stacked joint-major per sample: rows k·n + j."""
    return module.batch("base_regressor", *check_samples(module, X, UD))


def check_samples(module, X, UD) -> tuple:
    """(X, UD) checked for module: N x nx states and N x n accelerations, finite."""
    X = check_array(X, (module.nx,), "X")
    UD = check_array(UD, (module.n,), "UD")
    if len(X) != len(UD):
        raise ValueError(f"X has {len(X)} samples and UD {len(UD)}")
    return X, UD


def check_system(W, tau, n: int, what: str = "W") -> tuple:
    """(W, tau) checked: tau N x n finite torques, W a finite stack of N·n rows (named
    what in the messages)."""
    W = np.asarray(W, dtype=float)
    tau = check_array(tau, (n,), "tau")
    if W.ndim != 2 or W.shape[0] != tau.size:
        raise ValueError(f"{what} has shape {W.shape}; tau's {tau.shape} needs {tau.size} rows")
    if not np.all(np.isfinite(W)):
        raise ValueError(f"{what} has NaN or infinite entries")
    return W, tau


def check_sigma(sigma, n: int) -> np.ndarray:
    """sigma as n positive finite numbers (each joint's torque noise), else a ValueError."""
    s = np.asarray(sigma, dtype=float)
    if s.shape != (n,) or not np.all(np.isfinite(s)) or not np.all(s > 0):
        raise ValueError(f"sigma must be {n} positive numbers, got {sigma}")
    return s


def condition_number(W) -> float:
    """The 2-norm condition number of a stacked regressor (columns as they are)."""
    s = np.linalg.svd(W, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")


def _check_rank(W, names, max_condition):
    U, s, Vt = np.linalg.svd(W, full_matrices=False)
    if s[-1] > 0 and s[0] / s[-1] < max_condition:
        return
    weak = Vt[-1]
    seen = [names[k] for k in np.argsort(-np.abs(weak))[:3] if abs(weak[k]) > 0.1]
    raise RankDeficientExcitation(
        f"the data do not excite every base parameter (condition number "
        f"{s[0] / max(s[-1], 1e-300):.3g}): they cannot tell apart {', '.join(map(str, seen))}; "
        f"use a richer excitation (codegen.identification.excitation)")


def estimate(W, tau, n: int, sigma=None, names=None, max_condition: float = 1e10) -> Estimate:
    """Weighted least squares of β from W (N·n x nb, stack's) and tau (N x n torques).
    sigma: each joint's torque noise (n,), or None to estimate it from the residuals.
    names: the base parameters' names for the message of rank-deficient data."""
    W, tau = check_system(W, tau, n)
    names = names if names is not None else [f"beta_{k}" for k in range(W.shape[1])]
    _check_rank(W, names, max_condition)
    y = tau.reshape(-1)
    N, nb = len(tau), W.shape[1]
    if sigma is None:
        beta0 = np.linalg.lstsq(W, y, rcond=None)[0]
        r = (y - W @ beta0).reshape(N, n)
        dof = max(N - nb / n, 1.0)
        sigma = np.sqrt((r ** 2).sum(axis=0) / dof)
        sigma = np.where(sigma > 0, sigma, max(sigma.max(), 1e-300))
    sigma = check_sigma(sigma, n)
    w = np.tile(1.0 / sigma, N)
    Ww, yw = W * w[:, None], y * w
    beta = np.linalg.lstsq(Ww, yw, rcond=None)[0]
    cov = np.linalg.inv(Ww.T @ Ww)
    return Estimate(beta, np.sqrt(np.diag(cov)), cov, sigma, y - W @ beta, condition_number(W))
