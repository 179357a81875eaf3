"""Small models with outputs, events, impacts and feedback, shared by the hybrid-run tests
(compiled once per session in conftest.py)."""
import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from codegen import GibbsAppellMethod, generate, potential_energy
from codegen.equations.equations_of_motion import assemble


def pendulum(out):
    """A simple pendulum with its energies, the bob's position, the rod's orientation and
    q' as outputs, and events where the rod passes the vertical (q) and turns (u)."""
    q, u = me.dynamicsymbols('q u')
    m, g, l = sm.symbols('m g l')
    N = me.ReferenceFrame('N')
    A = N.orientnew('A', 'Axis', [q, N.z])
    O = me.Point('O')
    O.set_vel(N, 0)
    P = O.locatenew('P', l * A.x)
    P.v2pt_theory(O, N, A)
    bob = me.Particle('bob', P, m)
    bob.potential_energy = m * g * P.pos_from(O).dot(N.y)
    ga = GibbsAppellMethod(N, [q], [u], kd_eqs=[u - q.diff()])
    ga.kanes_equations([bob], [(P, -m * g * N.y)])
    outputs = {"T": "kinetic_energy", "V": "potential_energy",
               "V_loads": potential_energy([(P, -m * g * N.y)], O, N),
               "p": P.pos_from(O).to_matrix(N), "R": N.dcm(A), "qd": q.diff()}
    mod = generate(ga, "hy_pendulum", output_dir=out, outputs=outputs,
                   events={"vertical": q, "turn": u})
    return dict(mod=mod, ga=ga, p=mod.parameters(m=1.0, g=9.81, l=1.0), symbols=(q, u, m, g, l),
                frames=(N, A), points=(O, P))


def ball(out):
    """A ball dropped on the floor y = 0: its impact with restitution e, the apex as an
    event (v falling through 0), its height and energy as outputs."""
    y, v = me.dynamicsymbols('y v')
    m, g, e = sm.symbols('m g e')
    N = me.ReferenceFrame('N')
    O = me.Point('O')
    O.set_vel(N, 0)
    P = O.locatenew('P', y * N.y)
    P.set_vel(N, v * N.y)
    ga = GibbsAppellMethod(N, [y], [v], kd_eqs=[v - y.diff()])
    ga.kanes_equations([me.Particle('b', P, m)], [(P, -m * g * N.y)])
    kw = dict(constants=[m, g, e], events={"floor": y, "apex": v},
              impacts={"floor": (P, N.y, e)}, outputs={"E": "kinetic_energy", "h": y})
    mod = generate(ga, "hy_ball", output_dir=out, **kw)
    return dict(mod=mod, ga=ga, kw=kw, values=dict(m=1.0, g=9.81, e=0.9),
                p=mod.parameters(m=1.0, g=9.81, e=0.9))


def rimless_wheel(out):
    """McGeer's rimless wheel on a slope gamma: the stance phase (a wheel of mass m and
    radius of gyration k pivoting on its stance spoke's foot, angle phi from the
    vertical) with the front foot's gap as the event "strike", and the free wheel (hub
    x, y, orientation psi) whose generated impact at the front foot, plastic and sticking
    (normal and tangent, restitution 0), is the strike."""
    m, g, l, k, alpha, gamma = sm.symbols('m g l k alpha gamma')
    consts = [m, g, l, k, alpha, gamma]
    N = me.ReferenceFrame('N')
    O = me.Point('O')
    O.set_vel(N, 0)
    normal = sm.sin(gamma) * N.x + sm.cos(gamma) * N.y
    tangent = sm.cos(gamma) * N.x - sm.sin(gamma) * N.y

    def front_foot(hub, frame):         # the next spoke, 2 alpha ahead
        return hub.locatenew('F', -l * (-sm.sin(2 * alpha) * frame.x + sm.cos(2 * alpha) * frame.y))

    phi, w = me.dynamicsymbols('phi w')
    W = N.orientnew('W', 'Axis', [-phi, N.z])
    P = O.locatenew('P', l * W.y)
    P.v2pt_theory(O, N, W)
    stance = GibbsAppellMethod(N, [phi], [w], kd_eqs=[w - phi.diff()])
    stance.kanes_equations([me.RigidBody('wheel', P, W, m, (me.inertia(W, 0, 0, m * k**2), P))],
                           [(P, -m * g * N.y)])
    smod = generate(stance, "hy_rimless_stance", output_dir=out, constants=consts,
                    events={"strike": front_foot(P, W).pos_from(O).dot(normal)})
    x, y, psi, ux, uy, wz = me.dynamicsymbols('x y psi ux uy wz')
    V = N.orientnew('V', 'Axis', [psi, N.z])
    V.set_ang_vel(N, wz * N.z)
    H = O.locatenew('H', x * N.x + y * N.y)
    H.set_vel(N, ux * N.x + uy * N.y)
    F = front_foot(H, V)
    F.v2pt_theory(H, N, V)
    free = GibbsAppellMethod(N, [x, y, psi], [ux, uy, wz],
                             kd_eqs=[ux - x.diff(), uy - y.diff(), wz - psi.diff()])
    free.kanes_equations([me.RigidBody('wheel', H, V, m, (me.inertia(V, 0, 0, m * k**2), H))],
                         [(H, -m * g * N.y)])
    fmod = generate(free, "hy_rimless_free", output_dir=out, constants=consts,
                    events={"strike": F.pos_from(O).dot(normal)},
                    impacts={"strike": (F, [normal, tangent], 0)})
    values = dict(m=1.0, g=1.0, l=1.0, k=0.3, alpha=np.pi / 8, gamma=0.08)
    return dict(stance=smod, free=fmod, values=values, ps=smod.parameters(values),
                pf=fmod.parameters(values))


def simplest_walker(out):
    """Garcia, Chatterjee, Ruina & Coleman (1998), eqs. (2)-(3): the simplest walking
    model's nondimensional equations, theta'' = sin(theta - gamma), phi'' =
    sin(theta - gamma) + sin(phi) (theta'^2 - cos(theta - gamma)), compiled as
    neutral equations, with heelstrike at phi - 2 theta = 0."""
    gam = sm.Symbol('gamma')
    q = [sm.Dummy('theta'), sm.Dummy('phi')]
    u = [sm.Dummy('thetad'), sm.Dummy('phid')]
    F = sm.Matrix([sm.sin(q[0] - gam),
                   sm.sin(q[0] - gam) + sm.sin(q[1]) * (u[0]**2 - sm.cos(q[0] - gam))])
    eq = assemble(q, u, list(u), sm.eye(2), F, True, [gam], [],
                  ['theta', 'phi', 'thetad', 'phid'], 'Garcia et al. (1998), eqs. (2)-(3)')
    theta, phi = me.dynamicsymbols('theta phi')
    return generate(eq, "hy_walker", output_dir=out, events={"heelstrike": phi - 2 * theta})
