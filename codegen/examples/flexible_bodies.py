"""The built-in models with flexible bodies (:mod:`codegen.flexible`), re-exported by
:mod:`codegen.examples`: Kane, Ryan & Banerjee's spin-up beam, a beam spinning at a
constant rate, a free-floating spacecraft with two flexible panels and a two-link
arm with a flexible second link."""
from __future__ import annotations

import math

import sympy as sm
import sympy.physics.mechanics as me

from ..flexible import FlexibleBody, beam_modes, fe_beam
from ..description.model import Model

__all__ = ["spin_up_beam", "rotating_beam", "spacecraft", "flexible_arm", "hub_angle"]

#: Kane, Ryan & Banerjee's beam: L = 10 m, E I = 7e10 * 2e-7, rho A = 3000 * 4e-4
KRB = dict(L=10.0, EI=1.4e4, rho_A=1.2)


def hub_angle(Omega, T, t=me.dynamicsymbols._t):
    """The spin-up profile theta(t), theta'(t) = (Omega/T)(t - (T/2pi) sin(2pi t/T))
    for t <= T and Omega afterwards, as an explicit function of t (a Piecewise)."""
    c = 2 * sm.pi / T
    return sm.Piecewise((Omega / T * (t**2 / 2 + (sm.cos(c * t) - 1) / c**2), t <= T),
                        (Omega * T / 2 + Omega * (t - T), True))


def _beam_states(n: int, label: str):
    return me.dynamicsymbols(f"eta_{label}1:{n + 1}"), me.dynamicsymbols(f"zeta_{label}1:{n + 1}")


def spin_up_beam(n_modes: int = 4, omega: float = 4.0, duration: float = 15.0,
                 geometric_stiffening: bool = True, nodes: int | None = None) -> Model:
    """Kane, Ryan & Banerjee (1987): a beam clamped at the axis of a hub whose angle is
    prescribed, theta(t) = :func:`hub_angle` (Omega, T), bending in the plane of rotation
    (cantilever modes). Constants Omega (the final rate) and T (the spin-up time,
    ``duration``); outputs the tip's deflection perpendicular to the undeformed axis in
    the hub frame (``tip_deflection``) and its axial foreshortening
    (``tip_foreshortening``). ``geometric_stiffening=False`` is the linear modal model
    that diverges above the first frequency (3.8 rad/s). ``nodes``: the beam as FE-style
    node data instead (:func:`~codegen.flexible.fe_beam`, that many nodes), the tip
    its last node."""
    Omega, T = sm.symbols("Omega T")
    N = me.ReferenceFrame("N")
    B = N.orientnew("B", "Axis", (hub_angle(Omega, T), N.z))
    O = me.Point("O")
    O.set_vel(N, 0)
    eta, zeta = _beam_states(n_modes, "")
    L = KRB["L"]
    modes = beam_modes(L, KRB["EI"], KRB["rho_A"], n_modes) if nodes is None else \
        fe_beam(nodes, L, KRB["EI"], KRB["rho_A"], n_modes)
    beam = FlexibleBody("beam", B, O, modes, eta, zeta,
                        geometric_stiffening=geometric_stiffening)
    tip = (beam.point_at(L) if nodes is None else beam.node(nodes - 1)).pos_from(O)
    return Model(
        name="spin_up_beam", frame=N, q_ind=list(eta), u_ind=list(zeta), kd_eqs=beam.kd_eqs(),
        bodies=[beam], constants=[Omega, T], doc=spin_up_beam.__doc__,
        parameter_values=dict(Omega=omega, T=duration), initial_state=[0.0] * (2 * n_modes),
        stiff=True, potential_energy=beam.elastic_energy(),
        outputs=dict(tip_deflection=tip.dot(B.y), tip_foreshortening=L - tip.dot(B.x)))


