"""3-D rigid-body trees: ours against Pinocchio's ABA on an equal model, and KanesMethod.

    python -m codegen.bench.spatial [--models chain:2 chain:4 humanoid] [--cap 600]
                                    [--kane-cap 120]

Models:
- ``chain:n``: codegen.examples.spatial_chain(n, speeds='rates'): n rigid
  bodies with offset mass centres and full inertias, each turned from its
  parent by body-fixed X-Y-Z angles, u = q', a torque T_i about each body's
  z axis, gravity -z. For Pinocchio each body is three revolute joints X,
  Y, Z (massless links between them, the body's inertia on the Z joint);
  the torque pair T_i is T_i sin(q_i2) on the X joint and T_i on the Z joint.
- ``humanoid``: codegen.examples.humanoid(), 12 bodies and 20 speeds on a
  fixed torso; for Pinocchio a hip or shoulder is three revolute joints,
  a hinge one, each hinge's torque on its joint.

Pinocchio's accelerations are compared with ours (relative 1e-8) before
times count. Per model, in a child process under --cap seconds ("> cap"
past it): our formulation (``equations_of``) and formulation + generate +
compile (default options, a fresh cache), RHS per call from Python (median
of 7) for both; and, in another child under --kane-cap seconds,
KanesMethod's ``kanes_equations`` on the same description.
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np
from . import CAPPED, child

_CHILD = r"""
import json, sys, tempfile, time
import numpy as np
from codegen import GibbsAppellMethod, generate
from codegen.bench import median_time
from codegen.bench.spatial import load
from codegen import equations_of
spec = sys.argv[1]
model = load(spec)
t0 = time.perf_counter()
equations_of(GibbsAppellMethod(**model.kwargs))
t1 = time.perf_counter()
mod = generate(GibbsAppellMethod(**model.kwargs), spec.replace(":", ""),
               output_dir=tempfile.mkdtemp(), constants=model.constants,
               specifieds=model.specifieds)
t2 = time.perf_counter()
vals = model.parameter_values
p = mod.parameters(vals)
rng = np.random.default_rng(len(model.q_ind))
x = rng.uniform(-1, 1, mod.nx)
r = rng.uniform(-1, 1, len(model.specifieds))
nq = len(model.q_ind)
ours = mod.rhs(0.0, x, p, r)[nq:]
out = dict(formulate=t1 - t0, generate=t2 - t0, dof=nq,
           ours=median_time(lambda: mod.rhs(0.0, x, p, r)))
try:
    pin, pm, data, tau = load(spec, pinocchio=True, q=x[:nq], r=r)
except ImportError:
    out["pinocchio"] = "not installed"
else:
    q, v = x[:nq], x[nq:]
    a = pin.aba(pm, data, q, v, tau)
    diff = float(np.abs(a - ours).max() / np.abs(ours).max())
    out["pinocchio"] = (median_time(lambda: pin.aba(pm, data, q, v, tau)) if diff < 1e-8
                        else f"accelerations differ by {diff:.1e}: not timed")
print(json.dumps(out))
"""

_KANE = r"""
import sys, time
from sympy.physics.mechanics import KanesMethod
from codegen.bench.spatial import load
model = load(sys.argv[1])
t0 = time.perf_counter()
KanesMethod(model.frame, model.q_ind, model.u_ind, kd_eqs=model.kd_eqs).kanes_equations(
    model.bodies, model.loads)
