"""Derivation time of M and F: GibbsAppellMethod against SymPy's KanesMethod.

    python -m codegen.bench.derivation [--n 5 10 20] [--repeat 3]

Model: the n-link pendulum on a cart (codegen.examples.n_pendulum_on_cart).
Each measurement runs in a fresh interpreter so neither tool profits from
SymPy's cache warmed by the other; the model is built outside the timed
region. Before timing, both tools' accelerations are compared at a random
state (relative 1e-10), so the two timings are of equal work.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

_CHILD = r"""
import json, sys, time
import numpy as np, sympy as sm, sympy.physics.mechanics as me
from codegen import GibbsAppellMethod
from codegen.examples import n_pendulum_on_cart
tool, n = sys.argv[1], int(sys.argv[2])
model = n_pendulum_on_cart(n)
t0 = time.perf_counter()
if tool == 'kane':
    km = me.KanesMethod(**model.kwargs)
    km.kanes_equations(model.bodies, model.loads)
    M, F = km.mass_matrix, km.forcing
else:
    ga = GibbsAppellMethod(**model.kwargs)
    M, F = ga.mass_matrix, ga.forcing
elapsed = time.perf_counter() - t0
rng = np.random.default_rng(0)
syms = sorted(model.constants, key=str) + model.q_ind + model.u_ind + model.specifieds
vals = {s: float(rng.uniform(0.5, 1.5)) for s in syms}
acc = np.linalg.solve(np.array(M.xreplace(vals).evalf(), dtype=float),
                      np.array(F.xreplace(vals).evalf(), dtype=float).ravel())
print(json.dumps({'seconds': elapsed, 'acc': acc.tolist(), 'ops': int(sm.count_ops(list(M) + list(F)))}))
"""


def measure(tool: str, n: int) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, tool, str(n)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[5, 10, 20])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    import numpy as np
    print("| n | KanesMethod [s] | GibbsAppellMethod [s] | speed-up | ops Kane | ops GA |")
    print("|---|---|---|---|---|---|")
    for n in args.n:
        runs = {tool: [measure(tool, n) for _ in range(args.repeat)] for tool in ("kane", "ga")}
        a, b = np.array(runs["kane"][0]["acc"]), np.array(runs["ga"][0]["acc"])
        if not np.allclose(a, b, rtol=1e-10, atol=1e-12 * abs(a).max()):
            print(f"| {n} | accelerations disagree: {a} vs {b} |")
            continue
        tk = statistics.median(r["seconds"] for r in runs["kane"])
        tg = statistics.median(r["seconds"] for r in runs["ga"])
        print(f"| {n} | {tk:.2f} | {tg:.2f} | {tk / tg:.1f}x | "
              f"{runs['kane'][0]['ops']} | {runs['ga'][0]['ops']} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
