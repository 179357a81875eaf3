"""The Jacobian of the dynamics per call: ours against Pinocchio's ABA derivatives.

    python -m codegen.bench.jacobian [--n 1 4 12 20]

Model: the n-link pendulum on a cart (codegen.examples.n_pendulum_on_cart),
built for Pinocchio as in codegen.bench.rhs (a prismatic cart, n revolute
joints, point masses). Per n, in one interpreter, median time per call of
7 repeats after a warm-up:

- ours: ``CompiledModel.jacobian(t, x, p, r)``, the analytic d x'/dx
  (nx x nx, a new array per call), and with ``out=`` (written in place, as
  Pinocchio writes into its ``data``); ratios are to the latter; these three
  are measured in turn, three rounds each, and the least median is kept;
- ours, forward differences: nx + 1 calls of our compiled ``rhs`` from
  Python (the Jacobian a user builds without ours), and central differences
  (2 nx calls);
- Pinocchio: ``computeABADerivatives(model, data, q, v, tau)``, which gives
  d q''/dq and d q''/dv (the acceleration rows of the same Jacobian).

Before timing, Pinocchio's derivatives, carried from its relative joint
angles to our absolute ones (q_abs = L q_rel: d a_abs / d x_abs = L D L⁻¹),
are compared with ours (relative 1e-8).

A second table times the parameter sensitivities d x'/dp
(``CompiledModel.parameter_jacobian``, the model built a second time, with
``parameter_jacobian=True``) against central differences of our ``rhs`` over
p (2 np calls); Pinocchio has no counterpart.
"""
from __future__ import annotations

import argparse
import sys
import tempfile

import numpy as np

from . import alternating_times, median_time


def _pinocchio(n, vals):
    import pinocchio as pin
    pm = pin.Model()
    pm.gravity.linear = np.array([0.0, -vals["g"], 0.0])
    mass = [vals[f"m{i}"] for i in range(n + 1)]
    length = [vals[f"l{i}"] for i in range(1, n + 1)]
    jid = pm.addJoint(0, pin.JointModelPX(), pin.SE3.Identity(), "cart")
    pm.appendBodyToJoint(jid, pin.Inertia(mass[0], np.zeros(3), np.zeros((3, 3))),
                         pin.SE3.Identity())
    for i in range(1, n + 1):
        place = pin.SE3(np.eye(3), np.array([length[i - 2] if i > 1 else 0.0, 0.0, 0.0]))
        jid = pm.addJoint(jid, pin.JointModelRZ(), place, f"link{i}")
        pm.appendBodyToJoint(jid, pin.Inertia(mass[i], np.array([length[i - 1], 0.0, 0.0]),
                                              np.zeros((3, 3))), pin.SE3.Identity())
    return pin, pm, pm.createData()


def derivatives_difference(J, pin, pm, data, q, v, tau) -> float:
    """The largest difference between the acceleration rows of our Jacobian J (absolute
    angles) and Pinocchio's ABA derivatives at relative joint state (q, v, tau),
    relative to J's largest entry."""
    n = len(q) - 1
    pin.computeABADerivatives(pm, data, q, v, tau)
    L = np.tril(np.ones((n + 1, n + 1)))     # absolute angles = cumulative relative ones
    L[1:, 0] = 0.0
    Li = np.linalg.inv(L)
    dq, dv = L @ data.ddq_dq @ Li, L @ data.ddq_dv @ Li
    ours = J[n + 1:, :]
    return float(max(abs(ours[:, :n + 1] - dq).max(), abs(ours[:, n + 1:] - dv).max())
                 / abs(ours).max())


