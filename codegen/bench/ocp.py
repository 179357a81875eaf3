"""Optimal control with the compiled dynamics in CasADi, against the SX routes users have today.

The problems (``examples.n_pendulum_on_cart(n)``: angles from N.x, gravity along −N.y, so
hanging is qᵢ = −π/2 and upright +π/2; the iiwa from codegen.robots.IIWA_URDF):

- ``swingup``: the double pendulum on a cart, from hanging to upright in 3 s;
- ``move``: the four-link pendulum on a cart, the cart moved by 1 m in 2 s, hanging at
  rest at both ends;
- ``iiwa``: the KUKA iiwa from rest to rest between two poses in 0.8 s, within its joint
  limits and its torque limits (the URDF's efforts).

All: N RK4 multiple-shooting intervals (one step each), min Σ h rₖᵀrₖ, IPOPT at tol 1e-8,
a straight-line initial guess with zero inputs. The same NLP is solved with the dynamics as

- ``external``: ``codegen.export.casadi.casadi_function``, exact second derivatives in C
  (the pendulums), called once per node;
- ``external_map``: the same, batched: one call into C per RK4 stage for all N nodes
  (``casadi_function(..., nodes=N)``);
- ``sx``: KanesMethod's M and F turned into an SX Function by ``lambdify``, u' by
  ``ca.solve``, called from the MX NLP (the pendulums); for the iiwa, adam-robotics'
  CasADi model of the same URDF (its mass matrix and bias force, u' by ``ca.solve``);
- ``sx_expand``: the same NLP with ``expand=True``;
- ``sx_c``: CasADi's own C code generation of the SX model (f, jac_f, adj1_f, jac_adj1_f,
  gcc -O2) loaded as an external, the same ABI as ``external``;
- ``sx_jit`` (``--jit``): the whole expanded NLP through CasADi's ``jit`` (gcc -O1). Its C
  is large: on the swing-up gcc took over 5 minutes and 3 GB, so it is opt-in;
- ``opty`` (the pendulums): opty's direct collocation of KanesMethod's equations
  (midpoint rule on the same nodes; ``pip install opty``, whose cyipopt needs IPOPT's
  headers: Debian's coinor-libipopt-dev). Its NLP is not the same discretization, so
  its optimum differs.

Each route with IPOPT's exact Hessian and with ``limited-memory``.

Run: ``python -m codegen.bench.ocp [--json out.json] [--repeats 3] [--problems ...]``;
it prints a Markdown table (docs/performance.md).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..robots.catalog import IIWA_URDF

__all__ = [
    "PROBLEMS",
    "Problem",
    "compiled_dynamics",
    "main",
    "run",
    "shooting_nlp",
    "solve",
    "solver",
    "sx_c",
    "sx_dynamics",
]

IIWA = Path(IIWA_URDF)


@dataclass
class Problem:
    """A rest-to-rest (or swing-up) OCP: x from x0 to xf in T seconds over N intervals,
    inputs within [lbu, ubu] and positions within [lbq, ubq] (None: free)."""
    model: str
    x0: list
    xf: list
    T: float
    N: int
    lbu: list = field(default_factory=list)
    ubu: list = field(default_factory=list)
    lbq: list | None = None
    ubq: list | None = None


def _cart(n: int, T: float, N: int, cart_end: float, angle_end: float) -> Problem:
    return Problem(f"cart{n}", [0.0] + [-np.pi / 2] * n + [0.0] * (n + 1),
                   [cart_end] + [angle_end] * n + [0.0] * (n + 1), T, N,
                   [-np.inf], [np.inf])


_QA = [0.0, 0.4, 0.0, -1.2, 0.0, 0.6, 0.0]
_QB = [1.6, 1.2, -0.8, -0.4, 0.8, 1.4, 1.2]
_IIWA_LIMITS = [2.96705972839, 2.09439510239, 2.96705972839, 2.09439510239,
                2.96705972839, 2.09439510239, 3.05432619099]

#: name -> the problem
PROBLEMS = {
    "swingup": _cart(2, 3.0, 60, 0.0, np.pi / 2),
    "move": _cart(4, 2.0, 40, 1.0, -np.pi / 2),
    "iiwa": Problem("iiwa", _QA + [0.0] * 7, _QB + [0.0] * 7, 0.8, 30, [-300.0] * 7,
                    [300.0] * 7, [-v for v in _IIWA_LIMITS], _IIWA_LIMITS),
}


def _formed(name: str):
    from .. import GibbsAppellMethod, examples
    if name == "iiwa":
        from ..robots import from_urdf
        model = from_urdf(str(IIWA))
    else:
        model = examples.n_pendulum_on_cart(int(name[4:]))
    ga = GibbsAppellMethod(**model.kwargs)
    ga.kanes_equations(model.bodies, model.loads)
    return model, ga


def compiled_dynamics(name: str, output_dir: str, nodes: int = 1, hessian: bool = True):
    """(casadi Function, CompiledModel, p in its order, build seconds) of a problem's
    model by codegen.generate and casadi_function (batched over nodes when nodes > 1)."""
    from .. import generate
    from ..export.casadi import casadi_function
    model, ga = _formed(name)
    t0 = time.perf_counter()
    mod = generate(ga, name, output_dir=output_dir, jacobian=True)
    f = casadi_function(mod, ga, hessian=hessian, nodes=nodes)
    t_build = time.perf_counter() - t0
    p = np.array([model.parameter_values[c] for c in mod.constants])
    return f, mod, p, t_build


def sx_dynamics(n: int, constants: list, specifieds: list):
    """The route a user has today: sympy's KanesMethod M and F, lambdified into CasADi SX,
    u' = ca.solve(M, F). f(x, r, p) -> xdot, p and r in the given name orders."""
    import casadi as ca
    import sympy as sm
    from sympy.physics.mechanics import KanesMethod
    model = _formed(f"cart{n}")[0]
    kw = model.kwargs
    kane = KanesMethod(kw["frame"], q_ind=kw["q_ind"], u_ind=kw["u_ind"], kd_eqs=kw["kd_eqs"])
    kane.kanes_equations(model.bodies, model.loads)
    q, u = list(kw["q_ind"]), list(kw["u_ind"])
    by_name = {str(c): c for c in model.constants}
    by_name.update({str(s).replace("(t)", ""): s for s in model.specifieds})
    to_mat = lambda rows: ca.vertcat(*[ca.horzcat(*r) for r in rows])
    mods = [{"ImmutableDenseMatrix": to_mat, "MutableDenseMatrix": to_mat,
             "sin": ca.sin, "cos": ca.cos, "sqrt": ca.sqrt}, "math"]
    args = [*q, *u, *[by_name[s] for s in specifieds], *[by_name[c] for c in constants]]
    M_fn = sm.lambdify(args, kane.mass_matrix, modules=mods)
    F_fn = sm.lambdify(args, kane.forcing, modules=mods)
    nx = len(q) + len(u)
    x, r, p = (ca.SX.sym("x", nx), ca.SX.sym("r", len(specifieds)),
               ca.SX.sym("p", len(constants)))
    values = [x[i] for i in range(nx)] + [r[i] for i in range(len(specifieds))] + [
        p[i] for i in range(len(constants))]
    xdot = ca.vertcat(x[len(q):], ca.solve(M_fn(*values), F_fn(*values)))
    return ca.Function(f"cart{n}_sx", [x, r, p], [xdot], ["x", "r", "p"], ["xdot"])


