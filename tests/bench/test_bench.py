"""The benchmark suite's quick mode runs end to end against the installed peers."""
import json
import subprocess
import sys


def test_quick_benchmark(tmp_path):
    out = subprocess.run([sys.executable, "-m", "codegen.bench", "--quick", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    data = json.loads((tmp_path / "results.json").read_text())
    results = data["results"]
    assert set(results) == {"pendulum:1", "pendulum:2", "rolling_disk"}
    for spec, tools in results.items():
        assert tools["ours"]["call"] > 0 and tools["ours"]["ops"] > 0
        peers = ["lambdify", "symengine"] + (["pinocchio", "mujoco"] if spec.startswith("pendulum") else [])
        for peer in peers:
            assert "call" in tools[peer], (spec, peer, tools[peer])          # installed and agreeing
            assert tools[peer]["max_difference"] <= 1e-8 * 100
    assert (tmp_path / "results.md").read_text().count("| codegen |") == 3
    assert (tmp_path / "results.png").stat().st_size > 10_000


def test_simulation_benchmark_agrees_with_its_peers():
    """The simulation benchmark's own checks: MuJoCo's RK4 rollout of the same
    model matches ours over 50 steps, solve_ivp matches our DOPRI5 at 1 s."""
    from codegen.bench.simulate import run
    row = run(2, steps=200, adaptive_rounds=1)
    assert row["agree"], row["mj_diff"]
    assert row["agree_ivp"]
    assert row["dp_steps"] > 0 and row["ivp_steps"] > 0
    assert row["ours"] > 0 and row["mujoco"] > 0 and row["best_ivp_ratio"] > 0


def test_batch_benchmark_agrees_with_its_peers():
    """The batch benchmark's checks at a small size: MuJoCo's batched rollout
    matches simulate_batch after 50 steps; lambdify on arrays and a loop over
    rhs match rhs_batch."""
    from codegen.bench.batch import rhs_batch, rk4_batch
    a = rk4_batch(2, runs=6, steps=60, rounds=1)
    assert a["agree"], a["diff"]
    assert a["ours"] > 0 and a["mujoco"] > 0 and a["ours1"] > 0 and a["mujoco1"] > 0
    b = rhs_batch(2, states=300, rounds=1)
    assert b["agree"] == {"lambdify": True, "loop": True}


def test_stiff_benchmark_runs_every_solver():
    """The stiff benchmark at one tolerance on the spring and a small stiff
    pendulum: every solver succeeds (each asserts it) and lands near the
    reference; ours within 100 rtol of it."""
    from codegen.bench.stiff import OURS, run
    rows = run([1e-6], models=("spring", "2"), rounds=1)
    for row in rows:
        assert set(OURS) | {"Radau", "BDF", "LSODA"} <= set(row)
        for name in set(row) - {"tol", "model"}:
            assert row[name]["error"] < 1e-3, (row["model"], name, row[name])
        for name in OURS:
            assert row[name]["error"] < 1e-4, (row["model"], name, row[name])


def test_spatial_trees_equal_pinocchio_before_they_are_timed():
    """The 3-D chain and the humanoid built for Pinocchio (three revolute joints per
    3-speed joint, the torques as joint torques) have our accelerations to 1e-8, or the
    benchmark reports them untimed."""
    pytest = __import__("pytest")
    pytest.importorskip("pinocchio")
    from codegen.bench.spatial import measure
    for spec in ("chain:1", "chain:2", "humanoid"):
        r = measure(spec, cap=300)
        assert isinstance(r["pinocchio"], float), r
        assert r["ours"] > 0 and r["generate"] > 0
