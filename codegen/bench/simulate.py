"""Whole simulations: RK4 in C against MuJoCo's rollout, DOPRI5 in C against solve_ivp.

    python -m codegen.bench.simulate [--n 1 4 8 12] [--steps 20000] [--rounds 3] [--native]

Model: the n-link pendulum on a cart (codegen.examples.n_pendulum_on_cart),
built for MuJoCo as a slide joint and n hinges with point masses at the link
ends (diagonal inertia 1e-12, relative angles, converted from the absolute
angles of the SymPy model), gravity -y, the cart force as a motor, contacts
off. Each run:

- RK4 at equal dt = 1 ms over the same number of steps: ours with
  ``simulate(method='rk4')`` (the loop in C), MuJoCo with
  ``mujoco.rollout.rollout`` (RK4 integrator); the states after 50 steps
  are compared (1e-6; the pendulum is chaotic over the whole run);
- a 10 s adaptive simulation at rtol = atol = 1e-8: ours with
  ``simulate(method='dopri5')`` against ``scipy.integrate.solve_ivp(RK45)``
  calling the compiled ``rhs``; states at 1 s compared (1e-5, different
  error controllers).
Times: the machine is shared, so ours and the peer run in alternation,
7 rounds each (``--rounds``, 3 by default, for the adaptive runs) after a
warm-up; the medians are compared, and so are the best times of each side
(the least disturbed run of each). solve_ivp gets p and r as NumPy arrays
(a list would cost a conversion per call). ``--native`` builds ours with ``host_flags()``
(-march=native) instead of the portable default.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from typing import NamedTuple

import numpy as np

from codegen import GibbsAppellMethod, generate
from codegen.pipeline.compiler import host_flags
from codegen.pipeline.options import PORTABLE_FLAGS
from codegen.examples import n_pendulum_on_cart


def mjcf(n, vals, dt):
    """The pendulum on a cart as MJCF text."""
    tiny = 'diaginertia="1e-12 1e-12 1e-12"'
    body = ""
    for i in range(n, 0, -1):
        pos = vals[f"l{i - 1}"] if i > 1 else 0.0
        body = (f'<body name="b{i}" pos="{pos!r} 0 0"><joint name="h{i}" type="hinge" axis="0 0 1"/>'
                f'<inertial pos="{vals[f"l{i}"]!r} 0 0" mass="{vals[f"m{i}"]!r}" {tiny}/>{body}</body>')
    return (f'<mujoco><option timestep="{dt!r}" integrator="RK4" gravity="0 {-vals["g"]!r} 0">'
            f'<flag contact="disable"/></option><worldbody><body name="cart">'
            f'<joint name="slide" type="slide" axis="1 0 0"/>'
            f'<inertial pos="0 0 0" mass="{vals["m0"]!r}" {tiny}/>{body}</body></worldbody>'
            f'<actuator><motor joint="slide" gear="1"/></actuator></mujoco>')


def to_relative(x, n):
    """(q, v) of the joints (cart, then angles relative to the previous link)
    from our state [cart, absolute angles, their speeds]."""
    rel = lambda a: np.diff(np.concatenate([[0.0], a]))
    return (np.concatenate([[x[0]], rel(x[1:n + 1])]),
            np.concatenate([[x[n + 1]], rel(x[n + 2:2 * n + 2])]))


def from_relative(a):
    """The cart's value, then the absolute angles' values, from joint values."""
    return np.concatenate([[a[0]], np.cumsum(a[1:])])


class Timing(NamedTuple):
    median: float
    best: float
    result: object


def mj_state(m, d, x):
    """MuJoCo's full physics state (for rollout) at our state x, set into d."""
    import mujoco
    d.qpos[:], d.qvel[:] = to_relative(x, m.nq - 1)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty(mujoco.mj_stateSize(m, spec))
    mujoco.mj_getState(m, d, state, spec)
    return state


def ours_from_mj(m, state):
    """Our state from a MuJoCo full physics state (time, qpos, qvel, ...)."""
    return np.concatenate([from_relative(state[1:1 + m.nq]),
                           from_relative(state[1 + m.nq:1 + m.nq + m.nv])])


def alternate(a, b, rounds=7):
    """Timings (median, best) and the results of a and b, timed in alternation
    after a warm-up."""
    a(), b()
    times, results = ([], []), [None, None]
    for _ in range(rounds):
        for k, f in enumerate((a, b)):
            t0 = time.perf_counter()
            results[k] = f()
            times[k].append(time.perf_counter() - t0)
    return tuple(Timing(float(np.median(ts)), min(ts), res) for ts, res in zip(times, results))


