"""The drop-in on the documentation's examples: KanesMethod and GibbsAppellMethod side by side.

    python -m codegen.bench.dropin [--models rolling_disc bicycle ...] [--repeat 3]
                                   [--cap 600] [--no-pydy]

For every model of codegen.bench.doc_examples (SymPy's documentation pages for
physics.mechanics and physics.biomechanics, PyDy's examples), each tool runs
in a fresh interpreter and measures what a user of the documentation runs:

- formulate: the documented call (the constructor and ``kanes_equations``, or
  ``System.form_eoms(eom_method=...)``) and the first read of
  ``mass_matrix_full`` and ``forcing_full``;
- the operation counts of ``mass_matrix_full`` and ``forcing_full`` written
  out as expressions (codegen.symbolic.counting.operation_count: an n-term sum or
  product is n - 1 operations, a power or call one; the same tree count as
  ``sympy.count_ops(visual=False)``, faster);
- lambdify: ``sympy.lambdify([q, u, p, r], [mass_matrix_full, forcing_full],
  cse=True)``, the documentation's step before simulating.

Before any time counts, both tools' lambdified matrices are compared at two
consistent random states (relative 1e-9), and PyDy's ``System`` (lambdify
generator) integrates each tool's object over the first second from the
model's initial state (odeint, rtol = atol = 1e-11): the trajectories must
agree to 1e-9 (on the first of the --repeat runs; the times are the median of
them). A run past --cap seconds is reported as "> cap".
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys

import numpy as np
from . import CAPPED, child

_CHILD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np, sympy as sm, sympy.physics.mechanics as me
from codegen import GibbsAppellMethod
from codegen.bench.doc_examples import MODELS
from codegen.bench.doc_model import consistent_state, solve_full
from codegen.symbolic.counting import operation_count
tool, name, pydy = sys.argv[1], sys.argv[2], sys.argv[3] == "pydy"
cls = me.KanesMethod if tool == "kane" else GibbsAppellMethod
t = me.dynamicsymbols._t
model = MODELS[name]()
t0 = time.perf_counter()
method = model.form(cls)
M, F = method.mass_matrix_full, method.forcing_full
out = {"formulate": time.perf_counter() - t0}
out["ops_M"], out["ops_F"] = operation_count(list(M)), operation_count(list(F))
aux = list(model.u_auxiliary)
zero = {**{a.diff(t): 0 for a in aux}, **{a: 0 for a in aux}}
# every declared input and constant (lambdify takes unused ones; walking a matrix of a
# million operations to find the used ones would take longer than the rest)
specs = sorted(model.specifieds, key=str)
consts = sorted(model.constants, key=str)
args = [list(method.q), list(method.u), consts, specs]
if zero:       # KanesMethod's forcing keeps uaux' in its acceleration constraints
    M, F = M.xreplace(zero), F.xreplace(zero)
sm.lambdify([sm.Symbol("x")], [sm.Symbol("x")], cse=True)   # lambdify's own imports, untimed
t0 = time.perf_counter()
f = sm.lambdify(args, [M, F], cse=True)
out["lambdify"] = time.perf_counter() - t0
rng = np.random.default_rng(20270)
p = [model.constants[c] for c in consts]
out["numbers"] = []
for _ in range(2):
    q, u, r = consistent_state(model, method, rng, specifieds=specs)
    Mn, Fn = (np.array(a, dtype=float) for a in f(q, u, p, r))
    out["numbers"].append([Mn.tolist(), Fn.ravel().tolist()])
out["names"] = [str(s) for s in list(method.q) + list(method.u) + specs]
if pydy:
    try:
        from pydy.system import System
        q, u, _ = consistent_state(model, method)
        system = System(method, initial_conditions=dict(zip(args[0] + args[1],
                                                            np.concatenate([q, u]))),
                        times=model.time_grid(end=min(1.0, model.times[1]), num=11))
        system.constants = {c: v for c, v in model.constants.items()
                            if c in system.constants_symbols}
        system.specifieds = {s: v for s, v in model.specifieds.items()
                             if s in system.specifieds_symbols}
        out["trajectory"] = system.integrate(rtol=1e-11, atol=1e-11).tolist()
    except Exception as exc:
        out["pydy_error"] = type(exc).__name__
print(json.dumps(out))
"""

