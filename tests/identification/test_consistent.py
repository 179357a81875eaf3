"""Physically consistent estimates (codegen.identification.consistent): the pseudo-inertia
LMI checked against mass distributions built point by point, the iiwa identified from
noiseless torques exactly, and from poor, noisy data where least squares is not physical.

The torques are Y π of the iiwa's URDF values: that Y π is the iiwa's inverse dynamics is
test_iiwa_example's and test_regressor's concern."""
import sys

import numpy as np
import pytest

from codegen.identification import (FourierTrajectory, InconsistentSolve, base_matrix,
                                    consistency, estimate, estimate_consistent,
                                    pseudo_inertia, regressor, stack, stack_full)
from codegen.identification.parameters import INERTIA_ORDER
from codegen.robots import from_urdf
from robot_oracle import shared

@pytest.fixture(scope="module")
def iiwa(outdir):
    """The iiwa's regressor and its module, for the fits: they need cvxpy."""
    pytest.importorskip("cvxpy")
    reg = regressor(from_urdf(shared("iiwa"), exact=True))
    return reg, reg.generate("id_iiwa_consistent", output_dir=outdir)


def _trajectory(seed):
    rng = np.random.default_rng(seed)
    return FourierTrajectory(np.zeros(7), rng.normal(scale=0.25, size=(7, 3)),
                             rng.normal(scale=0.25, size=(7, 3)), 2 * np.pi / 10)


def _truth(reg):
    return np.array([reg.values[s] for s in reg.parameters])


def _cloud(rng, k):
    """A rigid body of k point masses: its ten parameters about the origin, and the
    pseudo-inertia summed point by point, Σ m_i [p_i; 1][p_i; 1]ᵀ."""
    m = rng.uniform(0.1, 2.0, size=k)
    p = rng.normal(size=(k, 3)) * rng.uniform(0.01, 0.5, size=3) + rng.normal(size=3)
    inertia = sum(mi * (pi @ pi * np.eye(3) - np.outer(pi, pi)) for mi, pi in zip(m, p))
    values = [m.sum(), *(m @ p)] + [inertia[i, j] for i, j in INERTIA_ORDER]
    ph = np.hstack([p, np.ones((k, 1))])
    return np.array(values), (ph.T * m) @ ph


@pytest.mark.parametrize("seed", range(8))
def test_pseudo_inertia_of_point_masses(seed):
    """(c) J of a physical body equals its second moments, and is PSD (rank 1 for one
    point mass)."""
    rng = np.random.default_rng(seed)
    for k in (1, 2, 5, 20):
        values, moments = _cloud(rng, k)
        J = pseudo_inertia(values)
        assert np.allclose(J, moments, rtol=0, atol=1e-12 * np.abs(moments).max())
        eig = np.linalg.eigvalsh(J)
        assert eig[0] >= -1e-12 * eig[-1], (k, eig)
        if k == 1:
            assert eig[1] <= 1e-12 * eig[-1]         # one point: rank 1


@pytest.mark.parametrize("origin", [(0, 0, 0), (0.3, -0.2, 0.5)])
def test_pseudo_inertia_of_the_triangle_inequality(origin):
    """(c) principal moments (3, 1, 1) about the mass centre: positive definite, but
    Ixx > Iyy + Izz, so no mass distribution has them; about any other origin (the
    parallel-axis theorem) J is still not PSD, and (2, 1, 1), on the bound, is."""
    c, m = np.array(origin, float), 1.5
    for moments, physical in (((3.0, 1.0, 1.0), False), ((2.0, 1.0, 1.0), True),
                              ((1.9, 1.0, 1.0), True)):
        inertia = np.diag(moments) + m * (c @ c * np.eye(3) - np.outer(c, c))
        values = [m, *(m * c)] + [inertia[i, j] for i, j in INERTIA_ORDER]
        eig = np.linalg.eigvalsh(pseudo_inertia(values))
        if physical:
            assert eig[0] >= -1e-12
        else:
            assert eig[0] < -0.1, eig
    assert np.allclose(pseudo_inertia([2.0]), np.diag([0, 0, 0, 2.0]))   # a particle


def test_noiseless_iiwa(iiwa):
    """(a) the URDF's bodies are physical; from noiseless torques the consistent fit gives
    the true base parameters to 1e-6 of the largest, from a prior 1.5 times the truth
    (physical, but wrong), and to 1e-8 without the regularization."""
    reg, mod = iiwa
    truth = _truth(reg)
    eig = consistency(reg, truth)
    assert len(eig) == 7 and min(eig.values()) > 1e-3, eig
    beta = np.array(reg.base_values)
    R = base_matrix(reg)
    assert np.abs(R @ truth - beta).max() < 1e-12
    X, UD = _trajectory(1).samples(np.linspace(0, 10, 250, endpoint=False))
    Y = stack_full(mod, X, UD)
    W = stack(mod, X, UD)                       # Y_b: Y's pivot columns (a CSE of their own)
    assert np.allclose(Y[:, reg.pivots], W, rtol=0, atol=1e-12 * np.abs(W).max())
    tau = (Y @ truth).reshape(-1, 7)
    prior = 1.5 * truth
    assert min(consistency(reg, prior).values()) > 0
    for regularization, tol in ((1e-8, 1e-6), (0.0, 1e-8)):
        fit = estimate_consistent(reg, Y, tau, sigma=np.ones(7), prior=prior,
                                  regularization=regularization)
        assert fit.status == "optimal"
        err = np.abs(fit.base - beta).max() / np.abs(beta).max()
        assert err < tol, (regularization, err)
        assert np.allclose(fit.base, R @ fit.values, rtol=0, atol=1e-12)
        assert min(fit.min_eigenvalues.values()) >= -1e-8
        assert np.abs(fit.residual).max() < 1e-6 * np.abs(tau).max()
    # the default prior is the model's own numbers: the truth here, found exactly
    fit = estimate_consistent(reg, Y, tau, sigma=np.ones(7))
    assert np.abs(fit.values - truth).max() < 1e-9


