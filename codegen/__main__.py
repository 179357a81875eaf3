"""Command line.

    python -m codegen build <example | file.py> [--out DIR] [--seconds T] [--method M]
        form the equations, generate and compile the C, run a short
        simulation in C and report the code's location, its size, timings
        and the energy drift (for conservative models)
        --animate PAGE.html also writes the run as a 3-D animation page
    python -m codegen animate <example | file.py> [--seconds T] [--out PAGE.html] [--fps F]
        compile the model with its animation outputs, simulate T seconds and
        write the animation page (three.js, self-contained)
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
from .formulation.appell import GibbsAppellMethod


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


def _positive(unit: str):
    """argparse type: a positive, finite number of unit."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"must be a positive, finite number of {unit}, "
                                             f"got {text!r}")
        return value
    return parse


_seconds = _positive("seconds")
_fps = _positive("frames per second")


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


def _compile_and_run(model, args, stages, animated: bool, samples: int):
    """(ga, mod, p, x0, r, method, run): the model generated with its energy as outputs T and
    V (evaluated in C, for the drift), and its own and animation outputs if animated, and
    simulated for args.seconds at samples output times."""
    from .pipeline.build import generate

    ga = GibbsAppellMethod(**model.kwargs)
    outputs = {"T": "kinetic_energy", "V": model.potential_energy}
    if animated:
        from .animation import pose_outputs
        outputs = {**model.outputs, **pose_outputs(model), **outputs}
    try:
        mod = generate(ga, model.name, output_dir=args.out_dir, progress=stages,
                       outputs=outputs)
    except (OSError, ValueError) as exc:    # the folder, or the model's name or outputs
        raise SystemExit(f"{model.name}: {exc}") from None
    p = mod.parameters(model.parameter_values)
    x0 = np.array(model.initial_state or [0.1] * mod.nx, dtype=float)
    r = np.zeros(len(mod.specifieds)) if mod.specifieds else None
    if mod.nc:
        x0 = mod.project(x0, p)                 # onto the constraints
    method = args.method or ("bdf" if model.stiff else "dopri5")
    with stages("simulating"):
        res = mod.simulate((0.0, args.seconds), x0, p, r, method=method, rtol=1e-10,
                           atol=1e-10, t_eval=np.linspace(0.0, args.seconds, samples), dt=1e-3)
    if not res.success:
        hint = " (a stiff model? try --method bdf)" if method in ("rk4", "dopri5") else ""
        raise SystemExit(f"{model.name}: the simulation stopped at t = "
                         f"{res.t[-1] if len(res.t) else 0.0:g}: {res.message}{hint}")
    return ga, mod, p, x0, r, method, res


def _write_page(model, mod, run, path, stages) -> None:
    from .animation import animate, urdf_shapes
    with stages("animating"):
        try:
            shapes = model.shapes or (urdf_shapes(model) if getattr(model, "geometry", None)
                                      else [])
            shown = ["T", "V"] + [k for k in model.outputs if mod.output_shapes[k] == ()]
            page = animate(mod, run, path, outputs=shown, shapes=shapes,
                           title=f"{model.name}: codegen")
        except (OSError, ValueError) as exc:
            raise SystemExit(f"{model.name}: {exc}") from None
    print(f"animation    {page} ({page.stat().st_size / 1e6:.2f} MB, {len(run.t)} frames)")


def _checked_page(path) -> None:
    """Refuse a page path that cannot be written before any work is done."""
    from .animation.page import writable
    try:
        writable(path)
    except OSError as exc:
        raise SystemExit(str(exc)) from None


def _fps_samples(args) -> int:
    return int(round(args.seconds * args.fps)) + 1


def animate(args) -> int:
    """Generate a model with its animation outputs, simulate it and write the page."""
    from .progress import Stages

    model = _model(args.model)
    _checked_page(args.page)
    stages = Stages(True, sys.stdout)
    _, mod, _, _, _, _, run = _compile_and_run(model, args, stages, True, _fps_samples(args))
    _write_page(model, mod, run, args.page, stages)
    return 0


def build(args) -> int:
    """Generate, compile, simulate and check a model, reporting each stage as it ends."""
    from .progress import Stages

    model = _model(args.model)
    stages = Stages(True, sys.stdout)
    animated = args.animate is not None
    if animated:
        _checked_page(args.animate)
    ga, mod, p, x0, r, method, res = _compile_and_run(
        model, args, stages, animated, _fps_samples(args) if animated else 201)
    out = np.empty(mod.nx)
    calls = 20000
    t0 = time.perf_counter()
    for _ in range(calls):
        mod.rhs(0.0, x0, p, r, out)
    per_call = (time.perf_counter() - t0) / calls
    E = np.asarray(res.outputs["T"]) + np.asarray(res.outputs["V"])
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
    if animated:
        _write_page(model, mod, res, args.animate, stages)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="generate, compile, simulate and check a model")
    b.add_argument("model", help="a built-in example (e.g. rolling_disk, pendulum:5) or file.py")
    b.add_argument("--out", dest="out_dir", default="generated",
                   help="output folder (default: generated)")
    b.add_argument("--seconds", type=_seconds, default=2.0, help="simulated time (default 2)")
    b.add_argument("--method", choices=list(METHODS),
                   help="integrator (default: bdf for stiff examples, else dopri5; rk4 at dt = 1 ms)")
    b.add_argument("--animate", metavar="PAGE.html",
                   help="also write the run as an animation page (at --fps frames per second)")
    b.add_argument("--fps", type=_fps, default=60.0, help="frames per second of the page")
    b.set_defaults(func=build)
    a = sub.add_parser("animate", help="simulate a model and write its 3-D animation page")
    a.add_argument("model", help="a built-in example (e.g. whipple_bicycle, humanoid) or file.py")
    a.add_argument("--out", dest="page", default="motion.html",
                   help="the page to write (default: motion.html)")
    a.add_argument("--build-dir", dest="out_dir", default="generated",
                   help="folder of the generated code (default: generated)")
    a.add_argument("--seconds", type=_seconds, default=5.0, help="simulated time (default 5)")
    a.add_argument("--fps", type=_fps, default=60.0, help="frames per second (default 60)")
    a.add_argument("--method", choices=list(METHODS),
                   help="integrator (default: bdf for stiff examples, else dopri5)")
    a.set_defaults(func=animate)
    s = sub.add_parser("show", help="print S and the equations of a built-in example")
    s.add_argument("example", help="a built-in example, e.g. rolling_disk or pendulum:5")
    s.add_argument("--no-simplify", dest="simplify", action="store_false",
                   help="print the equations as formed")
    s.set_defaults(func=show)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
