"""The spin-up manoeuvre of Kane, Ryan & Banerjee (1987), two independent ways.

A beam (L = 10 m, A = 4e-4 m^2, I = 2e-7 m^4, E = 7e10 Pa, rho = 3000 kg/m^3) is
clamped to a hub at its axis (zero hub radius) whose angle is prescribed,

    theta'(t) = (Omega/T) (t - (T/2pi) sin(2pi t/T))  for t <= T,   Omega after,

and bends in the plane of rotation. The quantity compared is the tip's deflection
perpendicular to the undeformed axis, in the hub frame.

- :func:`exudyn_spin_up`: the geometrically exact beam, Exudyn's ANCF cable elements
  (``ObjectANCFCable2D``), no modes, no linearization: the oracle.
- :func:`modal_spin_up`: this package's terms (:mod:`codegen.flexible.terms`) in a
  hand-written model: the hub prescribed, only the modal equations integrated by
  SciPy. It is the check of M_b, h_b before they are wired into the formulation.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["BEAM", "hub_angle", "exudyn_spin_up", "modal_spin_up"]

#: Kane, Ryan & Banerjee's beam
BEAM = dict(L=10.0, A=4e-4, I=2e-7, E=7e10, rho=3000.0)
#: the duration of the spin-up (s)
T_SPIN = 15.0


def hub_angle(t, omega: float, T: float = T_SPIN):
    """(theta, theta', theta'') of the prescribed hub at time(s) t."""
    c = 2 * math.pi / T
    if np.isscalar(t):        # the integrators' calls: plain floats are ten times faster
        if t <= T:
            return (omega / T * (t * t / 2 + (math.cos(c * t) - 1) / c**2),
                    omega / T * (t - math.sin(c * t) / c), omega / T * (1 - math.cos(c * t)))
        return omega * T / 2 + omega * (t - T), omega, 0.0
    t = np.asarray(t, dtype=float)
    up = t <= T
    th = np.where(up, omega / T * (t**2 / 2 + (np.cos(c * t) - 1) / c**2),
                  omega * T / 2 + omega * (t - T))
    thd = np.where(up, omega / T * (t - np.sin(c * t) / c), omega)
    thdd = np.where(up, omega / T * (1 - np.cos(c * t)), 0.0)
    return th, thd, thdd


def exudyn_spin_up(omega: float, t_end: float = 30.0, elements: int = 8, steps: int = 6000,
                   T: float = T_SPIN, beam: dict = BEAM):
    """Tip deflection (hub frame, perpendicular to the undeformed axis) of the
    geometrically exact beam: (t, deflection) arrays.

    The hub is a rigid body pinned at the origin whose angle is prescribed by a
    coordinate constraint; the root node is clamped to it (position and slope
    direction, its axial stretch free), as in Exudyn's rotating-cable example.
    Implicit generalized-alpha integration, light numerical damping (spectral
    radius 0.9).
    """
    import exudyn as exu
    from exudyn.itemInterface import (CoordinateConstraint, GenericJoint, MarkerBodyRigid,
                                      MarkerNodeCoordinate, MarkerNodeRigid, NodePointGround,
                                      NodePoint2DSlope1, ObjectANCFCable2D, ObjectGround,
                                      RevoluteJoint2D, SensorNode)
    from exudyn.utilities import InertiaCuboid

    L, EA = beam["L"], beam["E"] * beam["A"]
    EI, rhoA = beam["E"] * beam["I"], beam["rho"] * beam["A"]
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    h = L / elements
    nodes = [mbs.AddNode(NodePoint2DSlope1(referenceCoordinates=[i * h, 0.0, 1.0, 0.0]))
             for i in range(elements + 1)]
    for i in range(elements):
        mbs.AddObject(ObjectANCFCable2D(length=h, massPerLength=rhoA, bendingStiffness=EI,
                                        axialStiffness=EA,
                                        nodeNumbers=[nodes[i], nodes[i + 1]]))
    # the hub: a rigid body pinned at the origin, its angle prescribed; the root node
    # clamped to it in position and slope direction (not in axial stretch)
    ground = mbs.AddObject(ObjectGround(referencePosition=[0.0, 0.0, 0.0]))
    hub = mbs.CreateRigidBody(referencePosition=[0.0, 0.0, 0.0], create2D=True,
                              inertia=InertiaCuboid(1000.0, [0.1, 0.1, 0.1]), returnDict=True)
    m_hub = mbs.AddMarker(MarkerBodyRigid(bodyNumber=hub["bodyNumber"], localPosition=[0, 0, 0]))
    m_root = mbs.AddMarker(MarkerNodeRigid(nodeNumber=nodes[0]))
    mbs.AddObject(GenericJoint(markerNumbers=[m_root, m_hub], constrainedAxes=[1, 1, 0, 0, 0, 1]))
    m_ground = mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground, localPosition=[0, 0, 0]))
    mbs.AddObject(RevoluteJoint2D(markerNumbers=[m_hub, m_ground]))
    n_ground = mbs.AddNode(NodePointGround(referenceCoordinates=[0.0, 0.0, 0.0]))
    m_zero = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n_ground, coordinate=0))
    m_angle = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=hub["nodeNumber"], coordinate=2))

    def angle(mbs_, t, item, offset):
        return hub_angle(float(t), omega, T)[0]

    mbs.AddObject(CoordinateConstraint(markerNumbers=[m_zero, m_angle], offsetUserFunction=angle))
    tip = mbs.AddSensor(SensorNode(nodeNumber=nodes[-1], storeInternal=True,
                                   outputVariableType=exu.OutputVariableType.Position))
    mbs.Assemble()
    sim = exu.SimulationSettings()
    sim.timeIntegration.endTime = t_end
    sim.timeIntegration.numberOfSteps = steps
    sim.timeIntegration.generalizedAlpha.spectralRadius = 0.9
    sim.timeIntegration.verboseMode = 0
    sim.timeIntegration.newton.relativeTolerance = 1e-8
    # the residual is in newtons: its rounding with EA = 2.8e7 N is ~1e-8 N
    sim.timeIntegration.newton.absoluteTolerance = 1e-6
    sim.solution.file.write = False
    sim.solution.sensors.writePeriod = t_end / steps
    sim.show.statistics = False
    sim.show.computationTime = False
    exu.SolveDynamic(mbs, sim)
    data = mbs.GetSensorStoredData(tip)
    t, x, y = data[:, 0], data[:, 1], data[:, 2]
    th = hub_angle(t, omega, T)[0]
    return t, -np.sin(th) * x + np.cos(th) * y


