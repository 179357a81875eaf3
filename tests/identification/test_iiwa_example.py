"""The worked example of docs/identification.md, run: the iiwa simulated with its URDF
parameters along a Fourier excitation, noise on τ, the base parameters identified, and
the torques of a fresh trajectory predicted."""
import numpy as np
import pytest

from codegen import GibbsAppellMethod, generate
from codegen.identification import FourierTrajectory, estimate, regressor, stack
from codegen.robots import from_urdf
from robot_oracle import shared


@pytest.fixture(scope="module")
def iiwa(outdir):
    out = outdir
    model = from_urdf(shared("iiwa"), exact=True)
    reg = regressor(model)
    plain = from_urdf(shared("iiwa"))
    dyn = generate(GibbsAppellMethod(**plain.kwargs), "id_iiwa_dynamics", output_dir=out,
                   jacobian=False)
    return plain, reg, reg.generate("id_iiwa_example", output_dir=out), dyn


def _trajectory(seed):
    rng = np.random.default_rng(seed)
    return FourierTrajectory(np.zeros(7), rng.normal(scale=0.25, size=(7, 3)),
                             rng.normal(scale=0.25, size=(7, 3)), 2 * np.pi / 10)


def test_identify_the_iiwa(iiwa):
    model, reg, mod, dyn = iiwa
    p = dyn.parameters(model.parameter_values)
    t = np.linspace(0, 10, 250, endpoint=False)
    X, UD = _trajectory(1).samples(t)
    tau = np.array([dyn.inverse_dynamics(0.0, x, ud, p, np.zeros(7)) for x, ud in zip(X, UD)])
    W = stack(mod, X, UD)
    beta = np.array(reg.base_values)
    names = [f"{reg.parameters[k]}R" for k in reg.pivots]
    exact = estimate(W, tau, 7, sigma=np.ones(7), names=names)
    assert np.abs(exact.values - beta).max() < 1e-8 * max(1, np.abs(beta).max())
    noisy = tau + np.random.default_rng(0).normal(scale=0.05, size=tau.shape)
    fit = estimate(W, noisy, 7, names=names)
    z = (fit.values - beta) / fit.std
    assert np.all(np.abs(z) < 5), names[int(np.argmax(np.abs(z)))]
    # a fresh trajectory's torques, predicted by the identified parameters
    X2, UD2 = _trajectory(2).samples(t)
    tau2 = np.array([dyn.inverse_dynamics(0.0, x, ud, p, np.zeros(7)) for x, ud in zip(X2, UD2)])
    predicted = (stack(mod, X2, UD2) @ fit.values).reshape(-1, 7)
    rms = np.sqrt(((predicted - tau2) ** 2).mean(axis=0))
    assert np.all(rms < 0.05), rms
