"""Command line.

    python -m codegen build <example | file.py> [--out DIR] [--seconds T] [--method M]
        form the equations, generate and compile the C, run a short
        simulation in C and report the code's location, its size, timings
        and the energy drift (for conservative models)
    python -m codegen show <example>
        print the Gibbs-Appell function and the equations

Examples: dumbbell, rolling_disk, rolling_disk_contact, pendulum[:n],
chain[:n], offset_pendulum, chaplygin_sleigh, four_bar, bricard,
n_four_bar[:n], slider_crank, spring_damper, stiff_pendulum[:n],
whipple_bicycle. A file.py must define
``model()`` returning a codegen.examples.Model (or a variable ``model``).
"""
from __future__ import annotations

import argparse
import inspect
import math
import runpy
import sys
import time
from pathlib import Path

import numpy as np
import sympy as sm

from . import examples
from .abi import METHOD_INFO, METHODS
from .appell import GibbsAppellMethod


def _model(spec: str) -> examples.Model:
    if spec.endswith(".py"):
        if not Path(spec).is_file():
            raise SystemExit(f"{spec}: no such file")
        ns = runpy.run_path(spec)
        m = ns.get("model")
        m = m() if callable(m) else m
        if not isinstance(m, examples.Model):
            raise SystemExit(f"{spec} must define model() returning codegen.examples.Model")
        return m
    name, _, arg = spec.partition(':')
    if name not in examples.EXAMPLES:
        raise SystemExit(f"unknown example {name!r}; choose from {', '.join(examples.EXAMPLES)} "
                         f"or give a file.py")
    builder = examples.EXAMPLES[name]
    if not arg:
        return builder()
    if next(iter(inspect.signature(builder).parameters), None) != "n":
        raise SystemExit(f"example {name!r} has no size: give it as {name!r} alone")
    if not (arg.isdigit() and int(arg) >= 1):
        raise SystemExit(f"{spec!r}: the size after ':' must be a positive integer, e.g. {name}:4")
    return builder(int(arg))


def _seconds(text: str) -> float:
    """argparse type: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive, finite number of seconds, "
                                         f"got {text!r}")
    return value


def show(args) -> int:
    """Print S, M and F of a built-in example."""
    model = _model(args.example)
    t0 = time.perf_counter()
    ga = GibbsAppellMethod(**model.kwargs)
    ga.kanes_equations()
    elapsed = time.perf_counter() - t0
    print(f"# {model.name}: {model.doc.strip().splitlines()[0]}")
    print(f"q = {list(ga.q)}\nu = {list(ga.u_independent)}")
    print("kinematics:")
    for qd, e in ga.kindiffdict().items():
        print(f"  {qd} = {e}")
    S = ga.gibbs_appell_function
    print(f"Gibbs-Appell function (u'-free terms dropped):\n  S = {sm.simplify(S) if args.simplify else S}")
    M, F = ga.reduced_mass_matrix, ga.reduced_forcing
    if args.simplify:
        M, F = sm.simplify(M), sm.simplify(F)
    print("equations of motion M u' = F:")
    for j in range(M.rows):
        print(f"  row {j}: M = {list(M.row(j))}\n         F = {F[j]}")
    print(f"formed in {elapsed:.3f} s")
    return 0


def build(args) -> int:
    """Generate, compile, simulate and check a model, reporting each stage as it ends."""
    from .build import generate
    from .progress import Stages

    model = _model(args.model)
    stages = Stages(True, sys.stdout)
    ga = GibbsAppellMethod(**model.kwargs)
    mod = generate(ga, model.name, output_dir=args.out, progress=stages)
    p = mod.parameters(model.parameter_values)
    x0 = np.array(model.initial_state or [0.1] * mod.nx, dtype=float)
    r = np.zeros(len(mod.specifieds)) if mod.specifieds else None
    if mod.nc:
        x0 = mod.project(x0, p)                 # onto the constraints
    method = args.method or ("bdf" if model.stiff else "dopri5")
    with stages("simulating"):
        res = mod.simulate((0.0, args.seconds), x0, p, r, method=method, rtol=1e-10,
                           atol=1e-10, t_eval=np.linspace(0.0, args.seconds, 201), dt=1e-3)
    if not res.success:
        hint = " (a stiff model? try --method bdf)" if method in ("rk4", "dopri5") else ""
        raise SystemExit(f"{model.name}: the simulation stopped at t = "
                         f"{res.t[-1] if len(res.t) else 0.0:g}: {res.message}{hint}")
    out = np.empty(mod.nx)
    calls = 20000
    t0 = time.perf_counter()
    for _ in range(calls):
        mod.rhs(0.0, x0, p, r, out)
    per_call = (time.perf_counter() - t0) / calls
    consts = sorted(model.constants, key=str)
    energy = sm.lambdify([list(ga.state), consts], ga.to_state(model.energy()), "numpy")
    pc = [p[mod.constants.index(str(c))] for c in consts]
    E = np.array([energy(x, pc) for x in res.x])
    settings = ("dt = 1 ms" if METHOD_INFO[method].fixed_step else "rtol = atol = 1e-10")
    print(f"model        {model.name}: {mod.nq} coordinates, {mod.nu} speeds")
    print(f"code         {mod.source_dir} ({model.name}.c, {model.name}.h)")
    print(f"operations   {mod.operation_count} after CSE; {mod.manifest['solver']}")
    print(f"rhs          {per_call * 1e6:.2f} us per call from Python")
    print(f"simulation   {method} in C, {settings}, {args.seconds:g} s: {res.nsteps} steps, "
          f"{res.nfev} RHS calls; specified inputs held at zero")
    if model.conservative:
        drift = abs(E - E[0]).max() / max(abs(E[0]), 1e-300)
        print(f"energy       relative drift {drift:.2e} (from {E[0]:.6g})")
    else:
        print(f"energy       {E[0]:.6g} -> {E[-1]:.6g} (the model has dampers)")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="generate, compile, simulate and check a model")
    b.add_argument("model", help="a built-in example (e.g. rolling_disk, pendulum:5) or file.py")
    b.add_argument("--out", default="generated", help="output folder (default: generated)")
    b.add_argument("--seconds", type=_seconds, default=2.0, help="simulated time (default 2)")
    b.add_argument("--method", choices=list(METHODS),
                   help="integrator (default: bdf for stiff examples, else dopri5; rk4 at dt = 1 ms)")
    b.set_defaults(func=build)
    s = sub.add_parser("show", help="print S and the equations of a built-in example")
    s.add_argument("example", help="a built-in example, e.g. rolling_disk or pendulum:5")
    s.add_argument("--no-simplify", dest="simplify", action="store_false",
                   help="print the equations as formed")
    s.set_defaults(func=show)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