def run(n, steps, dt=1e-3, flags=None, adaptive_rounds=3):
    import mujoco
    from mujoco import rollout
    from scipy.integrate import solve_ivp

    model = n_pendulum_on_cart(n)
    mod = generate(GibbsAppellMethod(**model.kwargs), f"simbench{n}", output_dir=tempfile.mkdtemp(),
                   flags=flags)
    vals = model.parameter_values
    p = np.array([vals[c] for c in mod.constants])
    rng = np.random.default_rng(n)
    x0 = np.concatenate([[0.0], 0.3 * rng.uniform(-1, 1, n), [0.1], rng.uniform(-1, 1, n)])
    force = 0.3
    T = steps * dt
    r = np.array([force])

    m = mujoco.MjModel.from_xml_string(mjcf(n, vals, dt))
    d = mujoco.MjData(m)
    state0 = mj_state(m, d, x0)
    control = np.full((1, steps, 1), force)
    ours, mj = alternate(
        lambda: mod.simulate((0, T), x0, p, r, method="rk4", dt=dt, t_eval=[T]),
        lambda: rollout.rollout(m, d, state0[None], control))
    assert ours.result.success and ours.result.nsteps == steps
    # equal work: the first 50 steps agree (the pendulum is chaotic over the whole run,
    # and MuJoCo's bodies carry a rotational inertia of 1e-12)
    check = 50
    states, _ = rollout.rollout(m, d, state0[None], control[:, :check])
    mj_x = ours_from_mj(m, states[0, -1])
    ours_x = mod.simulate((0, check * dt), x0, p, r, method="rk4", dt=dt,
                          t_eval=[check * dt]).x[-1]
    agree = np.allclose(mj_x, ours_x, rtol=1e-6, atol=1e-6)

    dp, ivp = alternate(
        lambda: mod.simulate((0, 10), x0, p, r, rtol=1e-8, atol=1e-8, t_eval=[10.0]),
        lambda: solve_ivp(mod.rhs, (0, 10), x0, args=(p, r), method="RK45", rtol=1e-8, atol=1e-8),
        rounds=adaptive_rounds)
    short = mod.simulate((0, 1), x0, p, r, rtol=1e-8, atol=1e-8, t_eval=[1.0]).x[-1]
    short_ivp = solve_ivp(mod.rhs, (0, 1), x0, args=(p, r), method="RK45", rtol=1e-8,
                          atol=1e-8).y[:, -1]
    agree_ivp = np.allclose(short, short_ivp, rtol=1e-5, atol=1e-5)
    return dict(n=n, ours=steps / ours.median, mujoco=steps / mj.median,
                best_ratio=mj.best / ours.best, agree=agree, mj_diff=abs(mj_x - ours_x).max(),
                dopri=dp.median, ivp=ivp.median, best_ivp_ratio=ivp.best / dp.best,
                agree_ivp=agree_ivp, dp_steps=dp.result.nsteps, ivp_steps=len(ivp.result.t) - 1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1, 4, 8, 12])
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--native", action="store_true", help="build ours with host_flags()")
    ap.add_argument("--rounds", type=int, default=3, help="timed rounds of the adaptive runs")
    args = ap.parse_args(argv)
    flags = host_flags() if args.native else None
    rows = [run(n, args.steps, flags=flags, adaptive_rounds=args.rounds) for n in args.n]
    print(f"ours built with: {' '.join(flags or PORTABLE_FLAGS)}\n")
    print(f"RK4, dt = 1 ms, {args.steps} steps: steps per second (ratio = ours / MuJoCo)\n")
    print("| n | ours (C loop) | MuJoCo rollout | ratio | ratio of best times | max state difference |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if not r["agree"]:
            print(f"| {r['n']} | {r['ours']:.3g} | MuJoCo disagrees by {r['mj_diff']:.2e}: not timed | | | |")
            continue
        print(f"| {r['n']} | {r['ours']:.3g} | {r['mujoco']:.3g} | {r['ours'] / r['mujoco']:.0f}x "
              f"| {r['best_ratio']:.0f}x | {r['mj_diff']:.1e} |")
    print("\n10 s adaptive simulation, rtol = atol = 1e-8 [ms] (ratio = solve_ivp / ours)\n")
    print("| n | ours: DOPRI5 in C | solve_ivp(RK45) on the compiled rhs | ratio | ratio of best times "
          "| steps ours / solve_ivp |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        flag = "" if r["agree_ivp"] else " (states at 1 s differ beyond 1e-5)"
        print(f"| {r['n']} | {r['dopri'] * 1e3:.2f} | {r['ivp'] * 1e3:.0f} | "
              f"{r['ivp'] / r['dopri']:.0f}x{flag} | {r['best_ivp_ratio']:.0f}x "
              f"| {r['dp_steps']} / {r['ivp_steps']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
