"""Sweeps on real Dask clusters on 127.0.0.1: a LocalCluster of worker processes, and a
scheduler and workers started as separate processes with the `dask` command. Every
result is compared with the same runs made alone, in this process."""
import contextlib
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from codegen import GibbsAppellMethod, generate, sweep
from codegen import examples as ex
from codegen.runtime.sweep import REDUCE_FAILED, restore_environ

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def pendulum(tmp_path_factory):
    model = ex.n_pendulum_on_cart(2)
    mod = generate(GibbsAppellMethod(**model.kwargs), "sweep_p2",
                   output_dir=tmp_path_factory.mktemp("client_side"))
    return model, mod, mod.parameters(model.parameter_values)


@pytest.fixture(scope="module")
def worker_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("worker_cache")


@contextlib.contextmanager
def local_cluster(worker_cache):
    """Two worker processes whose model cache is not the client's. Dask's nannies set
    OMP_NUM_THREADS and PYTHONHASHSEED in this process's environment: restored after."""
    environ = dict(os.environ)
    lc = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  env={"OMP_NUM_THREADS": "1",
                                       "CODEGEN_CACHE": str(worker_cache)})
    client = distributed.Client(lc)
    try:
        yield client
    finally:
        client.close()
        lc.close()
        restore_environ(environ)


@pytest.fixture(scope="module")
def cluster(worker_cache):
    with local_cluster(worker_cache) as client:
        yield client


def _table(model, p, n, seed=0):
    rng = np.random.default_rng(seed)
    X0 = np.tile(np.array(model.initial_state, dtype=float), (n, 1))
    X0[:, :3] += rng.uniform(-0.2, 0.2, (n, 3))
    P = np.tile(p, (n, 1))
    P[:, 0] *= rng.uniform(0.8, 1.2, n)
    return X0, P


def test_sweep_equals_the_runs_made_alone(pendulum, cluster, worker_cache):
    model, mod, p = pendulum
    X0, P = _table(model, p, 37)
    kw = dict(method="dopri5", rtol=1e-9, atol=1e-9, t_eval=np.linspace(0, 1, 11))
    t, alone, status = mod.simulate_batch((0, 1), X0, P, [0.1], **kw)
    res = sweep(mod, (0, 1), X0, P, [0.1], client=cluster, chunk_size=5, **kw)
    environ = dict(os.environ)
    own = sweep(mod, (0, 1), X0[:4], P[:4], [0.1], **kw)     # a LocalCluster of its own
    assert dict(os.environ) == environ and np.array_equal(own.values, alone[:4])
    assert res.success and np.array_equal(res.t, t) and np.array_equal(res.values, alone)
    assert list(worker_cache.glob("*/sweep_p2/manifest.json"))   # built on the workers' side
    for name, f in [("final", lambda x: x[:, -1]), ("max", lambda x: x.max(axis=1)),
                    ("mean", lambda x: x.mean(axis=1))]:
        reduced = mod.sweep((0, 1), X0, P, [0.1], client=cluster, reduce=name, **kw)
        assert np.array_equal(reduced.values, f(alone)), name
    energy = sweep(mod, (0, 1), X0, P, [0.1], client=cluster,
                   reduce=lambda t, x: float(np.abs(x[:, 3:]).sum()), **kw)
    assert energy.values == [float(np.abs(a[:, 3:]).sum()) for a in alone]


def test_failures_are_statuses_not_errors(pendulum, cluster):
    """A run whose dynamics fail and a reduction that raises are reported per run."""
    model, mod, p = pendulum
    X0, P = _table(model, p, 12)
    masses = [j for j, c in enumerate(mod.constants) if c.startswith("m")]
    P[4, masses] = 0.0                                   # no mass at all: M singular

    def picky(t, x):
        if x[0, 0] > X0[:, 0].mean():
            raise RuntimeError("too far right")
        return x[-1, 0]
    res = sweep(mod, (0, 1), X0, P, [0.0], client=cluster, reduce=picky, chunk_size=3,
                method="rk4", dt=1e-3)
    fails = res.failures()
    assert res.status[4] not in (0, REDUCE_FAILED) and "mass matrix" in res.messages[4]
    picked = [i for i in range(12) if i != 4 and X0[i, 0] > X0[:, 0].mean()]
    assert picked and all(res.status[i] == REDUCE_FAILED and f"run {i}:" in fails[i]
                          and "too far right" in fails[i] for i in picked)
    assert set(fails) == set(picked) | {4}
    assert all(res.values[i] is not None for i in range(12) if i not in fails)