def adam_dynamics(joint_names: list, gravity: float = 9.81):
    """adam-robotics' CasADi model of the iiwa (fixed base): u' = M⁻¹(τ − h) from its mass
    matrix and bias force (its ``aba`` is the floating-base one), f(x, r, p) -> xdot."""
    import casadi as ca
    from adam.casadi import KinDynComputations
    kd = KinDynComputations(IIWA.read_text(), joint_names,
                            gravity=np.array([0, 0, -gravity, 0, 0, 0]))
    n = len(joint_names)
    x, tau, p = ca.SX.sym("x", 2 * n), ca.SX.sym("r", n), ca.SX.sym("p", 0)
    H, v0 = ca.SX.eye(4), ca.SX.zeros(6)
    M = kd.mass_matrix_fun()(H, x[:n])
    h = kd.bias_force_fun()(H, x[:n], v0, x[n:])
    xdot = ca.vertcat(x[n:], ca.solve(M[6:, 6:], tau - h[6:]))
    return ca.Function("iiwa_adam", [x, tau, p], [xdot], ["x", "r", "p"], ["xdot"])


def opty_solver(problem: str, folder: str):
    """(solve() -> results dict, build seconds) of a pendulum problem in opty: KanesMethod's
    implicit equations by midpoint collocation on the same N intervals, the same objective
    (h Σ F² over the intervals), bounds, initial guess and tol; opty passes no Hessian, so
    IPOPT runs limited-memory. Its discretization is not RK4 shooting: its optimum is not
    the others'."""
    import sympy as sm
    from opty.direct_collocation import Problem as OptyProblem
    from sympy.physics.mechanics import KanesMethod, dynamicsymbols
    spec = PROBLEMS[problem]
    t0 = time.perf_counter()
    model = _formed(spec.model)[0]
    kw = model.kwargs
    kane = KanesMethod(kw["frame"], q_ind=kw["q_ind"], u_ind=kw["u_ind"], kd_eqs=kw["kd_eqs"])
    kane.kanes_equations(model.bodies, model.loads)
    states = list(kw["q_ind"]) + list(kw["u_ind"])
    eom = kane.mass_matrix_full * sm.Matrix(states).diff() - kane.forcing_full
    nodes, h, nx = spec.N + 1, spec.T / spec.N, len(states)

    def obj(free):
        return h * np.sum(free[nx * nodes:nx * nodes + spec.N] ** 2)

    def obj_grad(free):
        g = np.zeros_like(free)
        g[nx * nodes:nx * nodes + spec.N] = 2 * h * free[nx * nodes:nx * nodes + spec.N]
        return g
    ends = [s.func(0.0) - v for s, v in zip(states, spec.x0)] + \
        [s.func(spec.T) - v for s, v in zip(states, spec.xf)]
    prob = OptyProblem(obj, obj_grad, eom, states, nodes, h, time_symbol=dynamicsymbols._t,
                       known_parameter_map={c: model.parameter_values[str(c)]
                                            for c in model.constants},
                       instance_constraints=ends, integration_method="midpoint",
                       tmp_dir=os.path.join(folder, f"opty_{problem}"))
    prob.add_option("tol", 1e-8)
    prob.add_option("print_level", 0)
    prob.add_option("sb", "yes")          # IPOPT's banner would land in the table's output
    prob.add_option("max_iter", 3000)
    t_build = time.perf_counter() - t0
    s = np.linspace(0, 1, nodes)
    guess = np.concatenate([(np.outer(spec.x0, 1 - s) + np.outer(spec.xf, s)).ravel(),
                            np.zeros(nodes)])

    def solve_once() -> dict:
        t1 = time.perf_counter()
        _, info = prob.solve(guess)
        return dict(status=info["status_msg"].decode()[:40], success=info["status"] == 0,
                    objective=float(info["obj_val"]), iterations="–",
                    t_solve=time.perf_counter() - t1, t_nlp_jac_g=0.0, t_nlp_hess_l=0.0,
                    t_nlp_g=0.0)
    return solve_once, t_build


