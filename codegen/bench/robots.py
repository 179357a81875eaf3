"""Real robots from their URDF files against Pinocchio on the same files.

    python -m codegen.bench.robots [--robots iiwa hyq atlas ...] [--symbolic]
                                   [--shared ../shared/robots] [--cap 900]
                                   [--no-jacobian-build] [--no-in-c]

For each robot (codegen.robots.catalog.BENCHMARK_ROBOTS: the iiwa, HyQ and Atlas
of the rigid-body dynamics benchmark, and UR5, Panda, Solo12, ANYmal and Talos
from example-robot-data), in a fresh interpreter with an empty cache:
``from_urdf`` + formulate + generate + compile with the default options (the
time counted against the targets), then per call from Python, against
Pinocchio's algorithms in the same run:

- forward dynamics: ``rhs`` against ``pin.aba``;
- inverse dynamics: ``inverse_dynamics`` against ``pin.rnea``;
- the mass matrix: ``mass_matrix`` against ``pin.crba``;
- the Jacobian of forward dynamics: ``jacobian`` (d x'/d x, into the caller's array as
  ``rhs`` writes into its ``xdot``) against
  ``pin.computeABADerivatives`` (d v'/d q, d v'/d v and M⁻¹); a model the default
  options built without its Jacobian is built again with ``jacobian=True`` (unless
  ``--no-jacobian-build``).

Each pair is compared at the timed state (relative 1e-9; the free-flyer's
derivatives over its quaternion mapped to Pinocchio's tangent space) before
its times count. Times are the best of three rounds of medians, the peers
measured in turn. ``--symbolic`` also builds ``from_urdf(..., symbolic=True)``
and times its forward dynamics.

Then, in the same child, the same four pairs per call in C (codegen.bench.in_c):
one C program calls the model's standalone export and Pinocchio's C++ algorithms,
both compiled with in_c.FLAGS, checks them on random states (the first is the one
timed from Python) and times them; with valgrind installed, also their instructions
per call. Where the C++ toolchain or Pinocchio's headers are missing, the table says
which and is left out (``--no-in-c`` skips it); a robot whose driver does not build
is listed with the reason.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..robots.catalog import BENCHMARK_ROBOTS
from . import CAPPED, child

ROOT = Path(__file__).resolve().parents[2]

#: GRiDBenchmarks' README: Pinocchio with CppADCodeGen code generation on an Intel
#: i7-10700K at 3.8 GHz (turbo off), single calls in µs: another machine's figures
PUBLISHED = {"iiwa": (0.3, 0.9, 2.9), "hyq": (0.3, 1.2, 4.3), "atlas": (1.1, 5.3, 20.9)}

_CHILD = r"""
import json, os, resource, sys, tempfile, time
from pathlib import Path
import numpy as np
import pinocchio as pin
from codegen import GibbsAppellMethod, generate
from codegen.bench import alternating_times, in_c
from codegen.robots import from_urdf

name, path, floating, options, symbolic, rebuild = sys.argv[1], sys.argv[2], sys.argv[3] == "1", \
    json.loads(sys.argv[4]), sys.argv[5] == "1", sys.argv[6] == "1"
peer = sys.argv[7]      # Pinocchio's side of the in-C driver, or "" to skip it
out = {}

def cpu():
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))

def build(jacobian=None, symbolic=False):
    t0, c0 = time.perf_counter(), cpu()
    model = from_urdf(path, floating_base=floating, symbolic=symbolic, **options)
    mod = generate(GibbsAppellMethod(**model.kwargs), f"robot_{name}", output_dir=tempfile.mkdtemp(),
                   constants=model.constants, specifieds=model.specifieds, jacobian=jacobian,
                   force=True)
    out["cpu"] = cpu() - c0
    return model, mod, time.perf_counter() - t0

model, mod, out["build"] = build()
out["build_cpu"] = out["cpu"]
mimic = options.get("mimic", True)
pm = (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer(), mimic=mimic) if floating
      else pin.buildModelFromUrdf(path, mimic=mimic))
