"""The identification's regressor per call against Pinocchio's, and the exact base
parameters' time.

    python -m codegen.bench.identification [--robots iiwa ur5 hyq atlas]
                                           [--shared ../shared/robots] [--calls 2000]
                                           [--rounds 7] [--output-dir DIR]
                                           [--in-c] [--c-calls 20000]

For each robot (codegen.bench.robots.robot_path: the iiwa, HyQ and Atlas of the
rigid-body dynamics benchmark, the UR5 of example-robot-data), loaded with
``from_urdf(path, exact=True)`` (codegen.identification needs exact numbers for its base
parameters):

- the mapping of conventions: exact=True makes every rpy turn within QUARTER_TURN_TOL
  (1e-7 rad) of a quarter turn that quarter turn (codegen.robots.rotations.exact_rpy_matrix;
  Atlas writes π/2 as float32's 1.5707963705, the UR5 and HyQ as 1.57079632679), so
  Pinocchio loads a copy of the URDF with those rpy written as the quarter turns' floats
  (``pinocchio_urdf``, codegen.robots.rotations.snap_quarter_turns): the same model. Y's
  columns are Pinocchio's 10 parameters a body in its order, a floating base's
  quaternion Pinocchio's x y z w and its speeds Pinocchio's v, so nothing else is
  mapped. The difference from Pinocchio on the file as written is reported beside it:
  the snapping's own size (Atlas: about 2e-7), not an error;
- the times of forming Y, of the exact base parameters (``reg.rank``: rational states,
  elimination modulo primes) and of generating and compiling Y and Y_b;
- per call from Python, ``mod.regressor(x, u')`` (codegen.identification.compiled), and
  with a preallocated ``out=``, against
  ``pinocchio.computeJointTorqueRegressor(model, data, q, v, a)`` at the same states,
  after both are checked equal (relative TOLERANCE, 1e-10) at every one of them: a
  robot whose regressors differ is reported with the difference and not timed;
- per sample in a batch (``mod.batch``, one call for all the samples);
- with ``--in-c`` (``in_c``), per call in C: the regressor's standalone C
  (``Regressor.export_c``) against ``pinocchio::computeJointTorqueRegressor`` compiled
  from Pinocchio's headers, both at codegen.bench.in_c's FLAGS and called the same way
  from one C driver (templates/bench/regressor_*.j2), after the same check there. Its
  toolchain is codegen.bench.in_c's; Pinocchio's side is compiled once and cached.
  Beside it, ``<name>_regressor_nonzeros`` into a Y whose zeros are kept from the call
  before (it writes the entries that are not zero at every state alone): what clearing
  the whole of Y at every call costs, which ours and Pinocchio's both do.

Times are medians over rounds of ``calls`` calls a side, the sides alternating which goes
first. The table is Markdown.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..identification import regressor
from ..robots import from_urdf
from ..robots.rotations import snap_quarter_turns
from .in_c import (
    FLAGS,
    PINOCCHIO_LIBS,
    Unavailable,
    cached_cxx_object,
    compile_c,
    render_bench,
    run_step,
    toolchain,
)
from .robots import robot_path

__all__ = ["Mismatch", "check_agreement", "difference", "pinocchio_urdf", "measure", "main",
           "ROBOTS", "TOLERANCE", "regressor_peer", "in_c", "draw", "table"]

ROOT = Path(__file__).resolve().parents[2]
ROBOTS = ("iiwa", "ur5", "hyq", "atlas")
#: relative agreement with Pinocchio's regressor (on the mapped URDF) that must hold
#: before times count, here and in the C driver
TOLERANCE = 1e-10


class Mismatch(AssertionError):
    """Our regressor and Pinocchio's differ at a state: nothing is timed."""


def difference(mod, model, pm, pd, states, tolerance: float = float("inf")) -> float:
    """The largest relative difference max|Y − Y_pin| / max(1, max|Y_pin|) over states
    [(x, u')]; Mismatch above tolerance."""
    import pinocchio as pin
    worst = 0.0
    for x, ud in states:
        q, v = model.to_pinocchio(x)
        Yp = pin.computeJointTorqueRegressor(pm, pd, q, v, ud)
        Y = mod.regressor(x, ud)
        if Y.shape != Yp.shape:
            raise Mismatch(f"Y is {Y.shape}, Pinocchio's {Yp.shape}")
        worst = max(worst, float(np.abs(Y - Yp).max() / max(1.0, np.abs(Yp).max())))
        if worst > tolerance:
            raise Mismatch(f"Y differs from pin.computeJointTorqueRegressor by {worst:.1e} "
                           f"(relative) at x = {list(x)}")
    return worst


