"""Sweeps on Dask against simulate_batch on the same cores: runs per second.

    python -m codegen.bench.sweep [--runs 10000] [--n 4]

The pendulum on a cart (codegen.examples.n_pendulum_on_cart(n)), N runs of
1 s by RK4 at dt = 1 ms from perturbed initial states, each reduced to its
final state:

- simulate_batch: one call, OpenMP over every core of this machine (best of 3);
- sweep on a LocalCluster on 127.0.0.1 with 1 and with 2 single-threaded
  worker processes (OMP_NUM_THREADS=1), the cluster started before timing
  (its start-up is reported apart); the default chunk size; best of 2;
- the per-chunk cost of the Dask round trip, from a sweep of 1-run chunks of
  a run that takes microseconds.

From these, the throughput of a cluster of many such machines is estimated
on paper: each node runs at the measured per-machine rate, and the
scheduler's per-chunk cost bounds how many chunks it can hand out.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np


def _setup(n):
    from codegen import GibbsAppellMethod, generate
    from codegen.examples import n_pendulum_on_cart
    model = n_pendulum_on_cart(n)
    mod = generate(GibbsAppellMethod(**model.kwargs), f"sweep_bench{n}",
                   output_dir=tempfile.mkdtemp())
    return model, mod, mod.parameters(model.parameter_values)


def measure(runs: int, n: int, workers=(1, 2)) -> dict:
    from distributed import Client, LocalCluster

    from codegen import sweep
    model, mod, p = _setup(n)
    rng = np.random.default_rng(0)
    X0 = np.tile(np.array(model.initial_state, dtype=float), (runs, 1))
    X0[:, 1:n + 1] += rng.uniform(-0.2, 0.2, (runs, n))
    kw = dict(method="rk4", dt=1e-3)
    res = {"runs": runs, "cores": os.cpu_count()}
    best = np.inf
    for _ in range(3):                 # the first call also starts OpenMP's threads
        t0 = time.perf_counter()
        _, X, status = mod.simulate_batch((0, 1), X0, p, [0.0], **kw)
        best = min(best, time.perf_counter() - t0)
    res["batch"] = runs / best
    reference = X[:, -1]
    for w in workers:
        t0 = time.perf_counter()
        cluster = LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None,
                               env={"OMP_NUM_THREADS": "1"})
        client = Client(cluster)
        res[f"startup{w}"] = time.perf_counter() - t0
        try:
            sweep(mod, (0, 1), X0[:4 * w], p, [0.0], client=client, reduce="final", **kw)
            best = np.inf
            for _ in range(2):
                t0 = time.perf_counter()
                out = sweep(mod, (0, 1), X0, p, [0.0], client=client, reduce="final", **kw)
                best = min(best, time.perf_counter() - t0)
            res[f"sweep{w}"] = runs / best
            assert out.success and np.array_equal(out.values, reference)
            if w == max(workers):
                chunks = 400
                t0 = time.perf_counter()
                sweep(mod, (0, 1e-3), X0[:chunks], p, [0.0], client=client, chunk_size=1,
                      reduce="final", **kw)
                res["chunk_cost"] = (time.perf_counter() - t0) / chunks * w
        finally:
            client.close()
            cluster.close()
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--n", type=int, default=4)
    args = ap.parse_args(argv)
    r = measure(args.runs, args.n)
    print(f"{r['runs']} RK4 runs of the n = {args.n} pendulum on a cart (1 s, dt = 1 ms), "
          f"final state only, on {r['cores']} cores [runs/s]\n")
    print("| tool | runs/s | share of simulate_batch | cluster start-up [s] |")
    print("|---|---|---|---|")
    print(f"| simulate_batch (OpenMP, {r['cores']} threads) | {r['batch']:.0f} | 100 % | - |")
    for w in (1, 2):
        print(f"| sweep, LocalCluster, {w} worker{'s' if w > 1 else ''} | {r[f'sweep{w}']:.0f} | "
              f"{100 * r[f'sweep{w}'] / r['batch']:.0f} % | {r[f'startup{w}']:.1f} |")
    per_core = r["sweep2"] / 2
    print(f"\nPer-chunk cost of the Dask round trip: {r['chunk_cost'] * 1e3:.2f} ms of a worker's "
          f"time (1-run chunks).")
    print("On paper, 100 nodes of 32 cores each, one worker per core: "
          f"{100 * 32 * per_core:,.0f} runs/s at this machine's per-core rate "
          f"({per_core:.0f} runs/s), if the scheduler hands out chunks of at least "
          f"{max(1, int(np.ceil(100 * 32 * per_core * 1e-3)))} runs "
          "(a scheduler manages on the order of 1,000 tasks/s).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