print(time.perf_counter() - t0)
"""


def load(spec: str, pinocchio: bool = False, q=None, r=None):
    """The model of spec ('chain:n' or 'humanoid'); with pinocchio=True Pinocchio's equal
    model instead, as (pin, model, data, joint torques at q for the inputs r)."""
    from codegen import examples
    if spec == "humanoid":
        if not pinocchio:
            return examples.humanoid()
        pin, pm, data, hinges = pinocchio_humanoid(examples.humanoid().parameter_values)
        tau = np.zeros(len(q))
        tau[hinges] = r
        return pin, pm, data, tau
    kind, _, n = spec.partition(":")
    if kind != "chain" or not n.isdigit():
        raise ValueError(f"unknown model {spec!r}: chain:<n> or humanoid")
    model = examples.spatial_chain(int(n), speeds='rates')
    if not pinocchio:
        return model
    pin, pm, data = pinocchio_chain(int(n), model.parameter_values)
    return pin, pm, data, joint_torques(q, r)


def joint_torques(q, T):
    """The torque pair T_i about body i's z between it and its parent, as the torques of
    its joints X, Y, Z: T_i (z . x_parent) = T_i sin(q_i2) on X, 0 on Y (z is normal to
    it), T_i on Z."""
    tau = np.zeros(len(q))
    tau[0::3] = T * np.sin(q[1::3])
    tau[2::3] = T
    return tau


def _add_body(pin, pm, parent: int, place, kind: str, name: str, value) -> tuple:
    """One body on revolute joints about the parent's axes in kind ('xyz': three, massless
    links between them), its inertia on the last; value(k) its m, a, b, c (mass-centre
    offset from the joint) and Ixx ... Izx. Returns (the last joint, the offset)."""
    revolute = {"x": pin.JointModelRX, "y": pin.JointModelRY, "z": pin.JointModelRZ}
    for axis in kind:
        parent = pm.addJoint(parent, revolute[axis](), place, f"{name}_{axis}")
        place = pin.SE3.Identity()
        if axis != kind[-1]:
            pm.appendBodyToJoint(parent, pin.Inertia.Zero(), pin.SE3.Identity())
    I = np.array([[value("Ixx"), value("Ixy"), value("Izx")],
                  [value("Ixy"), value("Iyy"), value("Iyz")],
                  [value("Izx"), value("Iyz"), value("Izz")]])
    offset = np.array([value("a"), value("b"), value("c")])
    pm.appendBodyToJoint(parent, pin.Inertia(value("m"), offset, I), pin.SE3.Identity())
    return parent, offset


def pinocchio_chain(n: int, vals: dict):
    """The chain for Pinocchio: per body three revolute joints X, Y, Z at the body's
    joint point (massless links between), the body's inertia on the last."""
    import pinocchio as pin
    pm = pin.Model()
    pm.gravity.linear = np.array([0.0, 0.0, -vals["g"]])
    parent, place = 0, pin.SE3.Identity()
    for i in range(1, n + 1):
        parent, (a, b, c) = _add_body(
            pin, pm, parent, place, "xyz", f"j{i}",
            lambda k: vals[f"I{i}{k[1:]}" if k[0] == "I" else f"{k}{i}"])
        place = pin.SE3(np.eye(3), np.array([3 * a, b, c]))    # the next joint: C + 2a x
    return pin, pm, pm.createData()


def pinocchio_humanoid(vals: dict):
    """examples.humanoid for Pinocchio: a hip or shoulder as revolute joints X, Y, Z
    (massless links between), a hinge as one revolute joint; returns (pin, model, data,
    hinges), hinges the joint indices in v of the hinges' torques, in the order of the
    model's specifieds."""
    import pinocchio as pin
    from codegen.examples import HUMANOID_LIMBS
    pm = pin.Model()
    pm.gravity.linear = np.array([0.0, 0.0, -vals["g"]])
    hinges = []
    for limb, at, segments in HUMANOID_LIMBS:
        parent, place = 0, pin.SE3(np.eye(3), np.array(at, dtype=float))
        for name, kind in segments:
            tag = f"{limb}_{name}"
            parent, offset = _add_body(pin, pm, parent, place, kind, tag,
                                       lambda k: vals[f"{tag}_{k}"])
            if kind != "xyz":
                hinges.append(pm.joints[parent].idx_v)
            place = pin.SE3(np.eye(3), 2 * offset)           # the next joint: C + offset
    return pin, pm, pm.createData(), hinges


def _child(script: str, spec: str, cap: float):
    """(stdout's last line, None) of the script run on spec, or (None, why not)."""
    line, why = child([script, spec], cap)
    return line, (f"> cap ({cap:.0f} s)" if why == CAPPED else why)


def measure(spec: str, cap: float, kane_cap: float = 0.0) -> dict:
    """Our and Pinocchio's figures for one model; KanesMethod's time if kane_cap > 0."""
    line, error = _child(_CHILD, spec, cap)
    out = {"error": error} if error else json.loads(line)
    if kane_cap > 0:
        line, error = _child(_KANE, spec, kane_cap)
        out["kane"] = error or float(line)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["chain:2", "chain:4", "humanoid"])
    ap.add_argument("--cap", type=float, default=600.0)
    ap.add_argument("--kane-cap", type=float, default=120.0,
                    help="seconds for KanesMethod per model (0: not run)")
    args = ap.parse_args(argv)
    print("3-D rigid-body trees against pinocchio.aba on the equal model (RHS per call from "
          "Python [µs], ratio = Pinocchio / ours); formulation times [s], ours and "
          "KanesMethod's kanes_equations\n")
    print("| model | DoF | ours: formulate | ours: formulate + generate + compile | "
          "KanesMethod | ours RHS | pinocchio.aba | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for spec in args.models:
        r = measure(spec, args.cap, args.kane_cap)
        kane = r.get("kane", "not run")
        kane = f"{kane:.2f}" if isinstance(kane, float) else kane
        if "error" in r:
            print(f"| {spec} | | {r['error']} | | {kane} | | | |", flush=True)
            continue
        pin = r["pinocchio"]
        cells = (f"{pin * 1e6:.2f} | {pin / r['ours']:.1f}x" if isinstance(pin, float)
                 else f"{pin} | –")
        print(f"| {spec} | {r['dof']} | {r['formulate']:.2f} | {r['generate']:.2f} | {kane} | "
              f"{r['ours'] * 1e6:.2f} | {cells} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