def measure(n: int) -> dict:
    from codegen import GibbsAppellMethod, generate
    from codegen.bench.simulate import to_relative
    from codegen.examples import n_pendulum_on_cart
    model = n_pendulum_on_cart(n)
    ga = GibbsAppellMethod(**model.kwargs)
    out_dir = tempfile.mkdtemp()
    mod = generate(ga, f"jac_bench{n}", output_dir=out_dir, jacobian=True)
    # the sensitivities in a build of their own: the Jacobian is timed as users build it
    mod_p = generate(ga, f"jac_bench{n}_p", output_dir=out_dir, parameter_jacobian=True)
    vals = model.parameter_values
    p = mod.parameters(vals)
    rng = np.random.default_rng(n)
    x = np.concatenate([[0.1], rng.uniform(-1, 1, n), [0.2], rng.uniform(-1, 1, n)])
    r = np.array([0.3])
    nx = mod.nx
    out = np.empty(nx)
    res = {"nx": nx}
    J = mod.jacobian(0.0, x, p, r)
    Jout = np.empty((nx, nx))
    timed = {"ours_new": lambda: mod.jacobian(0.0, x, p, r),
             "ours": lambda: mod.jacobian(0.0, x, p, r, Jout)}
    rhs, h = mod.rhs, 1e-7

    def forward():
        f0 = rhs(0.0, x, p, r)
        cols = np.empty((nx, nx))
        for k in range(nx):
            xk = x.copy()
            xk[k] += h
            cols[:, k] = (rhs(0.0, xk, p, r, out) - f0) / h
        return cols

    def central():
        cols = np.empty((nx, nx))
        for k in range(nx):
            xp, xm = x.copy(), x.copy()
            xp[k] += 1e-6
            xm[k] -= 1e-6
            cols[:, k] = (rhs(0.0, xp, p, r) - rhs(0.0, xm, p, r)) / 2e-6
        return cols
    res["forward_differences"] = median_time(forward, 500)
    res["central_differences"] = median_time(central, 500)
    res["fd_error"] = float(abs(central() - J).max() / abs(J).max())
    # the parameter sensitivities against central differences over p
    Jp, npar = mod_p.parameter_jacobian(0.0, x, p, r), len(p)
    Jpout = np.empty((nx, npar))

    def central_p():
        cols = np.empty((nx, npar))
        for k in range(npar):
            step = 1e-6 * max(1.0, abs(p[k]))
            pp, pm = p.copy(), p.copy()
            pp[k] += step
            pm[k] -= step
            cols[:, k] = (rhs(0.0, x, pp, r) - rhs(0.0, x, pm, r)) / (2 * step)
        return cols
    res["np"] = npar
    res["ours_p"] = median_time(lambda: mod_p.parameter_jacobian(0.0, x, p, r, Jpout), 5000)
    res["central_p"] = median_time(central_p, 500)
    res["fd_error_p"] = float(abs(central_p() - Jp).max() / abs(Jp).max())
    try:
        pin, pm, data = _pinocchio(n, vals)
    except ImportError:
        res.update(alternating_times(timed, 5000))
        res["pinocchio"] = "not installed"
        return res
    q, v = to_relative(x, n)
    tau = np.zeros(n + 1)
    tau[0] = r[0]
    diff = derivatives_difference(J, pin, pm, data, q, v, tau)
    if not diff <= 1e-8:
        res.update(alternating_times(timed, 5000))
        res["pinocchio"] = f"derivatives differ from ours by {diff:.2e} (relative): not timed"
        return res
    timed["pinocchio"] = lambda: pin.computeABADerivatives(pm, data, q, v, tau)
    res.update(alternating_times(timed, 5000))
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1, 4, 12, 20])
    args = ap.parse_args(argv)
    print("Jacobian d x'/dx per call from Python [µs] (ratio = peer / ours)\n")
    print("| n | nx | ours, out= | ours, new array | Pinocchio computeABADerivatives | "
          "forward differences of our rhs | central differences | central differences' error |")
    print("|---|---|---|---|---|---|---|---|")
    results = []
    for n in args.n:
        res = measure(n)
        results.append((n, res))
        ours = res["ours"]

        def cell(key):
            v = res[key]
            return v if isinstance(v, str) else f"{v * 1e6:.2f} ({v / ours:.1f}x)"
        print(f"| {n} | {res['nx']} | {ours * 1e6:.2f} | {res['ours_new'] * 1e6:.2f} | "
              f"{cell('pinocchio')} | "
              f"{cell('forward_differences')} | {cell('central_differences')} | "
              f"{res['fd_error']:.1e} |", flush=True)
    print("\nParameter sensitivities d x'/dp per call from Python [µs] (ratio = peer / ours)\n")
    print("| n | nx x np | ours, out= | central differences over p | their error |")
    print("|---|---|---|---|---|")
    for n, res in results:
        ours = res["ours_p"]
        print(f"| {n} | {res['nx']} x {res['np']} | {ours * 1e6:.2f} | "
              f"{res['central_p'] * 1e6:.2f} ({res['central_p'] / ours:.1f}x) | "
              f"{res['fd_error_p']:.1e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