def check_agreement(mod, model, pm, pd, states) -> float:
    """difference's, Mismatch above TOLERANCE."""
    return difference(mod, model, pm, pd, states, TOLERANCE)


def pinocchio_urdf(path, folder: Path) -> tuple:
    """(the URDF Pinocchio loads, origins changed): path itself, or where exact=True
    snaps turns to quarter turns, a copy in folder with those rpy written as the quarter
    turns' floats (codegen.robots.rotations.snap_quarter_turns), the module docstring's
    mapping."""
    text, changed = snap_quarter_turns(Path(path).read_text(encoding="utf-8"))
    if not changed:
        return str(path), 0
    copy = Path(folder) / f"{Path(path).stem}_quarter_turns.urdf"
    copy.write_text(text, encoding="utf-8")
    return str(copy), changed


def regressor_peer(tc, flags=FLAGS) -> Path:
    """Pinocchio's regressor (templates/bench/regressor_peer.cpp.j2) compiled with flags
    by tc (a codegen.bench.in_c.Toolchain), from the cache or compiled into it."""
    return cached_cxx_object(tc, flags, render_bench("regressor_peer.cpp.j2"),
                             render_bench("regressor_peer.h.j2"), "regressor_peer.h",
                             "regressor_peer", "compiling Pinocchio's regressor")


def in_c(reg, model, urdf: str, floating: bool, states, folder: Path, calls: int = 20000,
         rounds: int = 11, flags=FLAGS, timeout: float = 600.0, perturb: float = 0.0) -> dict:
    """reg's regressor against Pinocchio's on urdf (the mapped one: pinocchio_urdf) per
    call in C (module docstring) at states [(x, u')]: {"c_agreement", "c_ours", "c_pin",
    "c_ours_nonzeros"} (seconds), {"c_agreement"} alone where they differ by more than
    TOLERANCE, or {"c_failed": why}; perturb: added to our coordinates only (the check
    must then refuse to time). Raises codegen.bench.in_c.Unavailable where the toolchain
    is missing."""
    tc = toolchain()
    peer = regressor_peer(tc, flags)
    name = "bench_id"
    export = Path(reg.export_c(name, folder)[f"{name}_regressor.c"]).parent
    bench = export / "bench"
    bench.mkdir(exist_ok=True)
    (bench / "regressor_peer.h").write_text(render_bench("regressor_peer.h.j2"))
    (bench / "driver.c").write_text(render_bench("regressor_driver.c.j2", name=name,
                                                 tolerance=repr(TOLERANCE)))
    shutil.copyfile(export / f"{name}_regressor.c", bench / f"{name}_regressor.c")
    try:
        objects = compile_c(tc, [bench / "driver.c", bench / f"{name}_regressor.c"],
                            [export, bench], bench, flags)
        exe = bench / "regressor_bench"
        run_step([tc.cxx, *flags, *map(str, objects), str(peer), f"-L{tc.libdir}",
                  f"-Wl,-rpath,{tc.libdir}", *PINOCCHIO_LIBS, "-lm", "-o", str(exe)], bench,
                 "linking the regressor's driver")
    except RuntimeError as exc:
        return {"c_failed": str(exc)}
    rows = [f"{len(states)} {reg.nx} {reg.n} {len(model.to_pinocchio(states[0][0])[0])} {reg.n}"]
    for x, ud in states:
        q, v = model.to_pinocchio(x)
        ours = np.array(x, dtype=float)
        ours[:len(model.q_ind)] += perturb
        rows.append(" ".join(repr(float(a)) for part in (ours, ud, q, v) for a in part))
    (bench / "samples.txt").write_text("\n".join(rows) + "\n")
    try:
        proc = subprocess.run([str(exe), urdf, str(int(floating)), "samples.txt", str(calls),
                               str(rounds)], cwd=bench, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"c_failed": f"the driver ran over {timeout:.0f} s"}
    if proc.returncode != 0:
        return {"c_failed": (proc.stderr.strip().splitlines() or ["the driver failed"])[-1]}
    out = json.loads(proc.stdout)
    return {"c_" + ("agreement" if k == "error" else k): v for k, v in out.items()}


