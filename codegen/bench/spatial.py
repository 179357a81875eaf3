"""3-D chains of rigid bodies: ours against Pinocchio's ABA on an equal model.

    python -m codegen.bench.spatial [--n 2 4] [--cap 600]

Model: codegen.examples.spatial_chain(n, speeds='rates'): n rigid bodies
with offset mass centres and full inertias, each turned from its parent by
body-fixed X-Y-Z angles, u = q', a torque T_i about each body's z axis,
gravity -z. For Pinocchio the same chain is three revolute joints per body
(X, Y, Z, with massless links between them; the body's inertia on the Z
joint); the torque pair T_i between body and parent is T_i sin(q_i2) on
the X joint and T_i on the Z joint. Its accelerations are compared with
ours (relative 1e-8) before times count. Per n: our formulation and
generate + compile times (default options) in a child process under --cap
seconds ("> cap" past it), RHS per call from Python (median of 7) for both.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

import numpy as np

_CHILD = r"""
import json, sys, tempfile, time
import numpy as np
from codegen import GibbsAppellMethod, generate
from codegen.bench import median_time
from codegen.bench.spatial import joint_torques, pinocchio_chain
from codegen.examples import spatial_chain
n = int(sys.argv[1])
t0 = time.perf_counter()
model = spatial_chain(n, speeds='rates')
ga = GibbsAppellMethod(**model.kwargs)
ga.mass_matrix
t1 = time.perf_counter()
mod = generate(ga, f"spatial{n}", output_dir=tempfile.mkdtemp())
t2 = time.perf_counter()
vals = model.parameter_values
p = mod.parameters(vals)
rng = np.random.default_rng(n)
x = rng.uniform(-1, 1, mod.nx)
r = rng.uniform(-1, 1, n)
ours = mod.rhs(0.0, x, p, r)[3 * n:]
out = dict(formulate=t1 - t0, generate=t2 - t1, ours=median_time(lambda: mod.rhs(0.0, x, p, r)))
try:
    pin, pm, data = pinocchio_chain(n, vals)
except ImportError:
    out["pinocchio"] = "not installed"
else:
    q, v = x[:3 * n], x[3 * n:]
    tau = joint_torques(q, r)
    a = pin.aba(pm, data, q, v, tau)
    diff = float(np.abs(a - ours).max() / np.abs(ours).max())
    out["pinocchio"] = (median_time(lambda: pin.aba(pm, data, q, v, tau)) if diff < 1e-8
                        else f"accelerations differ by {diff:.1e}: not timed")
print(json.dumps(out))
"""


def joint_torques(q, T):
    """The torque pair T_i about body i's z between it and its parent, as the torques of
    its joints X, Y, Z: T_i (z . x_parent) = T_i sin(q_i2) on X, 0 on Y (z is normal to
    it), T_i on Z."""
    tau = np.zeros(len(q))
    tau[0::3] = T * np.sin(q[1::3])
    tau[2::3] = T
    return tau


def pinocchio_chain(n: int, vals: dict):
    """The chain for Pinocchio: per body three revolute joints X, Y, Z at the body's
    joint point (massless links between), the body's inertia on the last."""
    import pinocchio as pin
    pm = pin.Model()
    pm.gravity.linear = np.array([0.0, 0.0, -vals["g"]])
    parent, place = 0, pin.SE3.Identity()
    for i in range(1, n + 1):
        a, b, c = (vals[f"{k}{i}"] for k in "abc")
        for axis, joint in (("x", pin.JointModelRX()), ("y", pin.JointModelRY()),
                            ("z", pin.JointModelRZ())):
            parent = pm.addJoint(parent, joint, place, f"j{i}{axis}")
            if axis != "z":
                pm.appendBodyToJoint(parent, pin.Inertia.Zero(), pin.SE3.Identity())
            place = pin.SE3.Identity()
        I = np.array([[vals[f"I{i}xx"], vals[f"I{i}xy"], vals[f"I{i}zx"]],
                      [vals[f"I{i}xy"], vals[f"I{i}yy"], vals[f"I{i}yz"]],
                      [vals[f"I{i}zx"], vals[f"I{i}yz"], vals[f"I{i}zz"]]])
        pm.appendBodyToJoint(parent, pin.Inertia(vals[f"m{i}"], np.array([a, b, c]), I),
                             pin.SE3.Identity())
        place = pin.SE3(np.eye(3), np.array([3 * a, b, c]))    # the next joint: C + 2a x
    return pin, pm, pm.createData()


def measure(n: int, cap: float) -> dict:
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD, str(n)], capture_output=True,
                              text=True, timeout=cap)
    except subprocess.TimeoutExpired:
        return {"error": f"> cap ({cap:.0f} s)"}
    if proc.returncode:
        return {"error": proc.stderr.strip().splitlines()[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--cap", type=float, default=600.0)
    args = ap.parse_args(argv)
    print("spatial_chain(n, speeds='rates') against pinocchio.aba on the equal chain "
          "(RHS per call from Python [µs], ratio = Pinocchio / ours)\n")
    print("| n | DoF | ours formulate [s] | ours generate + compile [s] | ours RHS | "
          "pinocchio.aba | ratio |")
    print("|---|---|---|---|---|---|---|")
    for n in args.n:
        r = measure(n, args.cap)
        if "error" in r:
            print(f"| {n} | {3 * n} | {r['error']} | | | | |", flush=True)
            continue
        pin = r["pinocchio"]
        cells = (f"{pin * 1e6:.2f} | {pin / r['ours']:.1f}x" if isinstance(pin, float)
                 else f"{pin} | –")
        print(f"| {n} | {3 * n} | {r['formulate']:.2f} | {r['generate']:.2f} | "
              f"{r['ours'] * 1e6:.2f} | {cells} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
