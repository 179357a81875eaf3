"""Compiled RHS, side by side: this project, PyDy (Cython), SymPy lambdify, Pinocchio.

    python -m codegen.bench.rhs [--n 1 2 4 8 12 20] [--tools ours pydy lambdify pinocchio]

Model: the n-link pendulum on a cart (codegen.examples.n_pendulum_on_cart),
built for Pinocchio as a prismatic cart joint and n revolute joints with
point masses at the link ends (relative angles, converted to and from the
absolute angles of the SymPy model). For every tool and n, one fresh
interpreter measures

- formulation: GibbsAppellMethod (ours) or KanesMethod (PyDy, lambdify);
- generation + compilation: codegen.generate (forced, no cache; "fused":
  with the runtime compiled into the model, Options(fused=True)) or PyDy's
  generate_ode_function(generator='cython') or lambdify(cse=True);
- RHS per call from Python, at one state, median of 7 repeats after a
  warm-up call (min and max recorded): ours with out=,
  PyDy's rhs(x, t, r, p), lambdify + numpy.linalg.solve, pinocchio.aba;
- operation count after CSE (codegen.symbolic.counting.operation_count for both): ours
  from the program, PyDy's from its own sympy.cse call on the same matrices
  (measured outside the timed region).

Every tool's accelerations are compared with ours at the same state
(relative 1e-8) before its time is reported: a disagreeing tool is reported
as such, not timed.
"""
from __future__ import annotations

import argparse
import json
import sys
import textwrap

from . import CAPPED, child