def sx_c(fsx, folder: str, cap: float | None = None):
    """(external Function, build seconds): fsx and the derivatives CasADi looks up (jac_,
    adj1_, jac_adj1_) generated to C by CasADi, compiled with gcc -O2 and loaded; (None,
    seconds) when gcc takes longer than cap seconds."""
    import casadi as ca
    t0 = time.perf_counter()
    adj = fsx.reverse(1)
    gen = ca.CodeGenerator(f"{fsx.name()}_c.c")
    for g in (fsx, fsx.jacobian(), adj, adj.jacobian()):
        gen.add(g)
    gen.generate(folder + os.sep)
    lib = os.path.join(folder, f"lib{fsx.name()}_c.so")
    try:
        subprocess.run(["gcc", "-O2", "-fPIC", "-shared",
                        os.path.join(folder, f"{fsx.name()}_c.c"), "-o", lib, "-lm"],
                       check=True, timeout=cap)
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - t0
    return ca.external(fsx.name(), lib), time.perf_counter() - t0


def shooting_nlp(f, p, problem: str | Problem = "swingup"):
    """(nlp, w0, lbw, ubw) of a problem with the dynamics f(x, r, p) (MX). f may be batched
    (x with N columns, codegen's ``nodes=N``): then each RK4 stage is one call."""
    import casadi as ca
    spec = PROBLEMS[problem] if isinstance(problem, str) else problem
    T, N, nx = spec.T, spec.N, len(spec.x0)
    nr, nq = len(spec.lbu), nx // 2
    h = T / N
    X = ca.MX.sym("X", nx, N + 1)
    U = ca.MX.sym("U", nr, N)
    P = ca.DM(p)

    def rk4(x, u):
        k1 = f(x, u, P)
        k2 = f(x + h / 2 * k1, u, P)
        k3 = f(x + h / 2 * k2, u, P)
        k4 = f(x + h * k3, u, P)
        return x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    if f.size2_in(0) == N:                  # batched: every node at once
        g = ca.vec(X[:, 1:] - rk4(X[:, :N], U))
    else:
        g = ca.vertcat(*[X[:, k + 1] - rk4(X[:, k], U[:, k]) for k in range(N)])
    J = h * ca.sumsqr(U)
    w = ca.vertcat(ca.vec(X), ca.vec(U))
    lbx = np.tile(np.r_[spec.lbq if spec.lbq else [-np.inf] * nq, [-np.inf] * nq], N + 1)
    ubx = np.tile(np.r_[spec.ubq if spec.ubq else [np.inf] * nq, [np.inf] * nq], N + 1)
    lbx[:nx] = ubx[:nx] = spec.x0
    lbx[nx * N:] = ubx[nx * N:] = spec.xf
    lbw = np.r_[lbx, np.tile(spec.lbu, N)]
    ubw = np.r_[ubx, np.tile(spec.ubu, N)]
    s = np.linspace(0, 1, N + 1)
    w0 = np.concatenate([(np.outer(spec.x0, 1 - s) + np.outer(spec.xf, s)).ravel(order="F"),
                         np.zeros(nr * N)])
    return dict(x=w, f=J, g=g), w0, lbw, ubw