def test_bad_input_is_refused_before_sending(pendulum):
    model, mod, p = pendulum
    X0, P = _table(model, p, 4)
    k = len(mod.constants)
    with pytest.raises(ValueError, match=rf"P must have {k} columns .*got shape \(4, {k - 1}\)"):
        sweep(mod, (0, 1), X0, P[:, :-1], [0.0], client="tcp://127.0.0.1:1")
    P[2, 3] = np.nan
    with pytest.raises(ValueError, match=rf"P row 2, column 3 \({mod.constants[3]}\) is not finite"):
        sweep(mod, (0, 1), X0, P, [0.0], client="tcp://127.0.0.1:1")
    with pytest.raises(ValueError, match="different numbers of rows"):
        sweep(mod, (0, 1), X0[:3], p, np.zeros((4, 1)), client="tcp://127.0.0.1:1")
    with pytest.raises(ValueError, match="t_span"):
        sweep(mod, (1, 0), X0, p, [0.0], client="tcp://127.0.0.1:1")
    with pytest.raises(ConnectionError, match=r"tcp://127\.0\.0\.1:1"):
        sweep(mod, (0, 1), X0, p, [0.0], client="tcp://127.0.0.1:1", timeout=2)


def test_the_model_pickles_as_sources(pendulum, tmp_path, monkeypatch):
    """Unpickled in a process with another cache: built there from the sources, then
    loaded from that cache; the shared library never travels."""
    from codegen.pipeline import cache
    _, mod, p = pendulum
    payload = pickle.dumps(mod)
    assert mod.manifest["extension"].encode() not in payload or b"\x7fELF" not in payload
    monkeypatch.setenv("CODEGEN_CACHE", str(tmp_path))
    monkeypatch.setattr(cache, "_FROM_PAYLOAD", {})
    other = pickle.loads(payload)
    assert other.source_dir != mod.source_dir and str(tmp_path) in str(other.source_dir)
    x = np.linspace(-0.5, 0.5, mod.nx)
    assert np.array_equal(other.rhs(0.0, x, p, [0.2]), mod.rhs(0.0, x, p, [0.2]))
    monkeypatch.setattr(cache, "_FROM_PAYLOAD", {})
    assert pickle.loads(payload).source_dir == other.source_dir      # the cache, not a rebuild


