"""Optimal control with the compiled dynamics in CasADi, against the SX routes users have today.

The problems (``examples.n_pendulum_on_cart(n)``; angles from N.x, gravity along −N.y, so
hanging is qᵢ = −π/2 and upright +π/2):

- ``swingup``: n = 2, from hanging to upright in 3 s;
- ``move``: n = 4, the cart moved by 1 m in 2 s, hanging at rest at both ends.

Both: N RK4 multiple-shooting intervals (one step each), min Σ h F_k², IPOPT at tol 1e-8,
a straight-line initial guess. The same NLP is solved with the dynamics as

- ``external``: ``codegen.export.casadi.casadi_function`` (exact second derivatives in C);
- ``sx``: KanesMethod's M and F turned into an SX Function by ``lambdify``, u' by
  ``ca.solve``, called from the MX NLP;
- ``sx_expand``: the same NLP with ``expand=True``;
- ``sx_c``: CasADi's own C code generation of the SX model (f, jac_f, adj1_f, jac_adj1_f,
  gcc -O2) loaded as an external, the same ABI as ``external``;
- ``sx_jit`` (``--jit``): the whole expanded NLP through CasADi's ``jit`` (gcc -O1). Its C
  is large: on the swing-up gcc took over 5 minutes and 3 GB, so it is opt-in.

Run: ``python -m codegen.bench.ocp [--json out.json] [--repeats 3] [--quick]``.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np

__all__ = [
    "PROBLEMS",
    "compiled_dynamics",
    "main",
    "run",
    "shooting_nlp",
    "solve",
    "solver",
    "sx_c",
    "sx_dynamics",
]

#: name -> links n, horizon T (s), intervals N, the cart's and the angles' end values
PROBLEMS = {
    "swingup": dict(n=2, T=3.0, N=60, cart_end=0.0, angle_end=np.pi / 2),
    "move": dict(n=4, T=2.0, N=40, cart_end=1.0, angle_end=-np.pi / 2),
}


def _formed(n: int):
    from .. import GibbsAppellMethod, examples
    model = examples.n_pendulum_on_cart(n)
    ga = GibbsAppellMethod(**model.kwargs)
    ga.kanes_equations(model.bodies, model.loads)
    return model, ga


def compiled_dynamics(n: int, output_dir: str):
    """(casadi Function, CompiledModel, p in its order, build seconds) of the n-link
    pendulum on a cart, by codegen.generate and casadi_function."""
    from .. import generate
    from ..export.casadi import casadi_function
    model, ga = _formed(n)
    t0 = time.perf_counter()
    mod = generate(ga, f"cart{n}", output_dir=output_dir, jacobian=True)
    f = casadi_function(mod, ga)
    t_build = time.perf_counter() - t0
    p = np.array([model.parameter_values[c] for c in mod.constants])
    return f, mod, p, t_build


def sx_dynamics(n: int, constants: list, specifieds: list):
    """The route a user has today: sympy's KanesMethod M and F, lambdified into CasADi SX,
    u' = ca.solve(M, F). f(x, r, p) -> xdot, p and r in the given name orders."""
    import casadi as ca
    import sympy as sm
    from sympy.physics.mechanics import KanesMethod
    model = _formed(n)[0]
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


def sx_c(fsx, folder: str):
    """(external Function, build seconds): fsx and the derivatives CasADi looks up (jac_,
    adj1_, jac_adj1_) generated to C by CasADi, compiled with gcc -O2 and loaded."""
    import subprocess

    import casadi as ca
    t0 = time.perf_counter()
    adj = fsx.reverse(1)
    gen = ca.CodeGenerator(f"{fsx.name()}_c.c")
    for g in (fsx, fsx.jacobian(), adj, adj.jacobian()):
        gen.add(g)
    gen.generate(folder + os.sep)
    lib = os.path.join(folder, f"lib{fsx.name()}_c.so")
    subprocess.run(["gcc", "-O2", "-fPIC", "-shared", os.path.join(folder, f"{fsx.name()}_c.c"),
                    "-o", lib, "-lm"], check=True)
    return ca.external(fsx.name(), lib), time.perf_counter() - t0