def _per_call(f, args, calls: int) -> float:
    """Seconds per call of f over calls calls, cycling through args."""
    k = len(args)
    t0 = time.perf_counter()
    for i in range(calls):
        f(*args[i % k])
    return (time.perf_counter() - t0) / calls


def draw(reg, floating: bool, samples: int, seed: int = 0) -> list:
    """samples random states [(x, u')]: coordinates, speeds and rates in ±2, a floating
    base's quaternion (q[3:7], x y z w as Pinocchio has it) made a unit one."""
    rng = np.random.default_rng(seed)
    states = [(rng.uniform(-2, 2, reg.nx), rng.uniform(-2, 2, reg.n)) for _ in range(samples)]
    if floating:
        for x, _ in states:
            x[3:7] /= np.linalg.norm(x[3:7])
    return states


def measure(name: str, shared: Path, output_dir: Path, calls: int = 2000, rounds: int = 7,
            samples: int = 16, seed: int = 0, c_calls: int = 0) -> dict:
    """One robot's figures (module docstring): times in seconds; "agreement" on the
    mapped URDF, "as_written" on the file itself, "snapped" the origins mapped (the copy
    is written to output_dir); c_calls > 0: also in C (``in_c``, c_calls calls a round),
    {"c_failed": why} where it cannot be built."""
    import pinocchio as pin
    path, floating, options = robot_path(name, shared)
    r = {"robot": name}
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    model = from_urdf(path, exact=True, **options)
    t1 = time.perf_counter()
    reg = regressor(model)
    t2 = time.perf_counter()
    r["rank"] = reg.rank
    t3 = time.perf_counter()
    mod = reg.generate(f"bench_id_{name}", output_dir=output_dir)
    t4 = time.perf_counter()
    r.update(load=t1 - t0, form=t2 - t1, exact=t3 - t2, build=t4 - t3,
             parameters=len(reg.parameters), nv=reg.n)
    mapped, r["snapped"] = pinocchio_urdf(path, output_dir)

    def load(urdf):
        pm = (pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer()) if floating
              else pin.buildModelFromUrdf(urdf))
        return pm, pm.createData()
    pm, pd = load(mapped)
    states = draw(reg, floating, samples, seed)
    r["as_written"] = difference(mod, model, *load(path), states)
    r["agreement"] = check_agreement(mod, model, pm, pd, states)
    ours = [(x, ud) for x, ud in states]
    Y = np.empty((reg.n, len(reg.parameters)))
    ours_out = [(x, ud, Y) for x, ud in states]
    theirs = [(pm, pd, *model.to_pinocchio(x), ud) for x, ud in states]
    a, b, c = [], [], []
    for k in range(rounds):
        # the side that goes first alternates, so neither gains from a warm cache alone
        if k % 2:
            b.append(_per_call(pin.computeJointTorqueRegressor, theirs, calls))
            a.append(_per_call(mod.regressor, ours, calls))
            c.append(_per_call(mod.regressor, ours_out, calls))
        else:
            a.append(_per_call(mod.regressor, ours, calls))
            c.append(_per_call(mod.regressor, ours_out, calls))
            b.append(_per_call(pin.computeJointTorqueRegressor, theirs, calls))
    X, UD = np.array([x for x, _ in states] * 64), np.array([u for _, u in states] * 64)
    batch = []
    for _ in range(rounds):
        t = time.perf_counter()
        mod.batch("regressor", X, UD)
        batch.append((time.perf_counter() - t) / len(X))
    r.update(ours=statistics.median(a), ours_out=statistics.median(c),
             pin=statistics.median(b), batch=statistics.median(batch))
    if c_calls > 0:
        try:
            with tempfile.TemporaryDirectory(dir=output_dir) as folder:
                r.update(in_c(reg, model, mapped, floating, states, Path(folder), c_calls,
                              max(rounds, 3)))
        except Unavailable as exc:
            r["c_failed"] = str(exc)
    return r


