"""An excitation trajectory: a finite Fourier series per joint (Swevers et al. 1997),
its coefficients chosen to minimize the condition number of the stacked base regressor
while every joint stays within its limits.

q_j(t) = q0_j + Σ_l a_jl/(ω_f l) sin(ω_f l t) − b_jl/(ω_f l) cos(ω_f l t), l = 1..L,
so that q', q'' are exact and the motion is periodic. For models whose speeds are the
coordinates' rates (u = q'): a robot arm's joints. The optimization needs SciPy.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .estimation import condition_number, stack

__all__ = ["FourierTrajectory", "optimize_excitation"]


@dataclass
class FourierTrajectory:
    """q0 (n,), a and b (n x L), the base frequency [rad/s]."""
    q0: np.ndarray
    a: np.ndarray
    b: np.ndarray
    omega: float

    def __call__(self, t):
        """(q, q', q'') at the times t, each len(t) x n."""
        t = np.atleast_1d(np.asarray(t, dtype=float))[:, None, None]
        l = np.arange(1, self.a.shape[1] + 1)[None, None, :]
        wl = self.omega * l
        s, c = np.sin(wl * t), np.cos(wl * t)
        q = self.q0 + ((self.a / wl) * s - (self.b / wl) * c).sum(-1)
        qd = (self.a * c + self.b * s).sum(-1)
        qdd = (wl * (-self.a * s + self.b * c)).sum(-1)
        return q, qd, qdd

    def samples(self, t):
        """(X, UD) for stack: the states [q, q'] and the accelerations at the times t."""
        q, qd, qdd = self(t)
        return np.hstack([q, qd]), qdd


def optimize_excitation(module, lower, upper, harmonics: int = 3, period: float = 10.0,
                        samples: int = 60, max_speed=None, seed: int = 0,
                        maxiter: int = 60) -> tuple:
    """(trajectory, condition number): the Fourier trajectory whose base regressor,
    stacked at samples times over one period, has the smallest condition number found
    (SciPy's SLSQP from a random start), with lower <= q <= upper (and |q'| <= max_speed)
    on a finer grid. module: a compiled regressor (Regressor.generate)."""
    from scipy.optimize import minimize
    n = module.n
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    if lower.shape != (n,) or upper.shape != (n,) or np.any(lower >= upper):
        raise ValueError(f"lower and upper must be {n} limits with lower < upper")
    mid, half = (lower + upper) / 2, (upper - lower) / 2
    omega = 2 * np.pi / period
    t = np.linspace(0.0, period, samples, endpoint=False)
    L = harmonics

    def trajectory(z):
        return FourierTrajectory(mid, z[:n * L].reshape(n, L), z[n * L:].reshape(n, L), omega)

    def cost(z):
        X, UD = trajectory(z).samples(t)
        return np.log(condition_number(stack(module, X, UD)))

    # the limits on a grid 8 times finer than the samples', with a 1 % margin, so that the
    # motion between grid points stays inside them too
    fine = np.linspace(0.0, period, 8 * samples, endpoint=False)

    def room(z):
        q, qd, _ = trajectory(z)(fine)
        out = [(0.99 * half - np.abs(q - mid)).ravel()]
        if max_speed is not None:
            out.append((np.asarray(max_speed, float) - np.abs(qd)).ravel())
        return np.concatenate(out)

    rng = np.random.default_rng(seed)
    # a random start whose amplitudes are a fraction of each joint's range
    scale = np.tile(np.repeat(half * omega / (2 * L), L), 2)
    z0 = rng.normal(size=2 * n * L) * scale
    reach = np.max(np.abs(trajectory(z0)(t)[0] - mid) / half)
    z0 = z0 * min(1.0, 0.8 / reach)
    result = minimize(cost, z0, method="SLSQP", constraints=[dict(type="ineq", fun=room)],
                      options=dict(maxiter=maxiter))
    best = result.x if np.all(room(result.x) >= -1e-9) else z0
    return trajectory(best), float(np.exp(cost(best)))
