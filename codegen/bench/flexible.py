"""Flexible bodies against Exudyn's reduced-order floating frame (ObjectFFRFreducedOrder).

    python -m codegen.bench.flexible [--rounds 5]

The same modal data in both tools, results checked equal before times count:

- **spacecraft 2 x 4 modes**: examples.spacecraft(4, nodes=11, geometric_stiffening=
  False) (a rigid hub and two FE-style panels of 11 nodes, 4 modes each). Exudyn gets
  one ObjectFFRFreducedOrder whose nodes are the panels' nodes and the hub's mass as
  eight corner masses of the same inertia (Exudyn's FFRF has no geometric stiffening:
  ours is built without, for equal equations), with a Lie-group rotation-vector node
  (its explicit solvers). Free-floating, spinning, panels deflected, 10 s.
- **spin_up_beam 4 modes**: ours per RHS call and per run at Omega = 10. Exudyn's FFRF
  body needs constraints for the prescribed hub (a Python offset user function), which
  its explicit solvers do not take, so there is no RHS-per-call figure for it: both
  tools run the same FE node data (spin_up_beam(4, nodes=21, geometric_stiffening=
  False)) at Omega = 2, where the linear modal model holds, ours with BDF and DOPRI5,
  Exudyn with generalized-alpha, errors beside the times.

RHS per call: a fixed-step RK4 run in each tool's own loop (ours simulate(method=
'rk4'), Exudyn's RK44), time over the RHS calls (4 per step). Whole simulation: each
tool's DOPRI5 at rtol = atol = 1e-8 (Exudyn's automatic step size), errors against
ours at 1e-12 printed beside. Best of ``--rounds``. Then formulate + generate +
compile of spacecraft(8) (2 x 8 modes, analytic beams with stiffening) without cache,
with and without the analytic Jacobian.
"""
from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from codegen import GibbsAppellMethod, generate
from codegen.examples import spacecraft, spin_up_beam

T_END, DT = 10.0, 1e-3
START = dict(v0=0.05, w0=0.01, w1=-0.02, w2=0.1, eta_p1=0.05, eta_m2=-0.03)