def shooting_nlp(f, p, problem: str = "swingup"):
    """(nlp, w0, lbw, ubw) of a problem of PROBLEMS with the dynamics f(x, r, p) (MX)."""
    import casadi as ca
    spec = PROBLEMS[problem]
    n, T, N = spec["n"], spec["T"], spec["N"]
    nx = 2 * (n + 1)
    x0 = [0.0] + [-np.pi / 2] * n + [0.0] * (n + 1)
    xf = [spec["cart_end"]] + [spec["angle_end"]] * n + [0.0] * (n + 1)
    h = T / N
    X = ca.MX.sym("X", nx, N + 1)
    U = ca.MX.sym("U", 1, N)
    P = ca.DM(p)
    g, J = [], 0
    for k in range(N):
        xk, uk = X[:, k], U[:, k]
        k1 = f(xk, uk, P)
        k2 = f(xk + h / 2 * k1, uk, P)
        k3 = f(xk + h / 2 * k2, uk, P)
        k4 = f(xk + h * k3, uk, P)
        g.append(X[:, k + 1] - (xk + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)))
        J += h * uk ** 2
    w = ca.vertcat(ca.vec(X), ca.vec(U))
    lbw, ubw = -np.inf * np.ones(w.shape[0]), np.inf * np.ones(w.shape[0])
    lbw[:nx] = ubw[:nx] = x0
    lbw[nx * N:nx * N + nx] = ubw[nx * N:nx * N + nx] = xf
    s = np.linspace(0, 1, N + 1)
    w0 = np.concatenate([(np.outer(x0, 1 - s) + np.outer(xf, s)).ravel(order="F"), np.zeros(N)])
    return dict(x=w, f=J, g=ca.vertcat(*g)), w0, lbw, ubw


def solver(f, p, problem: str = "swingup", hessian: str = "exact", expand: bool = False,
           jit: bool = False) -> tuple:
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


def solve(f, p, problem: str = "swingup", hessian: str = "exact", expand: bool = False,
          jit: bool = False) -> tuple:
    """(results dict with the build time t_build, solution w) of one IPOPT solve."""
    S, bounds, t_build = solver(f, p, problem, hessian, expand, jit)
    out, w = run(S, bounds)
    return dict(out, t_build=t_build), w


def _routes(n: int, folder: str, jit: bool):
    f, mod, p, t_ext = compiled_dynamics(n, folder)
    t0 = time.perf_counter()
    fsx = sx_dynamics(n, mod.constants, mod.specifieds)
    t_sx = time.perf_counter() - t0
    fc, t_c = sx_c(fsx, folder)
    routes = {"external": (f, {}, t_ext), "sx": (fsx, {}, t_sx),
              "sx_expand": (fsx, {"expand": True}, t_sx), "sx_c": (fc, {}, t_sx + t_c)}
    if jit:
        routes["sx_jit"] = (fsx, {"jit": True}, t_sx)
    return routes, p


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--problems", default="swingup,move")
    ap.add_argument("--jit", action="store_true")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for problem in args.problems.split(","):
            routes, p = _routes(PROBLEMS[problem]["n"], folder, args.jit)
            for hessian in ("exact", "limited-memory"):
                for tag, (f, opts, t_model) in routes.items():
                    S, bounds, t_build = solver(f, p, problem, hessian, **opts)
                    runs = [run(S, bounds)[0] for _ in range(args.repeats)]
                    row = dict(runs[0], problem=problem, route=tag, hessian=hessian,
                               t_model=t_model, t_build=t_build)
                    for k in ("t_solve", "t_nlp_jac_g", "t_nlp_hess_l", "t_nlp_g"):
                        row[k] = float(np.median([r[k] for r in runs]))
                    rows.append(row)
                    print(f"{problem:8s} {tag:10s} {hessian[:7]:7s} obj {row['objective']:.6f} "
                          f"it {row['iterations']:3d} solve {row['t_solve']:.3f} s  jac_g "
                          f"{row['t_nlp_jac_g']:.3f}  hess_l {row['t_nlp_hess_l']:.3f}  "
                          f"nlpsol {row['t_build']:.2f} s  model {t_model:.2f} s  "
                          f"{row['status']}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return rows


if __name__ == "__main__":
    main()