def rotating_beam(n_modes: int = 4, out_of_plane: bool = True) -> Model:
    """A cantilever at the axis of a hub spinning at the constant rate Omega about N.z,
    bending in the plane of rotation (chordwise, y) and, with ``out_of_plane``, normal
    to it (flapwise, z). Constants L, EI, rho_A and Omega; states the modal coordinates
    and speeds (chordwise first). ``linearize`` about eta = 0 gives the natural
    frequencies at that spin rate (Wright et al. 1982 for the flapwise ones)."""
    L, EI, rho_A, Omega = sm.symbols("L EI rho_A Omega")
    N = me.ReferenceFrame("N")
    B = N.orientnew("B", "Axis", (Omega * me.dynamicsymbols._t, N.z))
    O = me.Point("O")
    O.set_vel(N, 0)
    bending = ("y", "z") if out_of_plane else ("y",)
    eta, zeta = _beam_states(n_modes * len(bending), "")
    beam = FlexibleBody("beam", B, O, beam_modes(1.0, 1.0, 1.0, n_modes, bending=bending),
                        eta, zeta, constants=dict(L=L, EI=EI, rho_A=rho_A))
    return Model(
        name="rotating_beam", frame=N, q_ind=list(eta), u_ind=list(zeta), kd_eqs=beam.kd_eqs(),
        bodies=[beam], constants=[L, EI, rho_A, Omega], doc=rotating_beam.__doc__,
        parameter_values=dict(L=KRB["L"], EI=KRB["EI"], rho_A=KRB["rho_A"], Omega=2.0),
        initial_state=[0.01] + [0.0] * (2 * len(eta) - 1), stiff=True,
        potential_energy=beam.elastic_energy())


def _euler_rates(a, w):
    """Body-fixed XYZ angle rates of a frame from its angular velocity in its own
    components (singular at a[1] = +-pi/2)."""
    c1, s1, c2, s2 = sm.cos(a[1]), sm.sin(a[1]), sm.cos(a[2]), sm.sin(a[2])
    E = sm.Matrix([[c2 / c1, -s2 / c1, 0], [s2, c2, 0], [-s1 * c2 / c1, s1 * s2 / c1, 1]])
    return E * sm.Matrix(w)


def spacecraft(n_modes: int = 4, damping_ratio: float = 0.0, nodes: int | None = None,
               geometric_stiffening: bool = True) -> Model:
    """A free-floating rigid hub (a 2 m cube of 500 kg) with two flexible solar panels,
    cantilevers of 6 m along +-y from the hub's faces, each with ``n_modes`` modes
    (half bending out of the panel plane, half in it), slewed by a torque T about the
    hub's z axis. States: the hub's position x0:3 and body-fixed XYZ angles a0:3, the
    panels' modal coordinates; speeds the hub's velocity in N, its angular velocity in
    its own frame, the modal speeds. Outputs: ``energy`` (kinetic plus elastic),
    ``angular_momentum`` (about N's origin, in N) and ``linear_momentum`` (in N), those
    of the panels from the kinetic energy the equations are Lagrange's of.
    ``nodes``: the panels as FE-style node data (:func:`~codegen.flexible.fe_beam`,
    that many nodes, no damping) instead of analytic beams."""
    if not (isinstance(n_modes, int) and n_modes >= 2 and n_modes % 2 == 0):
        raise ValueError(f"spacecraft: n_modes per panel must be an even number >= 2 "
                         f"(out of plane and in plane), got {n_modes!r}")
    N = me.ReferenceFrame("N")
    x, a = me.dynamicsymbols("x0:3"), me.dynamicsymbols("a0:3")
    v, w = me.dynamicsymbols("v0:3"), me.dynamicsymbols("w0:3")
    H = N.orientnew("H", "Body", a, "XYZ")
    H.set_ang_vel(N, w[0] * H.x + w[1] * H.y + w[2] * H.z)
    Ho = me.Point("Ho")
    No = me.Point("No")
    Ho.set_pos(No, x[0] * N.x + x[1] * N.y + x[2] * N.z)
    Ho.set_vel(N, v[0] * N.x + v[1] * N.y + v[2] * N.z)
    m_hub, side = 500.0, 2.0
    Ih = m_hub * side**2 / 6
    hub = me.RigidBody("hub", Ho, H, m_hub, (me.inertia(H, Ih, Ih, Ih), Ho))
    if nodes is None:
        modes = beam_modes(6.0, 2.0e3, 4.0, n_modes // 2, bending=("z", "y"),
                           damping_ratio=damping_ratio)
    else:
        modes = fe_beam(nodes, 6.0, 2.0e3, 4.0, n_modes // 2, bending=("z", "y"),
                        geometric_stiffening=geometric_stiffening)
    q, u, bodies = list(x) + list(a), list(v) + list(w), [hub]
    kd = [x[i].diff() - v[i] for i in range(3)] + \
        list(sm.Matrix([ai.diff() for ai in a]) - _euler_rates(a, w))
    for label, sign in (("p", 1), ("m", -1)):
        P = H.orientnew(f"P{label}", "Axis", (sign * sm.pi / 2, H.z))   # P.x = +-H.y
        Po = Ho.locatenew(f"P{label}o", sign * side / 2 * H.y)
        Po.v2pt_theory(Ho, N, H)
        eta, zeta = _beam_states(n_modes, label)
        panel = FlexibleBody(f"panel_{label}", P, Po, modes, eta, zeta,
                             geometric_stiffening=geometric_stiffening)
        bodies.append(panel)
        q += list(eta)
        u += list(zeta)
        kd += panel.kd_eqs()
    Tz = me.dynamicsymbols("T")
    V = sum(b.elastic_energy() for b in bodies[1:])
    return Model(
        name="spacecraft", frame=N, q_ind=q, u_ind=u, kd_eqs=kd, bodies=bodies,
        loads=[(H, Tz * H.z)], specifieds=[Tz], doc=spacecraft.__doc__,
        parameter_values={}, initial_state=[0.0] * len(q + u), stiff=True,
        conservative=damping_ratio == 0, potential_energy=V,
        outputs=dict(energy=sum(b.kinetic_energy(N) for b in bodies) + V,
                     linear_momentum=sum((b.linear_momentum(N) for b in bodies),
                                         me.Vector(0)).to_matrix(N),
                     angular_momentum=sum((b.angular_momentum(No, N) for b in bodies),
                                          me.Vector(0)).to_matrix(N)))


