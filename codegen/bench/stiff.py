"""The stiff integrators against SciPy's and numbalsoda's, work against precision.

    python -m codegen.bench.stiff [--models spring 4 8] [--tols 1e-4 1e-6 1e-8]

Models: ``spring``, codegen.examples.spring_damper (2 states, modes at about
-10 and -1e5 per second), x(0) = 1; an integer n, codegen.examples.
stiff_pendulum(n) (2n + 2 states, the pendulum on a cart with stiff joint
springs and dampers: modes down to about -2e5 per second), from its
initial state, F = 0. One second each. For each rtol (atol = rtol / 100 for
the spring, = rtol for the pendulum), each solver's best time of 15 runs
(5 rounds, each running every solver 3 times in a row, so that a slow spell
of the machine falls on all alike), its accepted steps and its error at t = 1
(max norm, relative to the state's) against a reference (Radau at rtol
1e-13 / 1e-12):

- ours, ``simulate(method=...)`` with 'bdf', 'rosenbrock' and 'rosw' (the
  loop in C);
- ``solve_ivp`` with Radau, BDF and LSODA calling the compiled ``rhs``;
- numbalsoda's LSODA calling ``rhs_address`` from C (if numbalsoda is
  installed).

Equal tolerances do not give equal errors, so the errors are printed beside
the times; ratios are to the faster of ours.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time

import numpy as np

from codegen import GibbsAppellMethod, generate
from codegen.examples import spring_damper, stiff_pendulum

T = 1.0
OURS = ("bdf", "rosenbrock", "rosw")


def best(f, rounds=5):
    """Best time of f over rounds, and its last result."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def setup(which):
    """(label, compiled model, p, r, x0, atol / rtol) of a benchmark model."""
    model = spring_damper() if which == "spring" else stiff_pendulum(int(which))
    mod = generate(GibbsAppellMethod(**model.kwargs), f"stiffbench_{which}",
                   output_dir=tempfile.mkdtemp())
    p = np.array([model.parameter_values[c] for c in mod.constants])
    r = np.zeros(len(mod.specifieds))
    label = "spring-damper (2 states)" if which == "spring" else \
        f"stiff pendulum n = {which} ({mod.nx} states)"
    return label, mod, p, r, np.array(model.initial_state, dtype=float), \
        1e-2 if which == "spring" else 1.0


def run(tols, models=("spring",), rounds=5):
    from scipy.integrate import solve_ivp
    try:
        import numbalsoda
    except ImportError:
        numbalsoda = None
    rows = []
    for which in models:
        label, mod, p, r, x0, atol_of = setup(which)
        ref_tol = 1e-13 if which == "spring" else 1e-12
        ref = solve_ivp(mod.rhs, (0, T), x0, args=(p, r), method="Radau", rtol=ref_tol,
                        atol=ref_tol * atol_of).y[:, -1]
        for tol in tols:
            atol = tol * atol_of
            row = {"model": label, "tol": tol}

            def ours(method):
                def f():
                    res = mod.simulate((0, T), x0, p, r, method=method, rtol=tol, atol=atol,
                                       t_eval=[T])
                    assert res.success, res.message
                    return res.x[-1], res.nsteps
                return f

            def scipy(method):
                def f():
                    sol = solve_ivp(mod.rhs, (0, T), x0, args=(p, r), method=method, rtol=tol,
                                    atol=atol)
                    assert sol.success
                    return sol.y[:, -1], len(sol.t) - 1
                return f

            solvers = [(m, ours(m)) for m in OURS] + [(m, scipy(m)) for m in ("Radau", "BDF", "LSODA")]
            if numbalsoda is not None:
                data = mod.callback_data(p, r)

                def nb():
                    usol, ok = numbalsoda.lsoda(mod.rhs_address, x0.copy(), np.array([0.0, T]),
                                                data=data, rtol=tol, atol=atol)
                    assert ok
                    return usol[-1], None
                solvers.append(("numbalsoda LSODA", nb))
            for _, f in solvers:
                f()                                        # warm-up (numba compiles here)
            # round-robin: a slow spell of the machine falls on every solver alike
            times = {name: [] for name, _ in solvers}
            for _ in range(rounds):
                for name, f in solvers:
                    t, (x, steps) = best(f, 3)        # three in a row: warm caches
                    times[name].append(t)
                    row[name] = dict(steps=steps, error=float(abs(x - ref).max() / abs(ref).max()))
            for name in times:
                row[name]["time"] = min(times[name])
            rows.append(row)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["spring", "4", "8"],
                    help="'spring' or a pendulum size n")
    ap.add_argument("--tols", type=float, nargs="+", default=[1e-4, 1e-6, 1e-8])
    args = ap.parse_args(argv)
    rows = run(args.tols, args.models)
    names = [k for k in rows[0] if k not in ("model", "tol")]
    print("1 s of each model: best time [ms], ratio to the faster of ours "
          "(accepted steps; relative error at t = 1)\n")
    print("| model | rtol | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 2) + "|")
    for row in rows:
        fastest = min(row[m]["time"] for m in OURS)
        cells = []
        for name in names:
            c = row[name]
            steps = f"{c['steps']}, " if c["steps"] is not None else ""
            q = c["time"] / fastest
            ratio = f" {q:.0f}x" if q >= 10 else f" {q:.2g}x"
            cells.append(f"{c['time'] * 1e3:.3f}{ratio} ({steps}{c['error']:.1e})")
        print(f"| {row['model']} | {row['tol']:g} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
