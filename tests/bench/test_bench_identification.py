"""The identification benchmark (codegen.bench.identification) on the iiwa, cheaply: its
regressor agrees with Pinocchio's before anything is timed, a regressor that differs is
refused with its difference, and the table shows the figures."""
import os

import numpy as np
import pytest

from codegen.bench import identification as bench
from robot_oracle import shared

pin = pytest.importorskip("pinocchio")


def test_iiwa_is_checked_then_timed(tmp_path):
    folder = os.path.dirname(shared("iiwa"))
    r = bench.measure("iiwa", folder, tmp_path, calls=20, rounds=1, samples=3)
    assert (r["parameters"], r["rank"], r["nv"]) == (70, 43, 7)
    assert r["agreement"] < 1e-12
    assert r["ours"] > 0 and r["ours_out"] > 0 and r["pin"] > 0 and r["batch"] > 0
    text = bench.table([r, {"robot": "ur5", "failed": "not measured: gone"}])
    assert "| iiwa | 70 / 43 |" in text and "| ur5 | not measured: gone |" in text


def test_a_different_regressor_is_not_timed(tmp_path):
    """A module whose Y is off by 1e-6 in one entry is a Mismatch that says by how much."""
    from codegen.identification import regressor
    from codegen.robots import from_urdf
    path = shared("iiwa")
    model = from_urdf(path, exact=True)
    mod = regressor(model).generate("bench_wrong", output_dir=tmp_path)

    class Off:
        def regressor(self, x, ud):
            Y = mod.regressor(x, ud)
            Y[3, 40] += 1e-6 * max(1.0, np.abs(Y).max())
            return Y
    pm = pin.buildModelFromUrdf(path)
    rng = np.random.default_rng(0)
    states = [(rng.uniform(-2, 2, 14), rng.uniform(-2, 2, 7))]
    assert bench.check_agreement(mod, model, pm, pm.createData(), states) < 1e-12
    with pytest.raises(bench.Mismatch, match="1.0e-06"):
        bench.check_agreement(Off(), model, pm, pm.createData(), states)


def test_in_c_checks_then_times_and_refuses_a_difference(tmp_path):
    """In C (the --in-c driver): the iiwa's exported regressor equals Pinocchio's C++ one
    and both are timed; with our coordinates perturbed the driver's own check refuses to
    time them. Pinocchio's side is compiled once into the cache (about a minute of CPU)."""
    from codegen.bench import in_c
    from codegen.identification import regressor
    from codegen.robots import from_urdf
    try:
        in_c.toolchain()
    except in_c.Unavailable as exc:
        pytest.skip(f"the in-C benchmark cannot be built here: {exc}")
    path = shared("iiwa")
    model = from_urdf(path, exact=True)
    reg = regressor(model)
    states = bench.draw(reg, False, 3)
    r = bench.in_c(reg, model, path, False, states, tmp_path / "good", calls=50, rounds=3)
    assert r["c_agreement"] < 1e-12 and r["c_ours"] > 0 and r["c_pin"] > 0
    wrong = bench.in_c(reg, model, path, False, states, tmp_path / "wrong", calls=50,
                       rounds=1, perturb=1e-6)
    assert wrong["c_agreement"] > 1e-9 and "c_ours" not in wrong
    text = bench.table([{**r, "robot": "iiwa", "parameters": 70, "rank": 43, "form": 1.0,
                         "exact": 1.0, "build": 1.0, "agreement": 0.0, "ours": 1e-6,
                         "ours_out": 1e-6, "pin": 3e-6, "batch": 1e-6},
                        {"robot": "ur5", "failed": "not measured: gone"}])
    assert "ratio in C" in text and "| ur5 | not measured: gone |" in text