def test_poorly_excited_noisy_iiwa(iiwa):
    """(b) 2 s of motion (condition number 7e3), 0.5 N·m of noise: least squares fits
    base parameters that no physical π has (an SDP in π alone says so); the consistent
    fit is physical, its residual at most 10 % larger, and far nearer the truth."""
    import cvxpy as cp
    reg, mod = iiwa
    truth, beta = _truth(reg), np.array(reg.base_values)
    X, UD = _trajectory(1).samples(np.linspace(0, 2, 40, endpoint=False))
    Y, W = stack_full(mod, X, UD), stack(mod, X, UD)
    tau = (Y @ truth).reshape(-1, 7)
    noisy = tau + np.random.default_rng(0).normal(scale=0.5, size=tau.shape)
    plain = estimate(W, noisy, 7)                     # σ from the residuals, as below
    # the largest t with some π, R π = plain's β, every body's J ⪰ t·1 (measured: -14.6)
    pi, t = cp.Variable(len(truth)), cp.Variable()
    basis = [pseudo_inertia(e) for e in np.eye(10)]
    lmis = [sum(pi[10 * b + i] * basis[i] for i in range(10)) for b in range(7)]
    problem = cp.Problem(cp.Maximize(t), [base_matrix(reg) @ pi == plain.values, t <= 1]
                         + [(J + J.T) / 2 >> t * np.eye(4) for J in lmis])
    problem.solve(solver="CLARABEL")
    assert problem.status == "optimal" and t.value < -1.0, t.value
    # the least-squares π nearest the prior: some body far from physical (measured: -15.7)
    full = truth + np.linalg.lstsq(Y, noisy.reshape(-1) - Y @ truth, rcond=None)[0]
    assert min(consistency(reg, full).values()) < -1.0

    fit = estimate_consistent(reg, Y, noisy)
    assert np.allclose(fit.sigma, plain.sigma)
    assert min(fit.min_eigenvalues.values()) >= -1e-8, fit.min_eigenvalues
    assert min(consistency(reg, fit.values).values()) >= -1e-8 and fit.lift <= 1e-6
    assert min(consistency(reg, fit.unconstrained).values()) < -1.0
    r_plain = np.linalg.norm(plain.residual)
    r_fit = np.linalg.norm(fit.residual)
    assert r_plain * (1 - 1e-9) <= r_fit <= 1.1 * r_plain, r_fit / r_plain   # measured 1.04
    # measured: 3.1 against 48.6
    assert np.linalg.norm(fit.base - beta) < 0.2 * np.linalg.norm(plain.values - beta)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_bad_input(iiwa, monkeypatch):
    """(d) wrong shapes and NaN are named, a failed solve names its status, and a missing
    cvxpy says how to install it."""
    reg, mod = iiwa
    truth = _truth(reg)
    X, UD = _trajectory(1).samples(np.linspace(0, 10, 60, endpoint=False))
    Y = stack_full(mod, X, UD)
    tau = (Y @ truth).reshape(-1, 7)
    sigma = np.ones(7)
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="X has NaN"):
        stack_full(mod, bad, UD)
    with pytest.raises(ValueError, match="stack_full"):
        estimate_consistent(reg, stack(mod, X, UD), tau, sigma=sigma)
    with pytest.raises(ValueError, match="tau must have shape"):
        estimate_consistent(reg, Y, tau[:, :6], sigma=sigma)
    nan = tau.copy()
    nan[5, 1] = np.nan
    with pytest.raises(ValueError, match="tau has NaN"):
        estimate_consistent(reg, Y, nan, sigma=sigma)
    nan = Y.copy()
    nan[0, 0] = np.inf
    with pytest.raises(ValueError, match="Y has NaN"):
        estimate_consistent(reg, nan, tau, sigma=sigma)
    with pytest.raises(ValueError, match="Y has shape"):
        estimate_consistent(reg, Y[1:], tau, sigma=sigma)
    with pytest.raises(ValueError, match="sigma"):
        estimate_consistent(reg, Y, tau, sigma=-sigma)
    with pytest.raises(ValueError, match="prior"):
        estimate_consistent(reg, Y, tau, sigma=sigma, prior=truth[:-1])
    with pytest.raises(ValueError, match="regularization"):
        estimate_consistent(reg, Y, tau, sigma=sigma, regularization=-1.0)
    with pytest.raises(ValueError, match="margin"):
        estimate_consistent(reg, Y, tau, sigma=sigma, margin=np.nan)
    with pytest.raises(ValueError, match="10 parameters"):
        pseudo_inertia(truth[:9])
    with pytest.raises(ValueError, match="70 entries"):
        consistency(reg, truth[:10])
    with pytest.raises(InconsistentSolve, match="user_limit"):
        estimate_consistent(reg, Y, tau + 0.1, sigma=sigma, solver_options=dict(max_iter=2))
    with pytest.raises(InconsistentSolve, match="NOPE"):
        estimate_consistent(reg, Y, tau, sigma=sigma, solver="NOPE")
    monkeypatch.setitem(sys.modules, "cvxpy", None)
    with pytest.raises(ImportError, match=r"pip install gibbs-appell-codegen\[identification\]"):
        estimate_consistent(reg, Y, tau, sigma=sigma)
