"""The IFToMM benchmark mechanisms: precision reached and CPU time for 10 s of motion.

    python -m codegen.bench.iftomm [--n 1 5 10] [--repeat 3]

The N four-bar (A02, examples.n_four_bar(n)): every crank starts vertical, the
first crank's tip at 1 m/s; the chain passes the flat singular position (rank
2N -> N) about ten times in 10 s. Its exact motion keeps every crank at the
angle of one ODE (examples.n_four_bar_exact). Per method: the largest distance
of a crank tip from the exact one at each whole second and over 1001 points,
the energy drift relative to the energy, the largest constraint residual
(positions and speeds), and the CPU time of the run (``time.process_time``,
the median of --repeat runs), as the IFToMM benchmark reports it: the time for
10 s at the precision reached. Bricard's mechanism (A04, examples.bricard(),
five constraint rows of rank 4) is reported for energy and constraints.

Methods: the SVD null-space elimination with DOPRI5 (``dopri5``) and the
index-3 augmented Lagrangian with projections (``ali3p``, fixed step). A run
of the SVD elimination that passes by a singular position ends with the
status "near singular" (CG_NEAR_SINGULAR) and the lowest ratio of singular
values it met.
"""
from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np
import sympy as sm

from codegen.abi import STATUS_CODE

T_END = 10.0
#: (label, simulate's keyword arguments)
METHODS = [("dopri5, rtol = atol = 1e-10", dict(method="dopri5", rtol=1e-10, atol=1e-10)),
           ("ali3p, dt = 1e-3, atol = 1e-10", dict(method="ali3p", dt=1e-3, atol=1e-10)),
           ("ali3p, dt = 5e-4, atol = 1e-11", dict(method="ali3p", dt=5e-4, atol=1e-11))]


def _energy(model, mod, p, res) -> np.ndarray:
    nq = len(model.q_ind)
    V = sm.lambdify(model.q_ind, model.potential_energy.xreplace(
        {c: model.parameter_values[str(c)] for c in model.constants}))
    return np.array([0.5 * x[nq:] @ mod.mass_matrix(t, x, p) @ x[nq:] + V(*x[:nq])
                     for t, x in zip(res.t, res.x)])


def run(model, mod, kwargs: dict, repeat: int, exact=None) -> dict:
    """One method on one mechanism: its precision and CPU time (see the module doc)."""
    p = mod.parameters(model.parameter_values)
    x0 = mod.project(np.array(model.initial_state, dtype=float), p)
    times = np.linspace(0.0, T_END, 1001)
    cpu = []
    for _ in range(repeat):
        t0 = time.process_time()
        res = mod.simulate((0.0, T_END), x0, p, t_eval=times, **kwargs)
        cpu.append(time.process_time() - t0)
    status = "ok" if res.success else res.message
    if res.status == STATUS_CODE["CG_NEAR_SINGULAR"]:       # a whole run, with a warning
        status = "near singular: " + res.message.rsplit(": ", 1)[1]
    out = dict(status=status, warned=res.status == STATUS_CODE["CG_NEAR_SINGULAR"],
               reached=res.t[-1] if len(res.t) else 0.0, cpu=sorted(cpu)[len(cpu) // 2],
               steps=res.nsteps)
    if len(res.t) == 0:
        return out
    e = _energy(model, mod, p, res)
    out["energy"] = np.abs(e - e[0]).max() / np.abs(e).max()
    out["residual"] = max(np.abs(mod.residuals(t, x, p)).max() for t, x in zip(res.t, res.x))
    if exact is not None:
        n = len(model.q_ind) // 2
        ex_t = exact(times)[:len(res.t)]
        tips = np.stack([np.cos(res.x[:, :n + 1]), np.sin(res.x[:, :n + 1])], -1)
        ex_tips = np.stack([np.cos(ex_t), np.sin(ex_t)], -1)[:, None, :]
        gap = np.linalg.norm(tips - ex_tips, axis=-1).max(axis=1)
        out["seconds"], out["anywhere"] = gap[::100].max(), gap.max()
    return out


def _cell(v, fmt="{:.1e}") -> str:
    return "–" if v is None else fmt.format(v)


def main(argv=None) -> int:
    from codegen import GibbsAppellMethod, generate
    from codegen import examples as ex
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1, 5, 10])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    folder = tempfile.mkdtemp()
    print("The IFToMM benchmark mechanisms, 10 s of motion: precision reached (crank tips "
          "against the exact motion [m], energy drift relative to the energy, largest "
          "constraint residual) and CPU time [s] of the run\n")
    print("| mechanism | method | status | tip error at each second | tip error anywhere "
          "| energy drift | max residual | steps | CPU time [s] |")
    print("|---|---|---|---|---|---|---|---|---|")
    cases = [(f"N four-bar, N = {n}", ex.n_four_bar(n),
              lambda t, n=n: ex.n_four_bar_exact(n, t)) for n in args.n]
    cases.append(("Bricard", ex.bricard(), None))
    for label, model, exact in cases:
        mod = generate(GibbsAppellMethod(**model.kwargs), model.name, output_dir=folder)
        for name, kwargs in METHODS:
            try:
                r = run(model, mod, kwargs, args.repeat, exact)
            except Exception as exc:            # a method that does not apply: say why
                print(f"| {label} | {name} | {str(exc).split(' at t =')[0]} | | | | | | |")
                continue
            status = r["status"] if r["status"] == "ok" or r["warned"] else \
                f"stopped at t = {r['reached']:.3f}: {r['status']}"
            print(f"| {label} | {name} | {status} | {_cell(r.get('seconds'))} | "
                  f"{_cell(r.get('anywhere'))} | {_cell(r.get('energy'))} | "
                  f"{_cell(r.get('residual'))} | {r['steps']} | {r['cpu']:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
