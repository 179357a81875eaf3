"""The identification benchmark (codegen.bench.identification) on the iiwa, cheaply: its
regressor agrees with Pinocchio's before anything is timed, a regressor that differs is
refused with its difference, and the table shows the figures."""
import os
from pathlib import Path

import numpy as np
import pytest

from codegen.bench import identification as bench
from robot_oracle import shared

pin = pytest.importorskip("pinocchio")


def test_iiwa_is_checked_then_timed(tmp_path):
    folder = os.path.dirname(shared("iiwa"))
    r = bench.measure("iiwa", folder, tmp_path, calls=20, rounds=1, samples=3)
    assert (r["parameters"], r["rank"], r["nv"]) == (70, 43, 7)
    assert r["agreement"] < 1e-12 and r["as_written"] < 1e-12
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


_TWO_LINKS = """<robot name="quarter">
  <link name="base"/>
  <link name="a">
    <inertial><origin xyz="0.1 0.02 0.0" rpy="0 1.5707963705062866 0"/><mass value="1.5"/>
      <inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0.001" iyz="0.0" ixz="0.002"/></inertial>
  </link>
  <link name="b">
    <inertial><origin xyz="0.2 0.0 0.03"/><mass value="0.8"/>
      <inertia ixx="0.01" iyy="0.02" izz="0.015" ixy="0.0" iyz="0.001" ixz="0.0"/></inertial>
  </link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
    <origin xyz="0 0 0.3" rpy="1.5707963705062866 -0.0 0.0"/><axis xyz="0 0 1"/>
    <limit effort="1" velocity="1" lower="-3" upper="3"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="0.4 0 0" rpy="-2.3561944901923457 -1.5707962635746238 -2.3561944901923457"/>
    <axis xyz="0 0 1"/><limit effort="1" velocity="1" lower="-3" upper="3"/></joint>
</robot>
"""


def test_quarter_turns_are_mapped_for_pinocchio(tmp_path):
    """The documented mapping: Atlas-like rpy (float32's π/2, a gimbal lock's roll and yaw)
    that exact=True snaps to quarter turns are written as the quarter turns' floats, so
    that Pinocchio loads the rotations exact=True builds; our exact Y then equals
    Pinocchio's to 1e-10, while on the file as written they differ by the snapping."""
    from codegen.identification import regressor
    from codegen.robots import from_urdf
    from codegen.robots.rotations import exact_rpy_matrix, quarter_turn_rpy
    for rpy in [(1.5707963705062866, -0.0, 0.0), (0.3, 1.5707963705, -3.14159265),
                (-2.3561944901923457, -1.5707962635746238, -2.3561944901923457),
                (3.141592653589793, 1.570796282091413, 3.141592653589793), (0.3, 0.2, 0.1)]:
        assert exact_rpy_matrix(quarter_turn_rpy(rpy)) == exact_rpy_matrix(rpy)
    assert quarter_turn_rpy((0.3, 0.2, 0.1)) == (0.3, 0.2, 0.1)
    path = tmp_path / "quarter.urdf"
    path.write_text(_TWO_LINKS)
    mapped, changed = bench.pinocchio_urdf(path, tmp_path)
    assert changed == 3 and mapped != str(path)
    assert 'rpy="1.5707963267948966 0.0 0.0"' in Path(mapped).read_text()
    assert bench.pinocchio_urdf(mapped, tmp_path / "again") == (mapped, 0)
    pm, pw = pin.buildModelFromUrdf(mapped), pin.buildModelFromUrdf(str(path))
    for k in (1, 2):
        exact = np.array(exact_rpy_matrix(quarter_turn_rpy(
            [(1.5707963705062866, 0, 0), (-2.3561944901923457, -1.5707962635746238,
                                          -2.3561944901923457)][k - 1])), dtype=float)
        assert np.abs(pm.jointPlacements[k].rotation - exact).max() < 1e-15
        assert np.abs(pw.jointPlacements[k].rotation - exact).max() > 1e-8
    model = from_urdf(path, exact=True)
    reg = regressor(model)
    mod = reg.generate("bench_quarter", output_dir=tmp_path)
    states = bench.draw(reg, False, 4)
    assert bench.check_agreement(mod, model, pm, pm.createData(), states) <= 1e-10
    assert bench.difference(mod, model, pw, pw.createData(), states) > 1e-9
    with pytest.raises(bench.Mismatch):
        bench.check_agreement(mod, model, pw, pw.createData(), states)
    from codegen.bench import in_c
    try:
        in_c.toolchain()
    except in_c.Unavailable:
        return
    # the C driver, on the mapped copy, to the same tolerance
    r = bench.in_c(reg, model, mapped, False, states, tmp_path / "c", calls=20, rounds=1)
    assert r["c_agreement"] <= 1e-10 and r["c_ours"] > 0
    r = bench.in_c(reg, model, str(path), False, states, tmp_path / "w", calls=20, rounds=1)
    assert r["c_agreement"] > 1e-9 and "c_ours" not in r