def solver(f, p, problem: str | Problem = "swingup", hessian: str = "exact",
           expand: bool = False, jit: bool = False) -> tuple:
    """(nlpsol, bounds dict, build seconds) of a problem with the dynamics f. jit: the
    expanded NLP through CasADi's C code generation (gcc -O1: -O2 takes minutes on the
    expanded swing-up), its temporary files in a private folder."""
    import casadi as ca
    nlp, w0, lbw, ubw = shooting_nlp(f, p, problem)
    opts = {"expand": expand or jit, "print_time": False, "record_time": True,
            "ipopt": {"print_level": 0, "hessian_approximation": hessian, "max_iter": 3000,
                      "tol": 1e-8, "sb": "yes"}}
    if jit:
        opts.update(jit=True, compiler="shell", jit_options={"flags": ["-O1"], "verbose": False})
    here = os.getcwd()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)          # CasADi's shell compiler writes its files in the cwd
        try:
            S = ca.nlpsol("S", "ipopt", nlp, opts)
        finally:
            os.chdir(here)
    return S, dict(x0=w0, lbx=lbw, ubx=ubw, lbg=0, ubg=0), time.perf_counter() - t0


def run(S, bounds) -> tuple:
    """(results dict, solution w) of one IPOPT solve of solver's S."""
    t0 = time.perf_counter()
    sol = S(**bounds)
    t_solve = time.perf_counter() - t0
    st = S.stats()
    out = dict(status=st["return_status"], success=bool(st["success"]),
               objective=float(sol["f"]), iterations=int(st["iter_count"]), t_solve=t_solve)
    for k in ("nlp_jac_g", "nlp_hess_l", "nlp_g"):
        out[f"t_{k}"] = float(st.get(f"t_wall_{k}", 0.0))
    return out, np.array(sol["x"]).ravel()


def solve(f, p, problem: str | Problem = "swingup", hessian: str = "exact",
          expand: bool = False, jit: bool = False) -> tuple:
    """(results dict with the build time t_build, solution w) of one IPOPT solve."""
    S, bounds, t_build = solver(f, p, problem, hessian, expand, jit)
    out, w = run(S, bounds)
    return dict(out, t_build=t_build), w


