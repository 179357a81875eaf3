"""Large models: build time by stage, RHS and Jacobian per call against Pinocchio.

    python -m codegen.bench.scale [--n 20 50 100 200] [--jacobian-n 20 100]
                                  [--kane-cap 120] [--no-pydy] [--budget 600]

Model: the n-link pendulum on a cart (codegen.examples.n_pendulum_on_cart),
absolute angles as SymPy's own model writes them, and the same chain built
in Pinocchio directly (a prismatic cart, n revolute joints, point masses at
the link ends; codegen.bench.jacobian). For every n, one fresh interpreter
measures

- GibbsAppellMethod(...) (generate forms what it needs; kanes_equations()
  would also form KanesMethod's public matrices, which generate never
  reads), then each stage of ``generate`` (forming the
  neutral equations, CSE, emitting, compiling; codegen.progress.Stages),
  forced, with default options: the analytic Jacobian where the defaults
  build it;
- RHS per call from Python with ``out=`` against ``pinocchio.aba`` on the
  same state (the least median of alternating rounds), after checking that
  both give the same accelerations (relative 1e-8);
- for n in --jacobian-n: the model built with ``jacobian=True`` and its
  Jacobian per call with ``out=`` against
  ``pinocchio.computeABADerivatives``, compared first as in
  codegen.bench.jacobian;
- KanesMethod's ``kanes_equations`` in another interpreter, stopped at
  --kane-cap seconds (reported as "> cap");
- PyDy: KanesMethod's equations through ``generate_ode_function`` with the
  Cython generator, and its RHS per call, as codegen.bench.rhs measures them
  (its child, without the operation count), in another interpreter under
  the same cap (not run where KanesMethod alone is over it); its
  accelerations must equal ours (relative 1e-8) before its time counts.

A build over --budget seconds stops with codegen.BudgetError (its stage is
reported). Prints Markdown tables.
"""
from __future__ import annotations

import argparse
import json
import sys
import textwrap
from . import CAPPED, child
from .rhs import disagreement, run

_OURS = textwrap.dedent(r"""
import json, sys, tempfile, time
import numpy as np
from codegen import BudgetError, GibbsAppellMethod, generate
from codegen.bench import alternating_times
from codegen.bench.jacobian import _pinocchio, derivatives_difference
from codegen.bench.simulate import from_relative, to_relative
from codegen.examples import n_pendulum_on_cart
from codegen.progress import Stages

n, jac, budget = int(sys.argv[1]), sys.argv[2] == "1", float(sys.argv[3])
model = n_pendulum_on_cart(n)
vals = model.parameter_values
res = {}
t0 = time.perf_counter()
ga = GibbsAppellMethod(**model.kwargs)     # generate forms the equations it needs
res["formulate"] = time.perf_counter() - t0
out_dir = tempfile.mkdtemp()
stages = Stages(False)
t0 = time.perf_counter()
try:
    mod = generate(ga, f"scale{n}", output_dir=out_dir, force=True, progress=stages,
                   budget=budget)
except BudgetError:
    res["error"] = f"over budget in {stages.stage}"
    print(json.dumps(res))
    sys.exit(0)
res["generate"] = time.perf_counter() - t0
res["stages"] = dict(stages.times)
res["ops"] = mod.operation_count
p = mod.parameters(vals)
rng = np.random.default_rng(n)
x = np.concatenate([[0.1], rng.uniform(-1, 1, n), [0.2], rng.uniform(-1, 1, n)])
r = np.array([0.3])
out = np.empty(mod.nx)
try:                          # built by default?
    mod.jacobian(0.0, x, p, r)
    res["default_jacobian"] = True
except ValueError:
    res["default_jacobian"] = False
xd = mod.rhs(0.0, x, p, r)
res["xdot"] = xd.tolist()
pin, pm, data = _pinocchio(n, vals)
q, v = to_relative(x, n)
tau = np.zeros(n + 1)
tau[0] = r[0]
a = from_relative(np.array(pin.aba(pm, data, q, v, tau)))
diff = abs(xd[n + 1:] - a).max()
res["aba_difference"] = float(diff / abs(a).max())
timed = {"ours": lambda: mod.rhs(0.0, x, p, r, out)}
if diff <= 1e-8 * abs(a).max():
    timed["aba"] = lambda: pin.aba(pm, data, q, v, tau)
number = max(200, 200000 // (n + 1))
res.update({f"call_{k}": t for k, t in alternating_times(timed, number).items()})
if jac:
    t0 = time.perf_counter()
    stages = Stages(False)
    try:
        modj = generate(ga, f"scale{n}_j", output_dir=out_dir, force=True, jacobian=True,
                        progress=stages, budget=budget)
    except BudgetError:
        res["jac_error"] = f"build over {budget:g} s (in {stages.stage})"
        print(json.dumps(res))
        sys.exit(0)
    res["generate_jacobian"] = time.perf_counter() - t0
    J = modj.jacobian(0.0, x, p, r)
    Jout = np.empty_like(J)
    res["derivatives_difference"] = d = derivatives_difference(J, pin, pm, data, q, v, tau)
    timed = {"ours": lambda: modj.jacobian(0.0, x, p, r, Jout)}
    if d <= 1e-8:
        timed["aba_derivatives"] = lambda: pin.computeABADerivatives(pm, data, q, v, tau)
    res.update({f"jac_{k}": t for k, t in
                alternating_times(timed, max(50, 20000 // (n + 1) ** 2 * 10)).items()})
print(json.dumps(res))
""")