pd = pm.createData()
out.update(nq=pm.nq, nv=pm.nv, solver=mod.manifest.get("solver", ""),
           operations=mod.operation_count)
p = mod.parameters(model.parameter_values)
nq = len(model.q_ind)
x, r, udot = in_c.draw_states(model, floating, 1)[0]       # the in-C driver's first state
zero = np.zeros(len(model.specifieds))
q, v = model.to_pinocchio(x)
tau = np.concatenate([np.zeros(6) if floating else [], r])

def tangent(J):
    # d/dq over our coordinates -> over Pinocchio's tangent
    return J @ in_c.tangent(x, floating, nq, pm.nv)

def rel(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(1.0, np.abs(b).max()))

try:
    mod.jacobian(0.0, x, p, r)
    jmod = mod
except ValueError:
    jmod = None
    if rebuild:
        _, jmod, out["build_jacobian"] = build(jacobian=True)
M = pin.crba(pm, pd, q)
M = np.triu(M) + np.triu(M, 1).T
pin.computeABADerivatives(pm, pd, q, v, tau)
J = jmod.jacobian(0.0, x, p, r)[nq:] if jmod else np.full((pm.nv, 2 * pm.nv), np.nan)
out["error"] = {
    "fd": rel(mod.rhs(0.0, x, p, r)[nq:], pin.aba(pm, pd, q, v, tau)),
    "id": rel(mod.inverse_dynamics(0.0, x, udot, p, zero), pin.rnea(pm, pd, q, v, udot)),
    "mass": rel(mod.mass_matrix(0.0, x, p, r), M),
    "jacobian": max(rel(tangent(J[:, :nq]), pd.ddq_dq), rel(J[:, nq:], pd.ddq_dv))
    if jmod else float("nan")}
xdot = np.empty(mod.nx)      # into arrays of the caller's, as a simulation calls them
Jout = np.empty((jmod.nx, jmod.nx)) if jmod else None
pairs = {
    "fd": (lambda: mod.rhs(0.0, x, p, r, xdot), lambda: pin.aba(pm, pd, q, v, tau)),
    "id": (lambda: mod.inverse_dynamics(0.0, x, udot, p, zero),
           lambda: pin.rnea(pm, pd, q, v, udot)),
    "mass": (lambda: mod.mass_matrix(0.0, x, p, r), lambda: pin.crba(pm, pd, q)),
    "jacobian": (lambda: jmod.jacobian(0.0, x, p, r, Jout),
                 lambda: pin.computeABADerivatives(pm, pd, q, v, tau))}
fns = {}
for key, (ours, theirs) in pairs.items():
    if out["error"][key] < 1e-9:
        fns[key], fns[key + "_pin"] = ours, theirs
out["times"] = alternating_times(fns, number=500 if pm.nv > 20 else 2000)
if symbolic:
    smodel, smod, out["build_symbolic"] = build(symbolic=True)
    sp = smod.parameters(smodel.parameter_values)
    out["error"]["symbolic"] = rel(smod.rhs(0.0, x, sp, r), mod.rhs(0.0, x, p, r))
    if out["error"]["symbolic"] < 1e-9:
        out["times"].update(alternating_times({"fd_symbolic": lambda: smod.rhs(0.0, x, sp, r)},
                                              number=500 if pm.nv > 20 else 2000))
if peer:
    out["in_c"] = in_c.measure(model, path, floating, mimic, f"robot_{name}",
                               separate_jacobian=jmod is not None and jmod is not mod,
                               peer=Path(peer))