def modal_spin_up(omega: float, n_modes: int = 4, t_end: float = 30.0,
                  geometric_stiffening: bool = True, T: float = T_SPIN, beam: dict = BEAM,
                  t_eval=None, rtol: float = 1e-9, atol: float = 1e-12):
    """Tip deflection of the modal model built from this package's terms:
    (t, deflection). Cantilever modes in the plane of rotation (bending "y", spin
    about z); the modal rows of M_b A + h_b = Q with A = [0; (0, 0, theta''); eta'']."""
    import sympy as sm
    from scipy.integrate import solve_ivp

    from .beams import beam_modes
    from .invariants import invariants
    from .terms import body_terms

    L, EI, rhoA = beam["L"], beam["E"] * beam["I"], beam["rho"] * beam["A"]
    modes = beam_modes(L, EI, rhoA, n_modes, bending=("y",))
    inv = invariants(modes, geometric_stiffening=geometric_stiffening)
    n = inv.n
    eta, etad = sm.symbols(f"eta0:{n}"), sm.symbols(f"etad0:{n}")
    thd, thdd = sm.symbols("thd thdd")
    bt = body_terms(inv, [0, 0, thd], eta, etad)
    M = np.array(bt.M[6:, 6:], dtype=float)
    rhs = bt.Q[6:, :] - bt.h[6:, :] - bt.M[6:, 5] * thdd
    f = sm.lambdify([eta, etad, thd, thdd], rhs, "numpy")
    Minv = np.linalg.inv(M)
    tip = modes.shape_at(L)[0][1]

    def ode(t, x):
        _, w, wd = hub_angle(float(t), omega, T)
        acc = Minv @ np.asarray(f(x[:n], x[n:], w, wd), dtype=float).ravel()
        return np.concatenate([x[n:], acc])

    if t_eval is None:
        t_eval = np.linspace(0.0, t_end, 601)
    # the modal rows have no constant part at rest: the hub's angular acceleration
    # drives them through M_b's coupling column
    sol = solve_ivp(ode, (0.0, t_end), np.zeros(2 * n), method="DOP853", t_eval=t_eval,
                    rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"the modal spin-up failed: {sol.message}")
    return sol.t, tip @ sol.y[:n]


def compare(omegas=(4.0, 10.0), t_end: float = 30.0, elements=(4, 8, 16, 32),
            steps: int = 6000, modes=(1, 2, 3, 4, 6)) -> None:
    """Print the comparison: Exudyn's mesh convergence, then the modal model's
    maximum deflection error against the finest mesh, with and without geometric
    stiffening (``python -m codegen.flexible.reference``)."""
    for omega in omegas:
        ref = {}
        for ne in elements:
            ref[ne] = exudyn_spin_up(omega, t_end, elements=ne, steps=steps)
        t, fine = ref[elements[-1]]
        peak = np.abs(fine).max()
        print(f"Omega = {omega}: Exudyn, max |tip deflection| {peak:.5f} m "
              f"({elements[-1]} elements, {steps} steps)")
        for ne in elements[:-1]:
            err = np.abs(ref[ne][1] - fine).max()
            print(f"  {ne:3d} elements: max |difference| to {elements[-1]}: {err:.2e} m "
                  f"({err / peak:.2%} of the peak)")
        for n in modes:
            for stiff in (True, False):
                _, d = modal_spin_up(omega, n, t_end, geometric_stiffening=stiff, t_eval=t)
                err = np.abs(d - fine).max()
                verdict = "diverges" if err > peak else f"max error {err:.3g} m ({err / peak:.2%})"
                print(f"  modal, {n} modes, stiffening {'on ' if stiff else 'off'}: max |tip| "
                      f"{np.abs(d).max():.4g} m, {verdict}")


if __name__ == "__main__":
    compare()
