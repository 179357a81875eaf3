"""The identification's regressor per call against Pinocchio's, and the exact base
parameters' time.

    python -m codegen.bench.identification [--robots iiwa ur5 hyq] [--shared ../shared/robots]
                                           [--calls 2000] [--rounds 7] [--output-dir DIR]

For each robot (codegen.bench.robots.robot_path: the iiwa and HyQ of the rigid-body
dynamics benchmark, the UR5 of example-robot-data), loaded with ``from_urdf(path,
exact=True)`` (codegen.identification needs exact numbers for its base parameters):

- the times of forming Y, of the exact base parameters (``reg.rank``: rational states,
  elimination modulo primes) and of generating and compiling Y and Y_b;
- per call from Python, ``mod.regressor(x, u')`` (codegen.identification.compiled)
  against ``pinocchio.computeJointTorqueRegressor(model, data, q, v, a)`` at the same
  states, after both are checked equal (relative 1e-9) at every one of them: a robot
  whose regressors differ is reported with the difference and not timed;
- per sample in a batch (``mod.batch``, one call for all the samples).

Times are medians over rounds of ``calls`` calls a side, the sides alternating which goes
first. The table is Markdown.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..identification import regressor
from ..robots import from_urdf
from .robots import robot_path

__all__ = ["Mismatch", "check_agreement", "measure", "main", "ROBOTS", "TOLERANCE"]

ROOT = Path(__file__).resolve().parents[2]
ROBOTS = ("iiwa", "ur5", "hyq")
#: relative agreement with Pinocchio's regressor that must hold before times count
TOLERANCE = 1e-9


class Mismatch(AssertionError):
    """Our regressor and Pinocchio's differ at a state: nothing is timed."""


def check_agreement(mod, model, pm, pd, states) -> float:
    """The largest relative difference max|Y − Y_pin| / max(1, max|Y_pin|) over states
    [(x, u')]; Mismatch above TOLERANCE."""
    import pinocchio as pin
    worst = 0.0
    for x, ud in states:
        q, v = model.to_pinocchio(x)
        Yp = pin.computeJointTorqueRegressor(pm, pd, q, v, ud)
        Y = mod.regressor(x, ud)
        if Y.shape != Yp.shape:
            raise Mismatch(f"Y is {Y.shape}, Pinocchio's {Yp.shape}")
        worst = max(worst, float(np.abs(Y - Yp).max() / max(1.0, np.abs(Yp).max())))
        if worst > TOLERANCE:
            raise Mismatch(f"Y differs from pin.computeJointTorqueRegressor by {worst:.1e} "
                           f"(relative) at x = {list(x)}")
    return worst


def _per_call(f, args, calls: int) -> float:
    """Seconds per call of f over calls calls, cycling through args."""
    k = len(args)
    t0 = time.perf_counter()
    for i in range(calls):
        f(*args[i % k])
    return (time.perf_counter() - t0) / calls


def measure(name: str, shared: Path, output_dir: Path, calls: int = 2000, rounds: int = 7,
            samples: int = 16, seed: int = 0) -> dict:
    """One robot's figures (module docstring): times in seconds."""
    import pinocchio as pin
    path, floating, options = robot_path(name, shared)
    if floating:
        raise ValueError(f"{name} has a floating base: Pinocchio's regressor takes its "
                         f"configuration as a quaternion, which this benchmark does not map")
    r = {"robot": name}
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
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    rng = np.random.default_rng(seed)
    states = [(rng.uniform(-2, 2, reg.nx), rng.uniform(-2, 2, reg.n)) for _ in range(samples)]
    r["agreement"] = check_agreement(mod, model, pm, pd, states)
    ours = [(x, ud) for x, ud in states]
    theirs = [(pm, pd, *model.to_pinocchio(x), ud) for x, ud in states]
    a, b = [], []
    for k in range(rounds):
        # the side that goes first alternates, so neither gains from a warm cache alone
        if k % 2:
            b.append(_per_call(pin.computeJointTorqueRegressor, theirs, calls))
            a.append(_per_call(mod.regressor, ours, calls))
        else:
            a.append(_per_call(mod.regressor, ours, calls))
            b.append(_per_call(pin.computeJointTorqueRegressor, theirs, calls))
    X, UD = np.array([x for x, _ in states] * 64), np.array([u for _, u in states] * 64)
    batch = []
    for _ in range(rounds):
        t = time.perf_counter()
        mod.batch("regressor", X, UD)
        batch.append((time.perf_counter() - t) / len(X))
    r.update(ours=statistics.median(a), pin=statistics.median(b),
             batch=statistics.median(batch))
    return r


def table(results: list) -> str:
    """The Markdown table of measure's results (a failed robot: its reason)."""
    lines = ["| robot | π / base | forming Y [s] | exact base parameters [s] | generate + "
             "compile [s] | agreement with Pinocchio | Y per call [µs] | "
             "pin.computeJointTorqueRegressor [µs] | ratio | Y per sample, batch [µs] |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "failed" in r:
            lines.append(f"| {r['robot']} | {r['failed']} |" + " |" * 8)
            continue
        lines.append(
            f"| {r['robot']} | {r['parameters']} / {r['rank']} | {r['form']:.2f} | "
            f"{r['exact']:.2f} | {r['build']:.1f} | {r['agreement']:.1e} | "
            f"{r['ours'] * 1e6:.2f} | {r['pin'] * 1e6:.2f} | {r['pin'] / r['ours']:.2f}x | "
            f"{r['batch'] * 1e6:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="+", default=list(ROBOTS), choices=list(ROBOTS))
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "robots"),
                    help="the folder of iiwa.urdf and hyq.urdf")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--output-dir", default=None,
                    help="where the regressors are compiled (default: a temporary folder)")
    args = ap.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.output_dir or tmp)
        for name in args.robots:
            try:
                results.append(measure(name, Path(args.shared), out, args.calls, args.rounds))
            except (FileNotFoundError, ImportError, Mismatch, ValueError) as exc:
                results.append({"robot": name, "failed": f"not measured: {exc}"})
    print("Regressor per call from Python, against Pinocchio's in the same process "
          "(medians; ratio = Pinocchio / ours)\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