TOOLS = ("kane", "ours")


def measure(tool: str, name: str, cap: float, pydy: bool = True) -> dict:
    """One tool on one model in a fresh interpreter; {'capped': True} past cap seconds."""
    line, why = child([_CHILD, tool, name, "pydy" if pydy else "-"], cap)
    if why == CAPPED:
        return {"capped": True}
    return {"error": why} if why else json.loads(line)


def _close(ours, theirs, rtol=1e-9) -> bool:
    a, b = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= rtol * max(np.abs(b).max(), 1e-300)))


def agreement(kane: dict, ours: dict) -> tuple:
    """(matrices equal, PyDy's verdict): the lambdified matrices at both states, and
    the two trajectories of PyDy's System."""
    if "numbers" not in kane or "numbers" not in ours:
        return None, "–"
    equal = kane["names"] == ours["names"] and all(
        _close(o[0], k[0]) and _close(o[1], k[1])
        for k, o in zip(kane["numbers"], ours["numbers"]))
    if "trajectory" in ours and "trajectory" in kane:
        pydy = "yes" if _close(ours["trajectory"], kane["trajectory"]) else "NO"
    elif "trajectory" in ours:
        pydy = f"ours runs; KanesMethod's: {kane.get('pydy_error', 'not run')}"
    elif "pydy_error" in ours:
        pydy = f"NO: {ours['pydy_error']}"
    else:
        pydy = "not run"
    return equal, pydy


def compare(models, cap: float, pydy: bool = True, repeat: int = 1):
    """Yield (model, {tool: result}, matrices equal, PyDy verdict) per model: the first
    run's results and checks, with each time the median over the repeats."""
    for name in models:
        runs = {}
        for tool in TOOLS:
            first = measure(tool, name, cap, pydy)
            more = [measure(tool, name, cap, False) for _ in range(repeat - 1)] \
                if "formulate" in first else []
            for key in ("formulate", "lambdify"):
                values = [r[key] for r in [first] + more if key in r]
                if values:
                    first[key] = statistics.median(values)
            runs[tool] = first
        equal, verdict = agreement(runs["kane"], runs["ours"])
        yield name, runs, equal, verdict


def _value(run: dict, key: str, cap: float, fmt: str) -> str:
    if "capped" in run:
        return f"> {cap:g} (cap)"
    if "error" in run:
        return "error"
    return fmt.format(run[key])


def _ratio(runs: dict, key: str) -> str:
    k, o = runs["kane"].get(key), runs["ours"].get(key)
    return f"{o / k:.2f}" if isinstance(k, (int, float)) and isinstance(o, (int, float)) \
        and k > 0 else "–"


COLUMNS = [("formulate", "formulate [s]", "{:.2f}"), ("ops_M", "ops mass_matrix_full", "{:d}"),
           ("ops_F", "ops forcing_full", "{:d}"), ("lambdify", "lambdify [s]", "{:.2f}")]


def main(argv=None) -> int:
    from .doc_examples import MODELS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--repeat", type=int, default=1, help="runs per tool; times are medians")
    ap.add_argument("--cap", type=float, default=600.0, help="seconds per run")
    ap.add_argument("--no-pydy", action="store_true", help="skip PyDy's System runs")
    args = ap.parse_args(argv)
    head = ["model"] + [f"{label}, {who}" for _, label, _ in COLUMNS
                        for who in ("Kane", "ours", "ours/Kane")] + ["equal", "PyDy System"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    errors = []
    for name, runs, equal, verdict in compare(args.models, args.cap, not args.no_pydy,
                                                   args.repeat):
        cells = [name]
        for key, _, fmt in COLUMNS:
            cells += [_value(runs["kane"], key, args.cap, fmt),
                      _value(runs["ours"], key, args.cap, fmt), _ratio(runs, key)]
        cells += [{True: "yes", False: "NO", None: "not compared"}[equal], verdict]
        print("| " + " | ".join(cells) + " |", flush=True)
        errors += [f"{name} ({tool}): {run['error']}" for tool, run in runs.items()
                   if "error" in run]
    for line in errors:
        print(f"\nerror: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
