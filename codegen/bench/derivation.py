"""Derivation time of the equations: GibbsAppellMethod against SymPy's KanesMethod.

    python -m codegen.bench.derivation [--models pendulum:12 chain:4 chain:8 bicycle quaternion]
                                       [--repeat 3] [--cap 600]

What is timed is what a KanesMethod user runs: the constructor and
``kanes_equations(bodies, loads)``, for the same model, each in a fresh
interpreter (neither tool profits from SymPy's cache warmed by the other;
the model is built outside the timed region). Models:

- ``pendulum:n``: the n-link pendulum on a cart (codegen.examples);
- ``chain:n``: examples.spatial_chain(n), 3n speeds, rigid bodies;
- ``bicycle``: the Whipple bicycle exactly as SymPy's test_kane3 writes it
  (3 velocity constraints, u_dependent=[u1, u4, u6], q_dependent=[q4],
  constraint_solver='CRAMER'), stopped before its linearization;
- ``quaternion``: SymPy's test_kane.test_implicit_kinematics (a rigid body
  in quaternions, explicit_kinematics=False);
- ``bicycle-linearize``, ``rolling_disc-linearize``: the time of ``linearize``
  alone in SymPy's test_kane3 (Meijaard's benchmark, A_and_B=True,
  linear_solver='CRAMER') and test_linearize (the rolling disc with a
  dependent coordinate and speeds); the SymPy test then checks the result.

After timing, both tools' ``solve(mass_matrix, forcing)`` are compared at a
random state (relative 1e-9): the two timings are of equal work. A run that
exceeds --cap seconds is killed and reported as "> cap".
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from . import CAPPED, child

_CHILD = r"""
import json, sys, time
import numpy as np, sympy as sm, sympy.physics.mechanics as me
from codegen import GibbsAppellMethod
tool, spec = sys.argv[1], sys.argv[2]
cls = me.KanesMethod if tool == 'kane' else GibbsAppellMethod
timing = {}

class Stop(Exception):
    pass

name, _, arg = spec.partition(':')
linearizing = name.endswith('-linearize')
name = name.replace('-linearize', '')

class Timed(cls):
    # times the constructor plus kanes_equations, then stops the caller (a SymPy test);
    # or, for '<model>-linearize', times linearize and lets the test check its result
    def __init__(self, *args, **kwargs):
        timing['t0'] = time.perf_counter()
        super().__init__(*args, **kwargs)
    def kanes_equations(self, *args, **kwargs):
        out = super().kanes_equations(*args, **kwargs)
        timing['seconds'] = time.perf_counter() - timing['t0']
        timing['method'] = self
        if not linearizing:
            raise Stop
        return out
    def linearize(self, *args, **kwargs):
        t0 = time.perf_counter()
        out = super().linearize(*args, **kwargs)
        timing['seconds'] = time.perf_counter() - t0
        timing['A'] = out[0]
        return out

try:
    if name in ('pendulum', 'chain'):
        from codegen import examples
        model = (examples.n_pendulum_on_cart if name == 'pendulum' else examples.spatial_chain)(int(arg))
        kw = dict(model.kwargs)
        bodies, loads = kw.pop('bodies'), kw.pop('forcelist')
        Timed(**kw).kanes_equations(bodies, loads)
    elif name == 'bicycle':
        from sympy.physics.mechanics.tests import test_kane3
        test_kane3.KanesMethod = Timed
        test_kane3.test_bicycle()
    elif name == 'quaternion':
        from sympy.physics.mechanics.tests import test_kane
        test_kane.KanesMethod = Timed
        test_kane.test_implicit_kinematics()
    elif name == 'rolling_disc':
        from sympy.physics.mechanics.tests import test_linearize
        test_linearize.KanesMethod = Timed
        test_linearize.test_linearize_rolling_disc_kane()
except Stop:
    pass
if linearizing:       # the SymPy test itself checked A (Meijaard's bicycle: to 1e-12)
    print(json.dumps({'seconds': timing['seconds'], 'checked_by_the_sympy_test': True}))
    sys.exit(0)
km = timing['method']
M, F = km.mass_matrix, km.forcing
syms = sorted(M.free_symbols | F.free_symbols | me.find_dynamicsymbols(M) | me.find_dynamicsymbols(F)
              - {me.dynamicsymbols._t}, key=str)
rng = np.random.default_rng(0)
vals = dict(zip(syms, rng.uniform(0.5, 1.5, len(syms))))
f = sm.lambdify([syms], [M, F], cse=True)
Mn, Fn = f([vals[s] for s in syms])
acc = np.linalg.solve(np.array(Mn, dtype=float), np.array(Fn, dtype=float).ravel())
print(json.dumps({'seconds': timing['seconds'], 'acc': acc.tolist(), 'names': list(map(str, syms))}))
"""

DEFAULT_MODELS = ["pendulum:5", "pendulum:12", "pendulum:20", "chain:4", "chain:8", "chain:12",
                  "bicycle", "quaternion", "bicycle-linearize", "rolling_disc-linearize"]


def measure(tool: str, spec: str, cap: float) -> dict:
    """One formation in a fresh interpreter; {'capped': True} past cap seconds."""
    line, why = child([_CHILD, tool, spec], cap)
    if why == CAPPED:
        return {"capped": True}
    return {"error": why} if why else json.loads(line)


def compare(models, repeat: int, cap: float):
    """Yield (model, Kane runs, our runs, agreement) per model."""
    import numpy as np
    for spec in models:
        ours = [measure("ga", spec, cap) for _ in range(repeat)]
        kane = [measure("kane", spec, cap)]
        if "seconds" in kane[0]:
            kane += [measure("kane", spec, cap) for _ in range(repeat - 1)]
        agree = None
        if ours[0].get("checked_by_the_sympy_test") and kane[0].get("checked_by_the_sympy_test"):
            agree = True
        if "acc" in ours[0] and "acc" in kane[0]:
            a, b = np.array(kane[0]["acc"]), np.array(ours[0]["acc"])
            agree = bool(ours[0]["names"] == kane[0]["names"] and
                         np.allclose(a, b, rtol=1e-9, atol=1e-9 * abs(a).max()))
        yield spec, kane, ours, agree


def _cell(runs, cap):
    if "capped" in runs[0]:
        return f"> {cap:g} (cap)"
    if "error" in runs[0]:
        return f"error: {runs[0]['error']}"
    return f"{statistics.median(r['seconds'] for r in runs):.2f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=DEFAULT_MODELS)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cap", type=float, default=600.0, help="seconds per run")
    args = ap.parse_args(argv)
    print("| model | KanesMethod [s] | GibbsAppellMethod [s] | Kane / ours | equal |")
    print("|---|---|---|---|---|")
    for spec, kane, ours, agree in compare(args.models, args.repeat, args.cap):
        ratio = "–"
        if "seconds" in ours[0]:
            tg = statistics.median(r["seconds"] for r in ours)
            if "seconds" in kane[0]:
                ratio = f"{statistics.median(r['seconds'] for r in kane) / tg:.1f}x"
            elif "capped" in kane[0]:
                ratio = f"> {args.cap / tg:.0f}x"
        equal = {True: "yes", False: "NO", None: "not compared"}[agree]
        print(f"| {spec} | {_cell(kane, args.cap)} | {_cell(ours, args.cap)} | {ratio} | {equal} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