def _in_c_cells(r: dict) -> str:
    """The in-C columns of a robot's row: the agreement, our time, Pinocchio's, the
    ratio, and our time with Y's zeros kept (_nonzeros) with its ratio."""
    if "c_ours" in r:
        nz = r.get("c_ours_nonzeros")
        kept = f" {nz * 1e6:.3f} ({r['c_pin'] / nz:.2f}x) |" if nz else " |"
        return (f" {r['c_agreement']:.1e} | {r['c_ours'] * 1e6:.3f} | "
                f"{r['c_pin'] * 1e6:.3f} | {r['c_pin'] / r['c_ours']:.2f}x |" + kept)
    if "c_agreement" in r:
        return f" {r['c_agreement']:.1e}: not timed | | | | |"
    return f" {r.get('c_failed', 'not measured')} | | | | |"


def _as_written(r: dict) -> str:
    """The difference on the URDF as written, and how many origins the mapping changed."""
    if "as_written" not in r:
        return ""
    return f"{r['as_written']:.1e} ({r.get('snapped', 0)} rpy snapped)"


def table(results: list) -> str:
    """The Markdown table of measure's results (a failed robot: its reason); the in-C
    columns where any robot was measured in C. "agreement with Pinocchio" is on the
    mapped URDF, "on the file as written" on the file itself (module docstring)."""
    c = any(k.startswith("c_") for r in results for k in r)
    lines = ["| robot | π / base | forming Y [s] | exact base parameters [s] | generate + "
             "compile [s] | agreement with Pinocchio | on the file as written | "
             "Y per call [µs] | Y per call, out= [µs] | pin.computeJointTorqueRegressor [µs] | "
             "ratio | ratio, out= | Y per sample, batch [µs] |"
             + (" agreement in C | Y in C [µs] | Pinocchio in C [µs] | ratio in C | "
                "Y in C, its zeros kept [µs] (ratio) |" if c else ""),
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" * 5 if c else "")]
    for r in results:
        if "failed" in r:
            lines.append(f"| {r['robot']} | {r['failed']} |" + " |" * (16 if c else 11))
            continue
        lines.append(
            f"| {r['robot']} | {r['parameters']} / {r['rank']} | {r['form']:.2f} | "
            f"{r['exact']:.2f} | {r['build']:.1f} | {r['agreement']:.1e} | "
            f"{_as_written(r)} | "
            f"{r['ours'] * 1e6:.2f} | {r['ours_out'] * 1e6:.2f} | {r['pin'] * 1e6:.2f} | "
            f"{r['pin'] / r['ours']:.2f}x | {r['pin'] / r['ours_out']:.2f}x | "
            f"{r['batch'] * 1e6:.2f} |" + (_in_c_cells(r) if c else ""))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="+", default=list(ROBOTS), choices=list(ROBOTS))
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "robots"),
                    help="the folder of iiwa.urdf, hyq.urdf and atlas.urdf")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--in-c", action="store_true",
                    help="also per call in C, against Pinocchio's C++ (Pinocchio's side is "
                         "compiled once: about a minute of CPU)")
    ap.add_argument("--c-calls", type=int, default=20000, help="calls a round in C")
    ap.add_argument("--output-dir", default=None,
                    help="where the regressors are compiled (default: a temporary folder)")
    args = ap.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.output_dir or tmp)
        for name in args.robots:
            try:
                results.append(measure(name, Path(args.shared), out, args.calls, args.rounds,
                                       c_calls=args.c_calls if args.in_c else 0))
            except (FileNotFoundError, ImportError, Mismatch, ValueError) as exc:
                results.append({"robot": name, "failed": f"not measured: {exc}"})
    print("Regressor per call from Python, against Pinocchio's in the same process "
          "(medians; ratio = Pinocchio / ours); agreement: max |Y - Y_pin| / max(1, "
          "max |Y_pin|) over 16 states, Pinocchio on the URDF with exact=True's quarter "
          "turns (rpy within 1e-7 rad of k pi/2 written as k pi/2), beside it on the file "
          "as written" + ("; in C: both from one C driver at "
          + " ".join(FLAGS) if args.in_c else "") + "\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
