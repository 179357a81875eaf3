"""The in-C benchmark (codegen.bench.in_c): UR5's generated C against Pinocchio's C++ in
one program, built once per session.

The driver's own check is the oracle under test: it must find both sides equal at
random states (1e-9) and time them, and it must refuse to time any pair once our
input is perturbed. Pinocchio's side is compiled once per flags into the cache
(about two minutes of CPU the first time)."""
import math

import pytest

from codegen.bench import in_c
from codegen.robots import from_urdf
from codegen.robots.catalog import BENCHMARK_ROBOTS, example_robot_data

pytest.importorskip("pinocchio")

# the four algorithms, and cg_rhs and cg_inverse_dynamics again without their checks
KEYS = ("fd", "id", "mass", "jacobian", "fd_unchecked", "id_unchecked")


@pytest.fixture(scope="session")
def ur5_driver(tmp_path_factory):
    try:
        tc = in_c.toolchain()
    except in_c.Unavailable as exc:
        pytest.skip(f"the in-C benchmark cannot be built here: {exc}")
    root = example_robot_data()
    if root is None:
        pytest.skip("example-robot-data is not installed (pip install example-robot-data)")
    _, relative, floating, options = BENCHMARK_ROBOTS["ur5"]
    path = f"{root}/{relative}"
    model = from_urdf(path, floating_base=floating, **options)
    return in_c.build_driver(model, path, floating, options.get("mimic", True), "robot_ur5",
                             tmp_path_factory.mktemp("in_c"), tc=tc)


def test_agrees_with_pinocchio_and_times_each_pair(ur5_driver):
    out = in_c.run_driver(ur5_driver, calls=200, rounds=3)
    assert (out["nq"], out["nv"], out["samples"]) == (6, 6, in_c.SAMPLES)
    for key in KEYS:
        assert out["error"][key] <= 1e-9, key
        assert out["times"][key] > 0 and out["times"][key + "_pin"] > 0, key
    if "instructions" in out:                  # valgrind installed
        assert set(out["instructions"]) == {k + s for k in KEYS for s in ("", "_pin")}
        # both sides run real work: at least ~100 instructions per call
        assert min(out["instructions"].values()) > 100


def test_a_wrong_result_is_caught_and_not_timed(ur5_driver):
    out = in_c.run_driver(ur5_driver, calls=10, rounds=1, perturb=1e-6, callgrind=False)
    for key in KEYS:
        assert 1e-9 < out["error"][key] < math.inf, key
    assert out["times"] == {}


def test_a_missing_compiler_is_named(monkeypatch):
    monkeypatch.setenv("CXX", "no-such-c++-compiler")
    with pytest.raises(in_c.Unavailable, match="no-such-c\\+\\+-compiler"):
        in_c.toolchain()


def test_tangent_maps_the_quaternion_as_pinocchio_integrates():
    """T's columns are d(our q)/d(Pinocchio's tangent): finite differences of
    pin.integrate against them at a random free-flyer state."""
    import numpy as np
    pin = pytest.importorskip("pinocchio")
    model = pin.Model()
    model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")
    q = pin.randomConfiguration(model, -np.ones(7), np.ones(7))
    T = in_c.tangent(q, True, 7, 6)
    h = 1e-7
    for j in range(6):
        d = np.zeros(6)
        d[j] = h
        column = (pin.integrate(model, q, d) - pin.integrate(model, q, -d)) / (2 * h)
        assert np.allclose(T[:, j], column, atol=1e-7), j