_CHILD = textwrap.dedent(r"""
import json, sys, tempfile, time, timeit
import numpy as np
import sympy as sm
import sympy.physics.mechanics as me
from codegen.examples import n_pendulum_on_cart

from codegen import examples as EX
tool, spec = sys.argv[1], sys.argv[2]
name, _, arg = spec.partition(":")
builder = EX.EXAMPLES[name]
model = builder(int(arg)) if arg else builder()
n = int(arg) if arg else 0
consts = sorted(model.constants, key=str)
vals = model.parameter_values
p = np.array([vals[str(c)] for c in consts])
rng = np.random.default_rng(7)
nq = len(model.q_ind) + len(model.q_dependent)
x = np.array(model.initial_state, dtype=float) if model.initial_state else np.full(2 * nq, 0.3)
x = x + 0.05 * rng.uniform(-1, 1, len(x))
if name == "pendulum":
    rng = np.random.default_rng(n)
    x = np.concatenate([[0.1], rng.uniform(-1, 1, n), [0.2], rng.uniform(-1, 1, n)])
r = np.full(len(model.specifieds), 0.3)
res = {}
if tool in ("pinocchio", "mujoco") and name != "pendulum":
    print(json.dumps({"error": "not applicable"}))
    sys.exit(0)

def best(f, number):
    # median time per call over 7 repeats after a warm-up; min and max kept in res
    f()
    times = sorted(t / number for t in timeit.repeat(f, number=number, repeat=7))
    res["call_min"], res["call_max"] = times[0], times[-1]
    return times[len(times) // 2]

if tool in ("ours", "fused"):
    from codegen import GibbsAppellMethod, generate
    t0 = time.perf_counter(); ga = GibbsAppellMethod(**model.kwargs); ga.kanes_equations()
    res["formulate"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    mod = generate(ga, f"bench_{name}{n}", output_dir=tempfile.mkdtemp(), force=True,
                   constants=consts, fused=tool == "fused")
    res["generate"] = time.perf_counter() - t0
    assert mod.constants == [str(c) for c in consts]
    out = np.empty(len(x))
    rhs = mod.rhs
    rr = r if len(r) else None
    res["call"] = best(lambda: rhs(0.0, x, p, rr, out), 20000)
    res["ops"] = mod.operation_count
    res["xdot"] = mod.rhs(0.0, x, p, rr).tolist()
    t0 = time.perf_counter()
    sim = mod.simulate((0, 2.0), x, p, rr, method="rk4", dt=1e-3, t_eval=[2.0])
    res["rk4_steps_per_s"] = sim.nsteps / (time.perf_counter() - t0)
elif tool == "symengine":
    import symengine as se
    t0 = time.perf_counter()
    km = me.KanesMethod(**model.kwargs); km.kanes_equations(model.bodies, model.loads)
    M, F = km.mass_matrix, km.forcing
    kd = km.kindiffdict(); G = sm.Matrix([kd[q.diff()] for q in model.q_ind])
    res["formulate"] = time.perf_counter() - t0
    states = model.q_ind + model.u_ind
    plain = {s_: sm.Symbol(f"_x{i}") for i, s_ in enumerate(states + list(model.specifieds))}
    args = [plain[s_] for s_ in states] + consts + [plain[s_] for s_ in model.specifieds]
    exprs = [e.xreplace(plain) for e in list(M) + list(F) + list(G)]
    t0 = time.perf_counter()
    f = se.Lambdify(args, exprs, backend="llvm", cse=True)
    res["generate"] = time.perf_counter() - t0
    nu, nqk = M.shape[0], len(model.q_ind)
    inp = np.concatenate([x, p, r])
    def fs():
        v = f(inp)
        ud = np.linalg.solve(v[:nu * nu].reshape(nu, nu), v[nu * nu:nu * nu + nu])
        return np.concatenate([v[nu * nu + nu:], ud])
    res["call"] = best(fs, 5000)
    res["xdot"] = fs().tolist()
elif tool == "mujoco":
    import mujoco
    from mujoco import rollout
    from codegen.bench.simulate import from_relative, mj_state, mjcf
    m = mujoco.MjModel.from_xml_string(mjcf(n, vals, 1e-3))
    d = mujoco.MjData(m)
    s0 = mj_state(m, d, x)
    d.ctrl[:] = r
    res["call"] = best(lambda: mujoco.mj_forward(m, d), 20000)
    mujoco.mj_forward(m, d)
    res["xdot"] = np.concatenate([x[n + 1:], from_relative(d.qacc)]).tolist()
    ctrl = np.full((1, 2000, 1), r[0])
    t0 = time.perf_counter(); rollout.rollout(m, d, s0[None], ctrl)
    res["rk4_steps_per_s"] = 2000 / (time.perf_counter() - t0)
elif tool in ("pydy", "lambdify"):
    t0 = time.perf_counter()
    km = me.KanesMethod(**model.kwargs); km.kanes_equations(model.bodies, model.loads)
    M, F = km.mass_matrix, km.forcing
    kd = km.kindiffdict(); G = sm.Matrix([kd[q.diff()] for q in model.q_ind])
    res["formulate"] = time.perf_counter() - t0
    if tool == "pydy":
        from pydy.codegen.ode_function_generators import generate_ode_function
        t0 = time.perf_counter()
        kw = dict(specifieds=model.specifieds, specifieds_arg_type="array") if model.specifieds else {}
        f = generate_ode_function(F, model.q_ind, model.u_ind, consts, mass_matrix=M,
                                  coordinate_derivatives=G, generator="cython",
                                  constants_arg_type="array", **kw)
        res["generate"] = time.perf_counter() - t0
        call = (lambda: f(x, 0.0, r, p)) if model.specifieds else (lambda: f(x, 0.0, p))
        res["call"] = best(call, 5000)
        res["xdot"] = np.asarray(call()).tolist()
        if sys.argv[3:] != ["noops"]:       # sympy.cse of large models takes long
            subs, red = sm.cse(list(M) + list(F) + list(G))
            from codegen.symbolic.counting import operation_count
            res["ops"] = operation_count([e for _, e in subs] + red)
    else:
        states = model.q_ind + model.u_ind
        args = [states, consts, model.specifieds]
        t0 = time.perf_counter()
        fM = sm.lambdify(args, M, "numpy", cse=True)
        fF = sm.lambdify(args, F, "numpy", cse=True)
        fG = sm.lambdify(args, G, "numpy", cse=True)
        res["generate"] = time.perf_counter() - t0
        nq = len(model.q_ind)
        def f():
            ud = np.linalg.solve(fM(x, p, r), fF(x, p, r).ravel())
            return np.concatenate([np.asarray(fG(x, p, r), dtype=float).ravel(), ud])
        res["call"] = best(f, 2000)
        res["xdot"] = f().tolist()
elif tool == "pinocchio":
    import pinocchio as pin
    t0 = time.perf_counter()
    pm = pin.Model()
    pm.gravity.linear = np.array([0.0, -vals["g"], 0.0])
    mass = [vals[f"m{i}"] for i in range(n + 1)]
    length = [vals[f"l{i}"] for i in range(1, n + 1)]
    jid = pm.addJoint(0, pin.JointModelPX(), pin.SE3.Identity(), "cart")
    pm.appendBodyToJoint(jid, pin.Inertia(mass[0], np.zeros(3), np.zeros((3, 3))), pin.SE3.Identity())
    for i in range(1, n + 1):
        place = pin.SE3(np.eye(3), np.array([length[i - 2] if i > 1 else 0.0, 0.0, 0.0]))
        jid = pm.addJoint(jid, pin.JointModelRZ(), place, f"link{i}")
        pm.appendBodyToJoint(jid, pin.Inertia(mass[i], np.array([length[i - 1], 0.0, 0.0]),
                                              np.zeros((3, 3))), pin.SE3.Identity())
    data = pm.createData()
    res["generate"] = time.perf_counter() - t0
    from codegen.bench.simulate import from_relative, to_relative
    q, v = to_relative(x, n)     # absolute angles (ours) -> relative joint angles
    tau = np.zeros(n + 1); tau[0] = r[0]
    res["call"] = best(lambda: pin.aba(pm, data, q, v, tau), 20000)
    a = np.array(pin.aba(pm, data, q, v, tau))
    res["xdot"] = np.concatenate([x[n + 1:], from_relative(a)]).tolist()
print(json.dumps(res))
""")