_KANE = textwrap.dedent(r"""
import sys, time
import sympy.physics.mechanics as me
from codegen.examples import n_pendulum_on_cart
model = n_pendulum_on_cart(int(sys.argv[1]))
t0 = time.perf_counter()
km = me.KanesMethod(**model.kwargs)
km.kanes_equations(model.bodies, model.loads)
print(time.perf_counter() - t0)
""")


def ours(n: int, jacobian: bool, budget: float) -> dict:
    """Our build and calls at n, in a fresh interpreter."""
    line, why = child([_OURS, str(n), "1" if jacobian else "0", str(budget)])
    return {"error": why} if why else json.loads(line)


def kane(n: int, cap: float) -> str:
    """KanesMethod's kanes_equations at n in seconds, or "> cap"."""
    line, why = child([_KANE, str(n)], cap)
    if why == CAPPED:
        return f"> {cap:g} s"
    return "failed" if why else f"{float(line):.1f}"


def pydy(n: int, cap: float, xdot: list | None) -> dict:
    """PyDy's build (KanesMethod, then the Cython ODE function) and RHS per call at n
    under cap seconds (codegen.bench.rhs's child), checked against ours (xdot)."""
    res = run("pydy", n, cap, ops=False)
    why = disagreement(res["xdot"], xdot) if "xdot" in res and xdot is not None else None
    return {"error": why} if why else res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[20, 50, 100, 200])
    ap.add_argument("--jacobian-n", type=int, nargs="*", default=[20, 100])
    ap.add_argument("--kane-cap", type=float, default=120.0,
                    help="seconds KanesMethod, and PyDy, may take (0: not run)")
    ap.add_argument("--no-pydy", action="store_true", help="skip PyDy")
    ap.add_argument("--budget", type=float, default=600.0)
    ap.add_argument("--json", help="also write the raw results here")
    args = ap.parse_args(argv)
    rows = {}
    for n in args.n:
        res = ours(n, n in args.jacobian_n, args.budget)
        res["kane"] = kane(n, args.kane_cap) if args.kane_cap > 0 else "–"
        if args.kane_cap > 0 and not args.no_pydy:
            # PyDy starts from KanesMethod's equations: past the cap without them
            res["pydy"] = {"error": res["kane"]} if res["kane"].startswith(">") else \
                pydy(n, args.kane_cap, res.get("xdot"))
        rows[n] = res
        shown = {k: v for k, v in res.items() if k != "xdot"}
        shown["pydy"] = {k: v for k, v in res.get("pydy", {}).items() if k != "xdot"}
        print(f"n = {n}: {json.dumps(shown)}", file=sys.stderr, flush=True)

    def f(r, key, scale=1.0, fmt="{:.2f}"):
        return fmt.format(r[key] * scale) if key in r else "–"

    print("Build time by stage [s] (GibbsAppellMethod, then generate with default options, "
          "forced)\n")
    def peer(r):
        p = r.get("pydy", {})
        return p["error"] if "error" in p else (
            f"{p['formulate'] + p['generate']:.1f}" if "generate" in p else "–")

    print("| n | forming (method) | forming | CSE | emitting | compiling | total | "
          "operations (q', M, F) | Jacobian by default | KanesMethod | PyDy (KanesMethod + "
          "Cython) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n, r in rows.items():
        if "stages" not in r:
            print(f"| {n} | {r.get('error', 'failed')} ||||||||| {r['kane']} | {peer(r)} |")
            continue
        s = r["stages"]
        total = r["formulate"] + r["generate"]
        print(f"| {n} | {r['formulate']:.2f} | {s.get('forming', 0):.2f} | {s.get('CSE', 0):.2f}"
              f" | {s.get('emitting', 0):.2f} | {s.get('compiling', 0):.2f} | {total:.1f} | "
              f"{r['ops']} | {'yes' if r['default_jacobian'] else 'no'} | {r['kane']} | "
              f"{peer(r)} |")
    print("\nRHS per call from Python [µs] (ratio = peer / ours; PyDy: the median of 7 "
          "repeats, ours and Pinocchio's alternating)\n")
    print("| n | ours | pinocchio.aba | PyDy (Cython) |")
    print("|---|---|---|---|")
    for n, r in rows.items():
        if "call_ours" not in r:
            continue
        aba = (f"{r['call_aba'] * 1e6:.2f} ({r['call_aba'] / r['call_ours']:.1f}x)"
               if "call_aba" in r else f"differs by {r['aba_difference']:.1e}")
        p = r.get("pydy", {})
        py = (f"{p['call'] * 1e6:.2f} ({p['call'] / r['call_ours']:.1f}x)" if "call" in p
              else p.get("error", "–"))
        print(f"| {n} | {f(r, 'call_ours', 1e6)} | {aba} | {py} |")
    jac = {n: r for n, r in rows.items() if "jac_ours" in r or "jac_error" in r}
    if jac:
        print("\nJacobian d x'/dx per call [µs] (jacobian=True; ratio = Pinocchio / ours)\n")
        print("| n | build [s] | ours | pinocchio.computeABADerivatives |")
        print("|---|---|---|---|")
        for n, r in jac.items():
            if "jac_error" in r:
                print(f"| {n} | {r['jac_error']} | – | – |")
                continue
            pin = (f"{r['jac_aba_derivatives'] * 1e6:.1f} "
                   f"({r['jac_aba_derivatives'] / r['jac_ours']:.1f}x)"
                   if "jac_aba_derivatives" in r
                   else f"differs by {r['derivatives_difference']:.1e}")
            print(f"| {n} | {r['generate_jacobian']:.1f} | {r['jac_ours'] * 1e6:.1f} | {pin} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