def _exudyn_data(model):
    """Node positions (N, 3), masses (N,), mode basis (3N, n) and modal stiffness of the
    whole spacecraft in the hub frame, from the model's own bodies."""
    hub, panels = model.bodies[0], model.bodies[1:]
    H, Ho = hub.frame, hub.masscenter
    Ih = float(hub.central_inertia.to_matrix(H)[0, 0])
    a = np.sqrt(Ih / (2 * float(hub.mass)))                 # 8 corners: I = m 2 a^2
    pos = [np.array([sx, sy, sz]) * a for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    mass = [float(hub.mass) / 8] * 8
    n = sum(p.n for p in panels)
    rows = []
    k0 = 0
    for p in panels:
        R = np.array(H.dcm(p.frame).evalf(), dtype=float)
        off = np.array(p.origin.pos_from(Ho).to_matrix(H).evalf(), dtype=float).ravel()
        for i in range(len(p.modes.mass)):
            pos.append(R @ p.modes.position[i] + off)
            mass.append(float(p.modes.mass[i]))
            block = np.zeros((3, n))
            block[:, k0:k0 + p.n] = R @ p.modes.shape[i]
            rows.append(block)
        k0 += p.n
    Psi = np.vstack([np.zeros((24, n))] + rows)
    K = np.zeros((n, n))
    k0 = 0
    for p in panels:
        K[k0:k0 + p.n, k0:k0 + p.n] = p.stiffness
        k0 += p.n
    return np.array(pos), np.array(mass), Psi, K


class _NodeData:
    """What ObjectFFRFreducedOrderInterface reads of an FEMinterface: lumped masses and
    a mode basis (the modal stiffness is set afterwards)."""

    def __init__(self, pos, mass, Psi):
        import scipy.sparse as sp
        self.pos, self.modeBasis, self.postProcessingModes = pos, {"matrix": Psi}, {}
        self.M = sp.diags(np.repeat(mass, 3)).tocsr()
        self.K = sp.csr_matrix((3 * len(pos), 3 * len(pos)))

    def GetNodePositionsAsArray(self):
        return self.pos

    def GetSurfaceTriangles6(self):
        return []

    def GetSurfaceTriangles(self):
        return []

    def GetStiffnessMatrix(self, sparse=True):
        return self.K

    def GetMassMatrix(self, sparse=True):
        return self.M


def exudyn_spacecraft(model, x0, names, method, rtol=1e-8, dt=DT, t_end=T_END):
    """Exudyn's run: (seconds, RHS calls or None, final [w (hub frame), eta, eta'])."""
    import exudyn as exu
    from exudyn.FEM import ObjectFFRFreducedOrderInterface
    pos, mass, Psi, K = _exudyn_data(model)
    cms = ObjectFFRFreducedOrderInterface(_NodeData(pos, mass, Psi),
                                          rigidBodyNodeType=exu.NodeType.RotationRotationVector)
    cms.stiffnessMatrixReduced = K
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    x = dict(zip(names, x0))
    w = [x["w0"], x["w1"], x["w2"]]
    made = cms.AddObjectFFRFreducedOrder(mbs, initialVelocity=[x["v0"], x["v1"], x["v2"]],
                                         initialAngularVelocity=w)
    n = K.shape[0]
    eta = [x[s] for s in names if s.startswith("eta")]
    etad = [x[s] for s in names if s.startswith("zeta")]
    mbs.SetNodeParameter(made["nGenericODE2"], "initialCoordinates", eta)
    mbs.SetNodeParameter(made["nGenericODE2"], "initialCoordinates_t", etad)
    mbs.Assemble()
    sim = exu.SimulationSettings()
    ti = sim.timeIntegration
    ti.endTime, ti.verboseMode = t_end, 0
    sim.solution.file.write = False
    sim.show.statistics = sim.show.computationTime = False
    ti.explicit.computeEndOfStepAccelerations = False
    if method == "rk4":
        ti.numberOfSteps = int(round(t_end / dt))
        solver = exu.DynamicSolverType.RK44
    else:
        ti.automaticStepSize = True
        ti.numberOfSteps = 100
        ti.absoluteTolerance = ti.relativeTolerance = rtol
        solver = exu.DynamicSolverType.DOPRI5
    start = time.perf_counter()
    exu.SolveDynamic(mbs, sim, solverType=solver)
    seconds = time.perf_counter() - start
    q_t = mbs.systemData.GetODE2Coordinates_t()
    q = mbs.systemData.GetODE2Coordinates()
    out = np.concatenate([q_t[3:6], q[6:6 + n], q_t[6:6 + n]])
    return seconds, (4 * ti.numberOfSteps if method == "rk4" else None), out


def _ours_final(mod, res):
    names = mod.states
    w = [res.x[-1, names.index(s)] for s in ("w0", "w1", "w2")]
    eta = [res.x[-1, i] for i, s in enumerate(names) if s.startswith("eta")]
    etad = [res.x[-1, i] for i, s in enumerate(names) if s.startswith("zeta")]
    return np.array(w + eta + etad)


def _best(fn, rounds):
    out = [fn() for _ in range(rounds)]
    return min(out, key=lambda r: r[0])


def spacecraft_table(rounds: int, folder) -> list:
    model = spacecraft(4, nodes=11, geometric_stiffening=False)
    mod = generate(GibbsAppellMethod(**model.kwargs), "bench_spacecraft_fe", output_dir=folder)
    names, p = mod.states, mod.parameters({})
    x0 = np.zeros(mod.nx)
    for k, v in START.items():
        x0[names.index(k)] = v
    ref = _ours_final(mod, mod.simulate((0, T_END), x0, p, [0.0], method="dopri5", rtol=1e-12,
                                        atol=1e-12))
    scale = np.abs(ref).max()
    # equal equations first: Exudyn's DOPRI5 at 1e-11 against ours at 1e-12
    _, _, exu_tight = exudyn_spacecraft(model, x0, names, "dopri5", rtol=1e-11)
    agree = np.abs(exu_tight - ref).max() / scale
    if agree > 1e-6:
        raise SystemExit(f"the two tools disagree ({agree:.2e} relative): no timing")
    rows = [f"Spacecraft 2 x 4 modes (FE node data, 11 nodes per panel, {mod.nx} states): "
            f"Exudyn's DOPRI5 at 1e-11 equals ours at 1e-12 to {agree:.1e} (relative, hub "
            f"angular velocity and modal states at t = {T_END:g} s).", "",
            "| run | ours (s) | Exudyn (s) | Exudyn / ours | ours: error | Exudyn: error |",
            "|---|---|---|---|---|---|"]

    def ours(method, **kw):
        start = time.perf_counter()
        res = mod.simulate((0, T_END), x0, p, [0.0], method=method, **kw)
        return time.perf_counter() - start, res.nfev, _ours_final(mod, res)
    o = _best(lambda: ours("rk4", dt=DT, t_eval=[0.0, T_END]), rounds)
    e = _best(lambda: exudyn_spacecraft(model, x0, names, "rk4"), rounds)
    po, pe = o[0] / o[1], e[0] / e[1]
    rows.append(f"| RHS per call (RK4, dt = {DT:g}) | {po * 1e6:.2f} us | {pe * 1e6:.2f} us | "
                f"{pe / po:.1f} | {np.abs(o[2] - ref).max() / scale:.1e} | "
                f"{np.abs(e[2] - ref).max() / scale:.1e} |")
    for label, o, e in (
            (f"RK4 run, dt = {DT:g}, {T_END:g} s", o, e),
            (f"DOPRI5 run, tol 1e-8, {T_END:g} s", _best(lambda: ours("dopri5", rtol=1e-8, atol=1e-8), rounds),
             _best(lambda: exudyn_spacecraft(model, x0, names, "dopri5", rtol=1e-8), rounds))):
        rows.append(f"| {label} | {o[0]:.4f} | {e[0]:.4f} | {e[0] / o[0]:.1f} | "
                    f"{np.abs(o[2] - ref).max() / scale:.1e} | "
                    f"{np.abs(e[2] - ref).max() / scale:.1e} |")
    return rows


def exudyn_spin_up(model, omega, steps, t_end, t_eval):
    """Exudyn's spin-up of the model's node data: one ObjectFFRFreducedOrder (Tait-Bryan
    rigid node) held by coordinate constraints, its angle about z the prescribed
    hub_angle through a Python offset user function; generalized-alpha (no numerical
    damping), ``steps`` fixed steps. (seconds, tip deflection at t_eval)."""
    import exudyn as exu
    from exudyn.FEM import ObjectFFRFreducedOrderInterface
    from exudyn.itemInterface import (CoordinateConstraint, MarkerNodeCoordinate,
                                      NodePointGround, SensorNode)
    from codegen.flexible.reference import hub_angle
    beam = model.bodies[0]
    md = beam.modes
    Psi = np.vstack([md.shape[i] for i in range(len(md.mass))])
    cms = ObjectFFRFreducedOrderInterface(_NodeData(md.position, md.mass, Psi),
                                          rigidBodyNodeType=exu.NodeType.RotationRxyz)
    cms.stiffnessMatrixReduced = np.array(beam.stiffness, dtype=float)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    made = cms.AddObjectFFRFreducedOrder(mbs)
    ground = mbs.AddMarker(MarkerNodeCoordinate(
        nodeNumber=mbs.AddNode(NodePointGround(referenceCoordinates=[0, 0, 0])), coordinate=0))

    def angle(mbs_, t, item, offset):
        return hub_angle(float(t), omega)[0]

    for c in range(6):
        mc = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=made["nRigidBody"], coordinate=c))
        mbs.AddObject(CoordinateConstraint(markerNumbers=[ground, mc],
                                           **({"offsetUserFunction": angle} if c == 5 else {})))
    sensor = mbs.AddSensor(SensorNode(nodeNumber=made["nGenericODE2"], storeInternal=True,
                                      outputVariableType=exu.OutputVariableType.Coordinates))
    mbs.Assemble()
    sim = exu.SimulationSettings()
    ti = sim.timeIntegration
    ti.endTime, ti.numberOfSteps, ti.verboseMode = t_end, steps, 0
    ti.generalizedAlpha.spectralRadius = 1.0
    ti.newton.relativeTolerance = ti.newton.absoluteTolerance = 1e-10
    sim.solution.file.write = False
    sim.solution.sensors.writePeriod = t_end / steps
    sim.show.statistics = sim.show.computationTime = False
    start = time.perf_counter()
    exu.SolveDynamic(mbs, sim)
    seconds = time.perf_counter() - start
    data = mbs.GetSensorStoredData(sensor)
    d = data[:, 1:] @ md.shape[-1][1]
    return seconds, np.interp(t_eval, data[:, 0], d)