TOOLS = ("ours", "pydy", "lambdify", "pinocchio")
ALL_TOOLS = ("ours", "fused", "pydy", "lambdify", "symengine", "pinocchio", "mujoco")


def run(tool: str, spec, timeout: float = 1800, ops: bool = True) -> dict:
    """One tool on one model ('pendulum:n', 'rolling_disk', 'chain:n', or an int n) in a
    fresh interpreter, stopped after timeout seconds ({"error": "> timeout s", "capped":
    True}); ops: PyDy's operation count too (a sympy.cse of its matrices)."""
    spec = f"pendulum:{spec}" if isinstance(spec, int) else spec
    line, why = child([_CHILD, tool, spec] + ([] if ops else ["noops"]), timeout)
    if why == CAPPED:
        return {"error": f"> {timeout:g} s", "capped": True}
    return {"error": why} if why else json.loads(line)


def disagreement(xdot, ref) -> str | None:
    """Why a tool's x' is not ours, ref (1e-8 relative to ref's largest entry, or 1), or
    None: then its time counts."""
    import numpy as np
    diff = float(np.abs(np.asarray(xdot) - np.asarray(ref)).max())
    if diff <= 1e-8 * max(float(np.abs(ref).max()), 1.0):
        return None
    return f"accelerations disagree with ours by {diff:.2e}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1, 2, 4, 8, 12, 20])
    ap.add_argument("--tools", nargs="+", default=list(TOOLS), choices=TOOLS)
    ap.add_argument("--json", help="also write the raw results here")
    args = ap.parse_args(argv)
    tools = ["ours"] + [t for t in args.tools if t != "ours"]
    rows, raw = [], {}
    for n in args.n:
        res = {t: run(t, n) for t in tools}
        raw[n] = res
        for t in tools[1:]:
            why = disagreement(res[t]["xdot"], res["ours"]["xdot"]) if "xdot" in res[t] else None
            if why:
                res[t] = {"error": why}
        rows.append((n, res))
        print(f"n = {n}: " + ", ".join(f"{t} {res[t].get('call', float('nan')) * 1e6:.2f} us"
                                       for t in tools), file=sys.stderr, flush=True)

    def cell(r, key, scale=1.0, fmt="{:.2f}"):
        return r["error"] if "error" in r else (fmt.format(r[key] * scale) if key in r else "–")

    print("RHS per call from Python [µs] (ratio = peer / ours)\n")
    print("| n | " + " | ".join(tools) + " |")
    print("|---" * (len(tools) + 1) + "|")
    for n, res in rows:
        ours = res["ours"]["call"]
        cells = [cell(res["ours"], "call", 1e6)]
        for t in tools[1:]:
            c = cell(res[t], "call", 1e6)
            if "call" in res[t]:
                c += f" ({res[t]['call'] / ours:.1f}x)"
            cells.append(c)
        print(f"| {n} | " + " | ".join(cells) + " |")
    gen_tools = [t for t in tools if t != "pinocchio"]
    print("\nFormulation + generation/compilation [s] (ratio = peer / ours)\n")
    print("| n | " + " | ".join(f"{t} formulate | {t} generate" for t in gen_tools) + " |")
    print("|---" * (2 * len(gen_tools) + 1) + "|")
    for n, res in rows:
        cells = []
        for t in gen_tools:
            r = res[t]
            f = cell(r, "formulate")
            g = cell(r, "generate")
            if t != "ours" and "generate" in r:
                g += f" ({r['generate'] / res['ours']['generate']:.1f}x)"
            cells += [f, g]
        print(f"| {n} | " + " | ".join(cells) + " |")
    print("\nOperation count after CSE\n")
    print("| n | ours | pydy (sympy.cse) |")
    print("|---|---|---|")
    for n, res in rows:
        print(f"| {n} | {res['ours'].get('ops', '–')} | {res.get('pydy', {}).get('ops', '–')} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(raw, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
