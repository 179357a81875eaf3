"""The worked example of docs/identification.md, run as the guide writes it: the iiwa
simulated with its URDF parameters under a tracking controller along an optimized
excitation, noise on τ, the base parameters identified, and the torques of a fresh
simulated trajectory predicted."""
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("scipy")

GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "identification.md"

#: appended to the guide's block: what the assertions read, saved by the script
SAVE = """
np.savez("results.npz", cond=cond, err=err, err2=err2, upper=upper, q=X[:, :7],
         qd=X[:, 7:], q2=X2[:, :7], tau=tau, beta=beta, exact=exact.values,
         values=fit.values, std=fit.std, sigma=fit.sigma, rms=rms, rmsf=rmsf,
         values_f=fitf.values, std_f=fitf.std, accel_gap=np.abs(UDf - UD)[20:-20].max())
"""


def _block() -> str:
    """The first Python block after the guide's "The worked example"."""
    text = GUIDE.read_text()
    start = text.index("**The worked example**")
    return re.search(r"^```python\n(.*?)^```", text[start:], re.S | re.M).group(1)


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    folder = tmp_path_factory.mktemp("iiwa_example")
    (folder / "example.py").write_text(_block() + SAVE)
    env = dict(os.environ, CODEGEN_CACHE=str(folder / "cache"))
    run = subprocess.run([sys.executable, "example.py"], cwd=folder, capture_output=True,
                         text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stderr[-4000:]
    return dict(np.load(folder / "results.npz"))


def test_the_robot_follows_the_excitation(example):
    r = example
    assert r["cond"] < 100
    # the simulated joints, not the reference, stay within the limits and near it
    assert np.all(np.abs(r["q"]) < r["upper"]) and np.all(np.abs(r["q2"]) < r["upper"])
    assert r["err"] < 1e-3 and r["err2"] < 1e-3
    assert np.abs(r["qd"]).max() < 1.05
    peak = np.array([320, 320, 176, 176, 110, 40, 40])    # KUKA's maximum torques, N m
    assert np.all(np.abs(r["tau"]).max(axis=0) < peak)


def test_the_base_parameters_are_identified(example):
    r = example
    beta = r["beta"]
    assert np.abs(r["exact"] - beta).max() < 1e-8 * max(1, np.abs(beta).max())
    assert np.allclose(r["sigma"], 0.05, rtol=0.1)
    z = (r["values"] - beta) / r["std"]
    assert np.abs(z).max() < 4, z


def test_a_fresh_trajectory_is_predicted(example):
    r = example
    assert r["rms"].max() < 0.01, r["rms"]
    # from differentiated speeds: u' averaged over the held torques' jumps
    assert r["accel_gap"] < 0.5
    assert r["rmsf"].max() < 0.02, r["rmsf"]
