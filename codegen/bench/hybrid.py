"""What events and feedback cost a run in C, against the same in SciPy.

    python -m codegen.bench.hybrid [--n 4] [--rounds 7] [--t-end 10]

Model: the n-link pendulum on a cart (codegen.examples.n_pendulum_on_cart),
compiled with one event function, the last link's angular speed: it changes
sign at each turn of that link, about once per 80 DOPRI5 steps at
rtol = atol = 1e-8 for n = 4.

- Events: a 10 s DOPRI5 run locating every turn (non-terminal, so the steps
  are those of the run without events) against the same run locating none;
  and against ``solve_ivp(RK45)`` on the compiled ``rhs`` with the event
  as a Python function (``mod.event_functions``). The first event times of the
  two are compared (the motion is chaotic: the two integrators' trajectories part
  later).
- Feedback: an LQR gain K about the upright position (from ``linearize`` and
  ``solve_continuous_are``), ``controller=K`` in C, against the open-loop run
  with a constant input, both RK4 with dt = 1 ms (the same steps, and the same
  constant reference input: no table lookup in either); and the
  closed loop with DOPRI5 against ``solve_ivp(RK45)`` with the same controller
  in Python.

The machine may be shared: the variants run in alternation, ``--rounds``
rounds after a warm-up, and the medians are compared, and the best times (the
least disturbed runs).
"""
from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from codegen import GibbsAppellMethod, generate
from codegen.examples import n_pendulum_on_cart


def _median(runs: dict, rounds: int) -> dict:
    """{name: (median seconds, last result, best seconds)} of callables run in alternation
    (the best: the least disturbed run, on a shared machine)."""
    for f in runs.values():
        f()                                                  # warm-up
    times = {name: [] for name in runs}
    last = {}
    for _ in range(rounds):
        for name, f in runs.items():
            start = time.perf_counter()
            last[name] = f()
            times[name].append(time.perf_counter() - start)
    return {name: (float(np.median(t)), last[name], float(np.min(t))) for name, t in times.items()}


def _cost(a, b) -> str:
    """a's extra time over b's, of the medians and of the best times."""
    return f"{100 * (a[0] / b[0] - 1):+.1f} % ({100 * (a[2] / b[2] - 1):+.1f} % best)"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--t-end", type=float, default=10.0)
    args = parser.parse_args(argv)
    from scipy.integrate import solve_ivp
    from scipy.linalg import solve_continuous_are

    model = n_pendulum_on_cart(args.n)
    ga = GibbsAppellMethod(**model.kwargs)
    mod = generate(ga, f"bench_hybrid{args.n}", output_dir=tempfile.mkdtemp(),
                   events={"turn": ga.u[args.n]})
    p = mod.parameters(model.parameter_values)
    x0 = np.array(model.initial_state, dtype=float)
    span, r0 = (0.0, args.t_end), np.zeros(1)
    tol = dict(rtol=1e-8, atol=1e-8)

    print(f"n-link pendulum on a cart, n = {args.n}; {args.t_end:g} s runs; medians of "
          f"{args.rounds} rounds in alternation\n")
    # -- events
    index = mod.event_names.index("turn")

    def turn(t, x, *args):
        return mod.event_functions(t, x, p, r0)[index]
    runs = _median({
        "without": lambda: mod.simulate(span, x0, p, r0, events=[], **tol),
        "with": lambda: mod.simulate(span, x0, p, r0, events=["turn"], **tol),
        "scipy": lambda: solve_ivp(mod.rhs, span, x0, args=(p, r0), events=turn, **tol),
    }, args.rounds)
    base, with_events, scipy = runs["without"], runs["with"], runs["scipy"]
    ours_t = np.array([e[1] for e in with_events[1].events])
    theirs_t = scipy[1].t_events[0]
    theirs_t = theirs_t[theirs_t > 0.0]             # solve_ivp counts the start (u = 0 there)
    n = min(len(ours_t), len(theirs_t), 5)
    print("Events: DOPRI5, rtol = atol = 1e-8 [ms]\n")
    print("| | run [ms] | steps | events | steps per event | cost of the events |")
    print("|---|---|---|---|---|---|")
    print(f"| ours, no events | {1e3 * base[0]:.3g} | {base[1].nsteps} | | | |")
    print(f"| ours, events located in C | {1e3 * with_events[0]:.3g} | {with_events[1].nsteps} | "
          f"{len(ours_t)} | {with_events[1].nsteps / max(len(ours_t), 1):.0f} | "
          f"{_cost(with_events, base)} |")
    print(f"| solve_ivp(RK45), Python event | {1e3 * scipy[0]:.3g} | {len(scipy[1].t) - 1} | "
          f"{len(theirs_t)} | | {scipy[0] / with_events[0]:.0f}x ours |")
    print(f"\nthe first {n} event times agree to {np.abs(ours_t[:n] - theirs_t[:n]).max():.1e} s\n")

    # -- feedback
    up = np.array([0.0] + [np.pi / 2] * args.n + [0.0] * (args.n + 1))
    A, B = mod.linearize(up, p, r0)
    K = B.T @ solve_continuous_are(A, B, np.eye(len(up)), np.eye(1))
    start = up + 0.05 * (np.arange(len(up)) < args.n + 1)
    dt = dict(method="rk4", dt=1e-3, t_eval=np.linspace(0, args.t_end, 11), events=[])

    def closed(t, x):
        return mod.rhs(t, x, p, -K @ (x - up))
    runs = _median({
        "open rk4": lambda: mod.simulate(span, start, p, r0, **dt),
        "K rk4": lambda: mod.simulate(span, start, p, controller=K, x_ref=up, **dt),
        "K dopri5": lambda: mod.simulate(span, start, p, controller=K, x_ref=up, events=[], **tol),
        "scipy": lambda: solve_ivp(closed, span, start, **tol),
    }, args.rounds)
    print("Feedback r = -K (x - x_ref) in C [ms]\n")
    print("| | run [ms] | RHS evaluations | per RHS [us] | cost of the feedback |")
    print("|---|---|---|---|---|")
    for key, label in (("open rk4", "RK4, open loop"), ("K rk4", "RK4, controller=K"),
                       ("K dopri5", "DOPRI5, controller=K"),
                       ("scipy", "solve_ivp(RK45), Python controller")):
        run, seconds = runs[key][1], runs[key][0]
        cost = {"K rk4": _cost(runs["K rk4"], runs["open rk4"]),
                "scipy": f"{seconds / runs['K dopri5'][0]:.0f}x ours (DOPRI5)"}.get(key, "")
        print(f"| {label} | {1e3 * seconds:.3g} | {run.nfev} | {1e6 * seconds / run.nfev:.3f} | "
              f"{cost} |")
    final = np.interp(args.t_end, runs["scipy"][1].t, runs["scipy"][1].y[1])
    print(f"\nfinal first-link angle: ours {runs['K dopri5'][1].x[-1, 1]:.10f}, "
          f"solve_ivp {final:.10f}")


if __name__ == "__main__":
    main()
