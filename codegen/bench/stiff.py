"""The stiff integrator against SciPy's and numbalsoda's, work against precision.

    python -m codegen.bench.stiff [--tols 1e-4 1e-6 1e-8]

Model: codegen.examples.spring_damper (modes at about -10 and -1e5 per
second), x(0) = 1, one second. For each rtol (atol = rtol / 100), each
solver's best time of 5 runs, its accepted steps and its error at t = 1
against a reference (Radau at rtol 1e-13): ours, ``simulate(method=
'rosenbrock')`` (the loop in C); ``solve_ivp`` with Radau, BDF and LSODA
calling the compiled ``rhs``; numbalsoda's LSODA calling ``rhs_address`` from
C (if numbalsoda is installed). Equal tolerances do not give equal errors
(ours is of order 2), so the errors are printed beside the times.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time

import numpy as np

from codegen import GibbsAppellMethod, generate
from codegen.examples import spring_damper

T = 1.0


def best(f, rounds=5):
    """Best time of f over rounds, and its last result."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def run(tols, rounds=5):
    from scipy.integrate import solve_ivp

    model = spring_damper()
    mod = generate(GibbsAppellMethod(**model.kwargs), "stiffbench", output_dir=tempfile.mkdtemp())
    p = np.array([model.parameter_values[c] for c in mod.constants])
    x0 = np.array(model.initial_state, dtype=float)
    ref = solve_ivp(mod.rhs, (0, T), x0, args=(p,), method="Radau", rtol=1e-13, atol=1e-15).y[:, -1]
    try:
        import numbalsoda
    except ImportError:
        numbalsoda = None
    rows = []
    for tol in tols:
        atol = tol * 1e-2
        row = {"tol": tol}

        def ours():
            res = mod.simulate((0, T), x0, p, method="rosenbrock", rtol=tol, atol=atol, t_eval=[T])
            assert res.success
            return res.x[-1], res.nsteps

        def scipy(method):
            def f():
                sol = solve_ivp(mod.rhs, (0, T), x0, args=(p,), method=method, rtol=tol, atol=atol)
                assert sol.success
                return sol.y[:, -1], len(sol.t) - 1
            return f

        solvers = [("ours", ours)] + [(m, scipy(m)) for m in ("Radau", "BDF", "LSODA")]
        if numbalsoda is not None:
            data = mod.callback_data(p)

            def nb():
                usol, ok = numbalsoda.lsoda(mod.rhs_address, x0.copy(), np.array([0.0, T]),
                                            data=data, rtol=tol, atol=atol)
                assert ok
                return usol[-1], None
            solvers.append(("numbalsoda LSODA", nb))
        for name, f in solvers:
            f()                                            # warm-up (numba compiles here)
            t, (x, steps) = best(f, rounds)
            row[name] = dict(time=t, steps=steps, error=float(abs(x[0] - ref[0]) / abs(ref[0])))
        rows.append(row)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tols", type=float, nargs="+", default=[1e-4, 1e-6, 1e-8])
    args = ap.parse_args(argv)
    rows = run(args.tols)
    names = [k for k in rows[0] if k != "tol"]
    print("Stiff spring-damper, 1 s: time [ms] (accepted steps; relative error of x(1))\n")
    print("| rtol | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for row in rows:
        cells = []
        for name in names:
            c = row[name]
            steps = f"{c['steps']}, " if c["steps"] is not None else ""
            r = c["time"] / row["ours"]["time"]
            ratio = "" if name == "ours" else f" {r:.0f}x" if r >= 10 else f" {r:.2g}x"
            cells.append(f"{c['time'] * 1e3:.3f}{ratio} ({steps}{c['error']:.1e})")
        print(f"| {row['tol']:g} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