def flexible_arm(n_modes: int = 2) -> Model:
    """A two-link arm in a vertical plane (gravity g along -N.y): a rigid first link
    (1 m, 5 kg) on a revolute joint at the origin and a flexible second link (a
    cantilever of 1.5 m, EI = 200 N m^2, rho A = 2 kg/m, in-plane bending) on a
    revolute joint at the first link's end, driven by joint torques T1 and T2.
    States q1, q2 (absolute angle of link 1, relative of link 2), the modes; outputs
    the tip's position in N (``tip``)."""
    N = me.ReferenceFrame("N")
    q1, q2, u1, u2 = me.dynamicsymbols("q1 q2 u1 u2")
    T1, T2 = me.dynamicsymbols("T1 T2")
    g = sm.Symbol("g")
    A = N.orientnew("A", "Axis", (q1, N.z))
    A.set_ang_vel(N, u1 * N.z)
    B = A.orientnew("B", "Axis", (q2, A.z))
    B.set_ang_vel(A, u2 * A.z)
    O = me.Point("O")
    O.set_vel(N, 0)
    l1, m1 = 1.0, 5.0
    Ac = O.locatenew("Ac", l1 / 2 * A.x)
    Ac.v2pt_theory(O, N, A)
    E = O.locatenew("E", l1 * A.x)
    E.v2pt_theory(O, N, A)
    link1 = me.RigidBody("link1", Ac, A, m1, (me.inertia(A, 0, m1 * l1**2 / 12,
                                                         m1 * l1**2 / 12), Ac))
    eta, zeta = _beam_states(n_modes, "")
    L2 = 1.5
    link2 = FlexibleBody("link2", B, E, beam_modes(L2, 200.0, 2.0, n_modes), eta, zeta,
                         gravity=-g * N.y)
    tip = link2.point_at(L2).pos_from(O).to_matrix(N)
    return Model(
        name="flexible_arm", frame=N, q_ind=[q1, q2] + list(eta), u_ind=[u1, u2] + list(zeta),
        kd_eqs=[q1.diff() - u1, q2.diff() - u2] + link2.kd_eqs(), bodies=[link1, link2],
        loads=[(Ac, -m1 * g * N.y), (A, (T1 - T2) * N.z), (B, T2 * N.z)], constants=[g],
        specifieds=[T1, T2], doc=flexible_arm.__doc__, parameter_values=dict(g=9.81),
        initial_state=[-math.pi / 2, 0.3] + [0.0] * (2 * n_modes + 2),
        stiff=True, conservative=True,
        potential_energy=(link2.elastic_energy() + m1 * g * Ac.pos_from(O).dot(N.y)
                          + g * (link2.mass * E.pos_from(O) + link2.first_moment()).dot(N.y)),
        outputs=dict(tip=tip))