def test_a_worker_killed_mid_sweep_loses_no_run(pendulum, cluster):
    model, mod, p = pendulum
    X0, P = _table(model, p, 64, seed=3)
    kw = dict(method="rk4", dt=4e-6, t_eval=np.linspace(0, 2, 5))     # ~0.1 s a run
    out = {}
    runner = threading.Thread(target=lambda: out.setdefault(
        "res", sweep(mod, (0, 2), X0, P, [0.0], client=cluster, chunk_size=2, **kw)))
    runner.start()
    time.sleep(1.5)
    assert runner.is_alive()                             # mid-sweep
    pids = cluster.run(os.getpid)
    os.kill(next(iter(pids.values())), signal.SIGKILL)
    runner.join(timeout=240)
    assert not runner.is_alive()
    _, alone, _ = mod.simulate_batch((0, 2), X0, P, [0.0], **kw)
    assert out["res"].success and np.array_equal(out["res"].values, alone)
    cluster.wait_for_workers(2, timeout=60)              # the nanny restarted it


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_cluster_started_with_the_dask_command(pendulum, tmp_path):
    """`dask scheduler` and two `dask worker` processes on 127.0.0.1, as a real cluster
    is started; the client passes the scheduler's address."""
    model, mod, p = pendulum
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    env = dict(os.environ, OMP_NUM_THREADS="1", CODEGEN_CACHE=str(tmp_path / "cache"))
    procs = [subprocess.Popen(dask + ["--host", "127.0.0.1", "--port", str(port),
                                      "--dashboard-address", ":0"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        for i in range(2):
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", address,
                 "--nthreads", "1", "--host", "127.0.0.1", "--dashboard-address", ":0",
                 "--local-directory", str(tmp_path / f"w{i}")],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        client = None
        deadline = time.monotonic() + 60
        while client is None:
            try:
                client = distributed.Client(address, timeout=5)
            except OSError:
                if time.monotonic() > deadline:
                    raise
        try:
            client.wait_for_workers(2, timeout=60)
            X0, P = _table(model, p, 9)
            res = sweep(mod, (0, 1), X0, P, [0.0], client=address, reduce="final",
                        method="rk4", dt=1e-3)
        finally:
            client.close()
        _, alone, _ = mod.simulate_batch((0, 1), X0, P, [0.0], method="rk4", dt=1e-3)
        assert res.success and np.array_equal(res.values, alone[:, -1])
        assert list((tmp_path / "cache").glob("*/sweep_p2/manifest.json"))
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_sweep_with_feedback_outputs_and_events(tmp_path):
    """A Monte Carlo of an LQR controller on the pendulum on a cart: K and x_ref sent
    with the runs, each run's outputs (reduced on the worker) and events returned, equal
    to simulate_batch's in this process. A cluster of its own: the module's had a worker
    killed and restarted, after which a sweep on it once waited for minutes."""
    with local_cluster(tmp_path / "worker_cache") as cluster:
        _feedback_outputs_and_events(cluster, tmp_path)


def _feedback_outputs_and_events(cluster, tmp_path):
    from scipy.linalg import solve_continuous_are
    model = ex.n_pendulum_on_cart(1)
    ga = GibbsAppellMethod(**model.kwargs)
    q1 = ga.q[1]
    mod = generate(ga, "sweep_lqr", output_dir=tmp_path, outputs={"T": "kinetic_energy"},
                   events={"upright": q1 - np.pi / 2})
    p = mod.parameters(model.parameter_values)
    up = np.array([0.0, np.pi / 2, 0.0, 0.0])
    A, B = mod.linearize(up, p, [0.0])
    K = B.T @ solve_continuous_are(A, B, np.eye(4), np.eye(1))
    X0 = up + np.random.default_rng(3).uniform(-0.2, 0.2, (6, 4))
    options = dict(controller=K, x_ref=up, rtol=1e-10, atol=1e-10)
    result = sweep(mod, (0, 3), X0, p, client=cluster, chunk_size=2, reduce="max", **options)
    batch = mod.simulate_batch((0, 3), X0, p, **options)
    assert result.success
    assert np.array_equal(result.outputs["T"], batch.outputs["T"].max(axis=1))
    assert [[e[1] for e in run] for run in result.events] == \
        [[e[1] for e in run] for run in batch.events]
    full = sweep(mod, (0, 3), X0, p, client=cluster, chunk_size=4,
                 reduce=lambda t, x, outputs: outputs["T"][-1], **options)
    assert np.allclose(full.values, batch.outputs["T"][:, -1], rtol=0, atol=0)


def test_sweep_of_a_flexible_body(cluster):
    """The spin-up beam (a FlexibleBody) swept over its final spin rate on the cluster,
    with its tip-deflection output reduced to the peak: equal to simulate_batch here,
    and, stiffened, the peak grows with the rate and stays under a quarter of the
    10 m beam (the linear modal model's diverges above 3.8 rad/s)."""
    model = ex.spin_up_beam(2, duration=5.0)
    mod = generate(GibbsAppellMethod(**model.kwargs), "sweep_spin_up",
                   outputs=model.outputs)
    p = mod.parameters(model.parameter_values)
    P = np.tile(p, (6, 1))
    P[:, mod.constants.index("Omega")] = np.linspace(1.0, 6.0, 6)
    X0 = np.zeros((6, mod.nx))
    kw = dict(method="bdf", rtol=1e-8, atol=1e-10, t_eval=np.linspace(0, 8, 81))
    result = sweep(mod, (0, 8), X0, P, client=cluster, chunk_size=2, reduce="max", **kw)
    batch = mod.simulate_batch((0, 8), X0, P, **kw)
    assert result.success and not np.any(batch.status)
    peak = np.abs(batch.outputs["tip_deflection"]).max(axis=1)
    assert np.array_equal(result.outputs["tip_deflection"],
                          batch.outputs["tip_deflection"].max(axis=1))
    assert np.all(np.diff(peak) > 0) and 1e-3 < peak[-1] < 2.5, peak


def test_sweep_covers_the_whole_span(hybrid, cluster, tmp_path):
    """As solve_ivp's and simulate_batch's: t_eval=[0.0] only picks the output time, each
    run goes on to t_span[1] and its events come back; a run whose event turns
    non-finite has a message that names the event."""
    import sympy as sm
    b = hybrid("ball")
    mod, p = b["mod"], b["p"]
    X0 = [[1.0, 0.0], [2.0, 0.0]]
    kw = dict(t_eval=[0.0], rtol=1e-12, atol=1e-12)
    result = sweep(mod, (0, 4), X0, p, client=cluster, **kw)
    batch = mod.simulate_batch((0, 4), X0, p, **kw)
    assert result.success and result.values.shape == (2, 1, 2)
    assert all(len(run) > 6 for run in result.events)
    assert [[e[1] for e in run] for run in result.events] == \
        [[e[1] for e in run] for run in batch.events]
    pd = hybrid("pendulum")
    q = pd["symbols"][0]
    rooted = generate(pd["ga"], "sweep_rooted", output_dir=tmp_path,
                      events={"gap": sm.sqrt(q - 0.2)})
    failed = sweep(rooted, (0, 3), [[1.2, 0.0], [0.5, 0.0]], pd["p"], client=cluster, t_eval=[0.0])
    assert failed.status.tolist() == [3, 3]
    assert all(m.startswith("event 'gap' is not finite") for m in failed.messages)


def test_a_cluster_without_workers_meets_the_deadline(pendulum):
    """A scheduler with no worker never starts a chunk: the sweep stops at its deadline
    with TimeoutError naming the unfinished rows, instead of waiting forever; a bad
    deadline is refused before anything is sent."""
    model, mod, p = pendulum
    X0, P = _table(model, p, 6)
    lc = distributed.LocalCluster(n_workers=0, processes=True, host="127.0.0.1",
                                  dashboard_address=None)
    try:
        with distributed.Client(lc) as client:
            start = time.monotonic()
            with pytest.raises(TimeoutError, match=r"3 of 3 chunks \(rows 0-1, 2-3, 4-5\).*"
                                                   r"deadline of 1.5 s.*0 workers"):
                sweep(mod, (0, 1), X0, P, [0.0], client=client, chunk_size=2, deadline=1.5)
            assert time.monotonic() - start < 60
            with pytest.raises(ValueError, match="deadline"):
                sweep(mod, (0, 1), X0, P, [0.0], client=client, deadline=-1)
    finally:
        lc.close()
