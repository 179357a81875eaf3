"""Two versions of this project side by side: the figures a redesign must keep.

    python -m codegen.bench.commits OLD_CHECKOUT NEW_CHECKOUT [--rounds 3]

Each checkout is a source tree with its runtime built in place
(``python setup.py build_ext --inplace``). Every round runs one fresh
interpreter per checkout in turn, with that checkout first on ``sys.path`` and
a cache of its own, so a slow spell of the machine falls on both alike; the
least time over the rounds is kept. Only the public API that both versions
share is used. Measured per checkout:

- compile latency: formulate + generate + compile of the 4-link pendulum on a
  cart into an empty cache (wall time);
- RHS per call from Python (``rhs`` with ``out=``, median of 7 repeats of a
  timeit loop) for the pendulum with n = 4 and 12, the rolling disk and the
  Whipple bicycle;
- the analytic Jacobian per call (``jacobian`` with ``out=``), pendulum n = 4, 12;
- integrator step counts (accepted steps, RHS calls) of ``simulate`` over 10 s of
  the 4-link pendulum with dopri5 and bdf at rtol = atol = 1e-8.

The new checkout's accelerations and Jacobians must equal the old one's
(relative 1e-10) before the times count. Prints a Markdown table.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap

_CHILD = textwrap.dedent(r"""
import json, sys, tempfile, time, timeit
import numpy as np
from codegen import GibbsAppellMethod, generate
from codegen import examples as ex

def per_call(f, number=2000):
    f()
    return float(np.median(timeit.repeat(f, number=number, repeat=7))) / number

def build(model, name, out):
    ga = GibbsAppellMethod(**model.kwargs)
    ga.kanes_equations(model.bodies, model.loads)
    return generate(ga, name, output_dir=out)

out, res = tempfile.mkdtemp(), {}
t0 = time.perf_counter()
build(ex.n_pendulum_on_cart(4), "latency4", out)
res["compile latency, pendulum n = 4 (s)"] = time.perf_counter() - t0
for label, model in [("pendulum n = 4", ex.n_pendulum_on_cart(4)),
                     ("pendulum n = 12", ex.n_pendulum_on_cart(12)),
                     ("rolling disk", ex.rolling_disk()),
                     ("Whipple bicycle", ex.whipple_bicycle())]:
    mod = build(model, label.replace(" ", "_").replace("=", "").replace("__", "_"), out)
    x = np.array(model.initial_state, float)
    p = np.array([model.parameter_values[c] for c in mod.constants], float)
    r = np.zeros(len(mod.specifieds))
    xd = np.empty(len(x))
    mod.rhs(0.0, x, p, r, out=xd)
    res[f"RHS per call, {label} (us)"] = 1e6 * per_call(lambda: mod.rhs(0.0, x, p, r, out=xd))
    res[f"check {label} xdot"] = xd.tolist()
    if label.startswith("pendulum"):
        J = np.empty((len(x), len(x)))
        mod.jacobian(0.0, x, p, r, out=J)
        res[f"Jacobian per call, {label} (us)"] = 1e6 * per_call(lambda: mod.jacobian(0.0, x, p, r, out=J))
        res[f"check {label} J"] = J.ravel().tolist()
    if label == "pendulum n = 4":
        for method in ("dopri5", "bdf"):
            run = mod.simulate((0.0, 10.0), x, p, r, method=method, rtol=1e-8, atol=1e-8)
            res[f"steps, {method}, pendulum n = 4"] = run.nsteps
            res[f"RHS calls, {method}, pendulum n = 4"] = run.nfev
print(json.dumps(res))
""")


def measure(checkout: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(checkout),
               CODEGEN_CACHE=tempfile.mkdtemp(prefix="commits-"))
    done = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                          text=True, check=False, cwd=tempfile.gettempdir())
    if done.returncode:
        raise RuntimeError(f"{checkout}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    best = {args.old: {}, args.new: {}}
    for _ in range(args.rounds):
        for checkout in (args.old, args.new):
            for key, value in measure(checkout).items():
                kept = best[checkout].get(key)
                best[checkout][key] = value if kept is None or key.startswith(("check", "steps", "RHS calls")) \
                    else min(kept, value)
    old, new = best[args.old], best[args.new]
    for key in [k for k in old if k.startswith("check")]:
        a, b = old[key], new[key]
        scale = max(1.0, max(abs(v) for v in a))
        diff = max(abs(u - v) for u, v in zip(a, b))
        if diff > 1e-10 * scale:
            sys.exit(f"{key[6:]}: the checkouts differ by {diff:.2e}; times not reported")
    print(f"| figure | {args.old} | {args.new} | new / old |\n|---|---|---|---|")
    for key in [k for k in old if not k.startswith("check")]:
        a, b = old[key], new[key]
        print(f"| {key} | {a:.4g} | {b:.4g} | {b / a:.2f} |")


if __name__ == "__main__":
    main()