def spin_up_table(rounds: int, folder) -> list:
    """Ours per RHS call and per run on spin_up_beam(4) at Omega = 10 (with stiffening);
    then both tools on the same FE node data (21 nodes, 4 modes, no stiffening, which
    Exudyn's FFRF lacks) at Omega = 2, below the first frequency, where that model holds."""
    model = spin_up_beam(4, omega=10.0)
    mod = generate(GibbsAppellMethod(**model.kwargs), "bench_spin_up4", output_dir=folder,
                   outputs=model.outputs)
    p = mod.parameters(model.parameter_values)
    rows = ["", "spin_up_beam(4) (Omega = 10, 20 s), ours:", "",
            "| run | seconds | RHS calls | per call |", "|---|---|---|---|"]
    for label, kw in (("RK4, dt = 1e-3", dict(method="rk4", dt=1e-3, t_eval=[0.0, 20.0])),
                      ("DOPRI5, tol 1e-8", dict(method="dopri5", rtol=1e-8, atol=1e-8)),
                      ("BDF, tol 1e-8", dict(method="bdf", rtol=1e-8, atol=1e-8))):
        def run():
            start = time.perf_counter()
            res = mod.simulate((0, 20.0), model.initial_state, p, **kw)
            return time.perf_counter() - start, res.nfev
        s, calls = _best(run, rounds)
        rows.append(f"| {label} | {s:.4f} | {calls} | {s / calls * 1e6:.2f} us |")
    omega, t_end = 2.0, 20.0
    fe = spin_up_beam(4, omega=omega, nodes=21, geometric_stiffening=False)
    fmod = generate(GibbsAppellMethod(**fe.kwargs), "bench_spin_up_fe", output_dir=folder,
                    outputs=fe.outputs)
    fp = fmod.parameters(fe.parameter_values)
    t = np.linspace(0, t_end, 201)
    ref = fmod.simulate((0, t_end), fe.initial_state, fp, method="dopri5", rtol=1e-12,
                        atol=1e-12, t_eval=t).outputs["tip_deflection"]
    peak = np.abs(ref).max()
    rows += ["", f"The same node data in both tools (21 nodes, 4 modes, linear modal model, "
             f"Omega = {omega:g}, {t_end:g} s; errors: max tip deflection error over the peak, "
             f"against ours at 1e-12):", "", "| tool, settings | seconds | error |", "|---|---|---|"]
    for label, kw in (("ours BDF, tol 1e-6", dict(method="bdf", rtol=1e-6, atol=1e-8)),
                      ("ours BDF, tol 1e-8", dict(method="bdf", rtol=1e-8, atol=1e-10)),
                      ("ours DOPRI5, tol 1e-8", dict(method="dopri5", rtol=1e-8, atol=1e-10))):
        def run():
            start = time.perf_counter()
            res = fmod.simulate((0, t_end), fe.initial_state, fp, t_eval=t, **kw)
            return time.perf_counter() - start, res.outputs["tip_deflection"]
        s, d = _best(run, rounds)
        rows.append(f"| {label} | {s:.4f} | {np.abs(d - ref).max() / peak:.1e} |")
    for steps in (2000, 8000):
        s, d = _best(lambda: exudyn_spin_up(fe, omega, steps, t_end, t), max(1, rounds // 2))
        rows.append(f"| Exudyn generalized-alpha, {steps} steps | {s:.4f} | "
                    f"{np.abs(d - ref).max() / peak:.1e} |")
    return rows


def build_time(folder) -> list:
    start = time.perf_counter()
    model = spacecraft(8)
    described = time.perf_counter() - start
    rows = ["", f"spacecraft(8) (2 x 8 modes, analytic beams with stiffening): the description "
            f"(with its energy and momentum outputs) {described:.1f} s; then formulate + "
            f"generate + compile, no cache:"]
    for label, kw in (("default options (analytic Jacobian)", {}),
                      ("jacobian=False", dict(jacobian=False))):
        start = time.perf_counter()
        mod = generate(GibbsAppellMethod(**model.kwargs), "bench_spacecraft8", output_dir=folder,
                       force=True, **kw)
        rows.append(f"- {label}: {time.perf_counter() - start:.1f} s ({mod.nx} states)")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        rows = spacecraft_table(args.rounds, folder) + spin_up_table(args.rounds, folder) \
            + build_time(folder)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
