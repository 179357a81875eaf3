"""Batches: many simulations and many RHS evaluations in one call, side by side.

    python -m codegen.bench.batch [--n 4] [--runs 256] [--steps 1000] [--states 100000]

Model: the n-link pendulum on a cart, as in codegen.bench.simulate (the same
MJCF for MuJoCo, the same initial-state convention). Measured, each pair in
alternation (5 rounds after a warm-up, medians):

- RK4 batch, dt = 1 ms: ``simulate_batch(method='rk4')`` over ``--runs``
  initial states (OpenMP over the cores) against ``mujoco.rollout`` with one
  MjData per core (its thread pool); and both on one core (ours: a loop of
  ``simulate``; MuJoCo: one MjData), which gives each side's parallel
  speed-up. The states after 50 steps are compared first (1e-6).
- RHS batch: ``rhs_batch`` over ``--states`` random states against SymPy's
  ``lambdify(cse=True)`` of KanesMethod's M and F evaluated on whole arrays
  by NumPy (one batched ``numpy.linalg.solve``), and against a Python loop
  over ``rhs``. The results are compared first (relative 1e-8).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np
import sympy as sm

from codegen import GibbsAppellMethod, generate
from codegen.examples import n_pendulum_on_cart

from .simulate import alternate, mj_state, mjcf, ours_from_mj


def _start_states(n, runs, rng):
    return np.column_stack([np.zeros(runs), 0.3 * rng.uniform(-1, 1, (runs, n)),
                            np.full(runs, 0.1), rng.uniform(-1, 1, (runs, n))])


def rk4_batch(n, runs, steps, dt=1e-3, rounds=5):
    import mujoco
    from mujoco import rollout

    model = n_pendulum_on_cart(n)
    mod = generate(GibbsAppellMethod(**model.kwargs), f"batchbench{n}", output_dir=tempfile.mkdtemp())
    vals = model.parameter_values
    p = np.array([vals[c] for c in mod.constants])
    force = 0.3
    X0 = _start_states(n, runs, np.random.default_rng(n))
    m = mujoco.MjModel.from_xml_string(mjcf(n, vals, dt))
    threads = os.cpu_count() or 1
    datas = [mujoco.MjData(m) for _ in range(threads)]
    states0 = np.array([mj_state(m, datas[0], x0) for x0 in X0])

    def ours_batch(k=steps):
        t, X, status = mod.simulate_batch((0, k * dt), X0, p, [force], method="rk4", dt=dt,
                                          t_eval=[k * dt])
        assert not status.any()
        return X[:, -1]

    def ours_loop():
        return [mod.simulate((0, steps * dt), x0, p, [force], method="rk4", dt=dt,
                             t_eval=[steps * dt]).x[-1] for x0 in X0]

    def mj(data, k=steps):
        return rollout.rollout(m, data, states0, np.full((runs, k, 1), force))[0]

    check = 50                       # the pendulum is chaotic over long runs: compare early
    mj_x = np.array([ours_from_mj(m, s) for s in mj(datas, check)[:, -1]])
    diff = abs(mj_x - ours_batch(check)).max()
    if diff > 1e-6:
        return dict(n=n, runs=runs, steps=steps, threads=threads, agree=False, diff=diff)
    par_ours, par_mj = alternate(ours_batch, lambda: mj(datas), rounds)
    one_ours, one_mj = alternate(ours_loop, lambda: mj(datas[0]), rounds)
    total = runs * steps
    return dict(n=n, runs=runs, steps=steps, threads=threads, agree=True, diff=diff,
                ours=total / par_ours.median, mujoco=total / par_mj.median,
                ours1=total / one_ours.median, mujoco1=total / one_mj.median)


def rhs_batch(n, states, rounds=5):
    import sympy.physics.mechanics as me

    model = n_pendulum_on_cart(n)
    mod = generate(GibbsAppellMethod(**model.kwargs), f"batchbench{n}", output_dir=tempfile.mkdtemp())
    vals = model.parameter_values
    consts = list(model.constants)                      # the model's order: mod.constants
    p = np.array([vals[str(c)] for c in consts])
    X = np.random.default_rng(5).uniform(-1, 1, (states, mod.nx))
    r = np.array([0.3])

    # the lambdify peer: KanesMethod's M and F, every entry over whole arrays
    km = me.KanesMethod(**model.kwargs)
    km.kanes_equations(model.bodies, model.loads)
    nu = len(model.u_ind)
    f = sm.lambdify([model.q_ind + model.u_ind, consts, model.specifieds],
                    list(km.mass_matrix) + list(km.forcing), "numpy", cse=True)

    def lam():                       # q' = u in this model
        full = np.stack([np.broadcast_to(v, (states,)) for v in f(X.T, p, r)], axis=1)
        M = full[:, :nu * nu].reshape(states, nu, nu)
        return np.hstack([X[:, mod.nq:], np.linalg.solve(M, full[:, nu * nu:, None])[..., 0]])

    def ours():
        return mod.rhs_batch(0.0, X, p, r)

    def loop():
        return np.array([mod.rhs(0.0, x, p, r) for x in X])

    ref = ours()
    agree = {name: np.allclose(g(), ref, rtol=1e-8, atol=1e-8) for name, g in
             (("lambdify", lam), ("loop", loop))}
    t_ours, t_lam = alternate(ours, lam, rounds)
    _, t_loop = alternate(ours, loop, max(1, rounds // 2))
    return dict(n=n, states=states, agree=agree, ours=t_ours.median / states,
                lambdify=t_lam.median / states, loop=t_loop.median / states)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--runs", type=int, default=256)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--states", type=int, default=100_000)
    args = ap.parse_args(argv)
    a = rk4_batch(args.n, args.runs, args.steps)
    print(f"RK4, n = {a['n']}, {a['runs']} runs of {a['steps']} steps (dt = 1 ms), "
          f"{a['threads']} cores: steps per second\n")
    if not a["agree"]:
        print(f"MuJoCo disagrees by {a['diff']:.2e} after 50 steps: not timed")
    else:
        print("| | ours | MuJoCo rollout | ratio |")
        print("|---|---|---|---|")
        print(f"| all cores | {a['ours']:.3g} | {a['mujoco']:.3g} | {a['ours'] / a['mujoco']:.0f}x |")
        print(f"| one core | {a['ours1']:.3g} | {a['mujoco1']:.3g} | {a['ours1'] / a['mujoco1']:.0f}x |")
        print(f"| parallel speed-up | {a['ours'] / a['ours1']:.2f}x | {a['mujoco'] / a['mujoco1']:.2f}x | |")
        print(f"\nstates after 50 steps agree to {a['diff']:.1e}")
    b = rhs_batch(args.n, args.states)
    print(f"\nRHS, n = {b['n']}, {b['states']} states in one call: time per state [us]\n")
    print("| ours: rhs_batch | SymPy lambdify on arrays (NumPy) | Python loop over rhs |")
    print("|---|---|---|")
    cell = lambda k: (f"{b[k] * 1e6:.3f} ({b[k] / b['ours']:.0f}x)" if b["agree"][k]
                      else "disagrees: not timed")
    print(f"| {b['ours'] * 1e6:.3f} | {cell('lambdify')} | {cell('loop')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