print(json.dumps(out))
"""


def robot_path(name: str, shared: Path) -> tuple:
    """(path, floating_base, from_urdf's options) of a benchmark robot."""
    from ..robots.catalog import example_robot_data
    where, relative, floating, options = BENCHMARK_ROBOTS[name]
    root = shared if where == "shared" else example_robot_data()
    if root is None:
        raise FileNotFoundError("example-robot-data is not installed "
                                "(pip install example-robot-data)")
    path = Path(root) / relative
    if not path.is_file():
        raise FileNotFoundError(f"{path} is not here")
    return str(path), floating, options


def measure(name: str, shared: Path, symbolic: bool, cap: float, rebuild: bool = True,
            peer: str = "") -> dict:
    """One robot's figures, from a fresh interpreter with an empty cache; with peer
    (Pinocchio's side of codegen.bench.in_c, compiled), its figures in C too."""
    import tempfile
    try:
        path, floating, options = robot_path(name, shared)
    except FileNotFoundError as exc:
        return {"failed": str(exc)}
    env = dict(os.environ, CODEGEN_CACHE=tempfile.mkdtemp(prefix="cg-robots-"))
    line, why = child([_CHILD, name, path, str(int(floating)), json.dumps(options),
                       str(int(symbolic)), str(int(rebuild)), peer], cap, env)
    if why == CAPPED:
        return {"failed": f"> {cap:.0f} s"}
    return {"failed": why[:200]} if why else json.loads(line)


def _cell(r: dict, key: str) -> str:
    """'ours | pinocchio | ratio' of one algorithm (µs), or why not timed."""
    t = r["times"]
    if key not in t:
        if r["error"][key] != r["error"][key]:
            return "not built | | "
        return f"differ by {r['error'][key]:.1e}: not timed | | "
    ours, theirs = t[key] * 1e6, t[key + "_pin"] * 1e6
    return f"{ours:.2f} | {theirs:.2f} | {theirs / ours:.1f}x"


def _ratio(r: dict, key: str) -> str:
    t = r["times"]
    return f"{t[key + '_pin'] / t[key]:.1f}x" if key in t else ""


def _in_c_table(results: dict, caption: str) -> None:
    """The in-C figures of each robot, beside its ratios from Python."""
    print(f"\n{caption}\n")
    print("| robot | FD: ours | pinocchio::aba | ratio | from Python | ID: ours | "
          "pinocchio::rnea | ratio | from Python | M: ours | pinocchio::crba | ratio | "
          "from Python | Jacobian: ours | computeABADerivatives | ratio | from Python |")
    print("|---|" + "---|" * 16)
    for name, r in results.items():
        c = r.get("in_c") if "failed" not in r else r
        if c is None:
            continue
        if "failed" in c:
            print(f"| {name} | {c['failed']} |" + " |" * 15)
            continue
        print(f"| {name} | " + " | ".join(f"{_cell(c, k)} | {_ratio(r, k)}"
                                          for k in ("fd", "id", "mass", "jacobian")) + " |")
    counted = {n: r["in_c"]["instructions"] for n, r in results.items()
               if "instructions" in r.get("in_c", {})}
    if not counted:
        return
    print("\nInstructions per call in C (callgrind, the same driver: 200 calls a side after "
          "the checks), ratio = Pinocchio / ours\n")
    print("| robot | FD: ours | pinocchio::aba | ratio | ID: ours | pinocchio::rnea | ratio | "
          "M: ours | pinocchio::crba | ratio | Jacobian: ours | computeABADerivatives | "
          "ratio |")
    print("|---|" + "---|" * 12)
    for name, ir in counted.items():
        print(f"| {name} | " + " | ".join(
            f"{ir[k]:.0f} | {ir[k + '_pin']:.0f} | {ir[k + '_pin'] / ir[k]:.1f}x" if k in ir
            else " | | " for k in ("fd", "id", "mass", "jacobian")) + " |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="+", default=list(BENCHMARK_ROBOTS),
                    choices=list(BENCHMARK_ROBOTS))
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "robots"),
                    help="the folder of iiwa.urdf, hyq.urdf and atlas.urdf")
    ap.add_argument("--symbolic", action="store_true",
                    help="also build from_urdf(..., symbolic=True) and time its rhs")
    ap.add_argument("--cap", type=float, default=900.0, help="seconds per robot")
    ap.add_argument("--no-jacobian-build", action="store_true",
                    help="do not build the Jacobian where the default options left it out")
    ap.add_argument("--no-in-c", action="store_true",
                    help="skip the per-call figures in C (codegen.bench.in_c)")
    args = ap.parse_args(argv)
    results = {}
    peer, in_c_why = "", "skipped (--no-in-c)"
    if not args.no_in_c:
        from . import in_c
        try:
            tc = in_c.toolchain()
            peer = str(in_c.peer_object(tc))
        except (in_c.Unavailable, RuntimeError) as exc:
            in_c_why = f"not measured: {exc}"
    print("Per call from Python [µs], ratio = Pinocchio / ours; build = from_urdf + formulate "
          "+ generate + compile with the default options, a fresh cache: wall clock (CPU time of "
          "this process and its compilers) [s]\n")
    print("| robot | nq / nv | build | FD: ours | pin.aba | ratio | ID: ours | pin.rnea | "
          "ratio | M: ours | pin.crba | ratio | Jacobian: ours | computeABADerivatives | "
          "ratio |")
    print("|---|---|---|" + "---|" * 12)
    for name in args.robots:
        r = results[name] = measure(name, Path(args.shared), args.symbolic, args.cap,
                                    not args.no_jacobian_build, peer)
        if "failed" in r:
            print(f"| {name} | | {r['failed']} |" + " |" * 12, flush=True)
            continue
        print(f"| {name} | {r['nq']} / {r['nv']} | {r['build']:.1f} ({r['build_cpu']:.1f}) | "
              + " | ".join(_cell(r, k) for k in ("fd", "id", "mass", "jacobian")) + " |",
              flush=True)
    print("\nBuild details [s] (the Jacobian's own build where the default options left it "
          "out; symbolic=True), and the forward dynamics' solver\n")
    print("| robot | default | jacobian=True | symbolic=True | FD symbolic=True [µs] | "
          "solver |")
    print("|---|---|---|---|---|---|")
    for name, r in results.items():
        if "failed" in r:
            continue
        jb, sb = r.get("build_jacobian"), r.get("build_symbolic")
        sfd = r["times"].get("fd_symbolic")
        print(f"| {name} | {r['build']:.1f} | {'' if jb is None else f'{jb:.1f}'} | "
              f"{'' if sb is None else f'{sb:.1f}'} | "
              f"{'' if sfd is None else f'{sfd * 1e6:.2f}'} | {r['solver']} |")
    if peer:
        _in_c_table(results, "Per call in C [µs], ratio = Pinocchio / ours, and the ratio "
                    "from Python of the first table: one C program per robot calls our "
                    "standalone export (cg_rhs, cg_inverse_dynamics, cg_mass_matrix_packed, "
                    "cg_jacobian) and Pinocchio's C++ algorithms on the same URDF "
                    "(pinocchio::urdf::buildModel), each through one function call; both "
                    f"compiled with {' '.join(in_c.FLAGS)} ({tc.version}), Pinocchio's "
                    "algorithms from its headers; each pair checked on "
                    f"{in_c.SAMPLES} random states (1e-9) before it is timed; medians of 11 "
                    f"rounds, the sides alternating, the {in_c.SAMPLES} states in turn; "
                    f"the machine's load (1-minute average) as each driver started: "
                    + ", ".join(f"{n} {r['in_c']['load']:.1f}" for n, r in results.items()
                                if "load" in r.get("in_c", {})))
    else:
        print(f"\nPer call in C: {in_c_why}")
    print("\nPublished figures of Pinocchio with CppADCodeGen (GRiDBenchmarks README; "
          "another machine: Intel i7-10700K at 3.8 GHz, turbo off; single calls in C) [µs]\n")
    print("| robot | inverse dynamics | forward dynamics | gradient of forward dynamics |")
    print("|---|---|---|---|")
    for name, (inv, fwd, grad) in PUBLISHED.items():
        print(f"| {name} | {inv} | {fwd} | {grad} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