def _routes(problem: str, folder: str, jit: bool, cap: float):
    """{route: (f, nlpsol options, model build seconds)}, p; a route
    whose build took over cap seconds has f None"""
    spec = PROBLEMS[problem]
    robot = spec.model == "iiwa"
    f, mod, p, t_ext = compiled_dynamics(spec.model, folder)
    fm, _, _, t_map = compiled_dynamics(spec.model, folder, nodes=spec.N)
    t0 = time.perf_counter()
    if robot:
        fsx = adam_dynamics([s[2:] for s in mod.states[:len(mod.states) // 2]])
    else:
        fsx = sx_dynamics(int(spec.model[4:]), mod.constants, mod.specifieds)
    t_sx = time.perf_counter() - t0
    fc, t_c = sx_c(fsx, folder, cap)
    routes = {"external": (f, {}, t_ext), "external_map": (fm, {}, t_map),
              "sx": (fsx, {}, t_sx), "sx_expand": (fsx, {"expand": True}, t_sx),
              "sx_c": (fc, {}, t_sx + t_c)}
    if jit:
        routes["sx_jit"] = (fsx, {"jit": True}, t_sx)
    return routes, p


HEADER = ("| problem | route | Hessian | objective | vs the SX optimum | iterations | "
          "solve [s] | jac_g [s] | hess_l [s] | nlpsol build [s] | model build [s] | "
          "ratio to the fastest SX route |\n|---|---|---|---|---|---|---|---|---|---|---|---|")


def table(rows: list) -> str:
    """The rows as a Markdown table; each objective's relative difference from the first SX
    route's optimum with the same Hessian option (L-BFGS may stop at another local optimum
    than the exact Hessian), and each solve's ratio to the fastest SX route (sx,
    sx_expand, sx_c) with the same Hessian option."""
    best, optimum = {}, {}
    for r in rows:
        if r["route"].startswith("sx") and r["success"]:
            key = (r["problem"], r["hessian"])
            best[key] = min(best.get(key, np.inf), r["t_solve"])
            optimum.setdefault(key, r["objective"])
    lines = [HEADER]
    for r in rows:
        if not r["success"]:
            lines.append(f"| {r['problem']} | {r['route']} | {r['hessian']} | {r['status']} "
                         f"| – | {r['iterations']} | – | – | – | – | – | – |")
            continue
        ratio = best.get((r["problem"], r["hessian"]), np.nan) / r["t_solve"]
        ref = optimum.get((r["problem"], r["hessian"]), np.nan)
        lines.append(
            f"| {r['problem']} | {r['route']} | {r['hessian']} | {r['objective']:.9g} | "
            f"{abs(r['objective'] - ref) / abs(ref):.1e} | {r['iterations']} | "
            f"{r['t_solve']:.3g} | {r['t_nlp_jac_g']:.3g} | {r['t_nlp_hess_l']:.3g} | "
            f"{r['t_build']:.2f} | {r['t_model']:.2f} | {ratio:.1f}x |")
    return "\n".join(lines)


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--problems", default="swingup,move,iiwa")
    ap.add_argument("--jit", action="store_true")
    ap.add_argument("--no-opty", action="store_true", help="leave opty out")
    ap.add_argument("--cap", type=float, default=600.0,
                    help="seconds a peer's C compile may take (then reported as > cap)")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for problem in args.problems.split(","):
            routes, p = _routes(problem, folder, args.jit, args.cap)
            for hessian in ("exact", "limited-memory"):
                for tag, (f, opts, t_model) in routes.items():
                    if f is None:
                        rows.append(dict(problem=problem, route=tag, hessian=hessian,
                                         success=False, iterations="–",
                                         status=f"build > cap ({args.cap:.0f} s)"))
                        continue
                    S, bounds, t_build = solver(f, p, problem, hessian, **opts)
                    runs = [run(S, bounds)[0] for _ in range(args.repeats)]
                    row = dict(runs[0], problem=problem, route=tag, hessian=hessian,
                               t_model=t_model, t_build=t_build)
                    for k in ("t_solve", "t_nlp_jac_g", "t_nlp_hess_l", "t_nlp_g"):
                        row[k] = float(np.median([r[k] for r in runs]))
                    rows.append(row)
                    print(f"{problem} {tag} {hessian}: {row['status']}, objective "
                          f"{row['objective']:.9g}, {row['t_solve']:.3f} s", file=sys.stderr,
                          flush=True)
            if PROBLEMS[problem].model != "iiwa" and not args.no_opty:
                try:
                    solve_once, t_build = opty_solver(problem, folder)
                except ImportError as exc:
                    rows.append(dict(problem=problem, route="opty", hessian="limited-memory",
                                     success=False, iterations="–",
                                     status=f"not installed ({exc})"))
                    continue
                runs = [solve_once() for _ in range(args.repeats)]
                rows.append(dict(runs[0], problem=problem, route="opty (midpoint collocation)",
                                 hessian="limited-memory", t_model=t_build, t_build=0.0,
                                 t_solve=float(np.median([r["t_solve"] for r in runs]))))
    print(f"Each solve the median of {args.repeats}; times in seconds; IPOPT tol 1e-8; "
          f"jac_g and hess_l are IPOPT's time in the constraint Jacobian and the Lagrangian "
          f"Hessian callbacks (solver stats t_wall_nlp_jac_g, t_wall_nlp_hess_l). For the "
          f"iiwa, the SX routes are adam-robotics' model.\n")
    print(table(rows))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return rows


if __name__ == "__main__":
    main()
