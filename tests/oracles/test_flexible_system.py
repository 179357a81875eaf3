"""Flexible bodies through the pipeline: GibbsAppellMethod's public matrices against
KanesMethod on the same node data as particles, generate, linearize, the compiled
integrators and export.

Oracles: KanesMethod (SymPy) on the nodes as particles on modal springs, the
Euler–Bernoulli cantilever roots, the published rotating-beam frequencies (Wright
et al. 1982) and the invariants of a free-floating body.
"""
import math

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from scipy.optimize import brentq

from codegen import GibbsAppellMethod, examples as ex, generate
from codegen.examples.flexible_bodies import _euler_rates
from codegen.flexible import FlexibleBody, fe_modes

_t = me.dynamicsymbols._t


def _hub_and_panel(flexible: bool, modes, D):
    """A free-floating rigid hub (translation in N, body-fixed XYZ angles, speeds its
    angular velocity in its own frame) with a panel on a revolute joint about the hub's
    z axis, loaded by gravity, a torque on the hub, a force at node 2 and the modal
    springs and dampers. flexible: the panel as a FlexibleBody; otherwise its nodes as
    particles at r + Phi eta, with the modal forces on one auxiliary point per mode."""
    N = me.ReferenceFrame("N")
    x = me.dynamicsymbols("x0:3")
    a = me.dynamicsymbols("a0:3")
    v = me.dynamicsymbols("v0:3")
    w = me.dynamicsymbols("w0:3")
    qj, uj = me.dynamicsymbols("qj uj")
    n = modes.n
    eta, zeta = me.dynamicsymbols(f"eta0:{n}"), me.dynamicsymbols(f"zeta0:{n}")
    H = N.orientnew("H", "Body", a, "XYZ")
    H.set_ang_vel(N, w[0] * H.x + w[1] * H.y + w[2] * H.z)
    Ho = me.Point("Ho")
    Ho.set_vel(N, v[0] * N.x + v[1] * N.y + v[2] * N.z)
    P = H.orientnew("P", "Axis", (qj, H.z))
    P.set_ang_vel(H, uj * H.z)
    Po = Ho.locatenew("Po", 0.4 * H.x + 0.1 * H.y)
    Po.v2pt_theory(Ho, N, H)
    hub = me.RigidBody("hub", Ho, H, 7.0, (me.inertia(H, 2.0, 3.0, 4.0, 0.1, -0.2, 0.3), Ho))
    wH = H.ang_vel_in(N).to_matrix(H)
    kd = ([x[i].diff() - v[i] for i in range(3)]
          + list(sm.Matrix([a_.diff() for a_ in a]) - _euler_rates(a, wH))
          + [qj.diff() - uj] + [e.diff() - z for e, z in zip(eta, zeta)])
    g = -9.81 * N.z + 1.5 * N.x
    T, F = me.dynamicsymbols("T0:3"), me.dynamicsymbols("F0:3")
    loads = [(H, T[0] * H.x + T[1] * H.y + T[2] * H.z), (Ho, 7.0 * g)]
    force = F[0] * N.x + F[1] * N.y + F[2] * N.z
    if flexible:
        body = FlexibleBody("panel", P, Po, modes, eta, zeta, geometric_stiffening=False,
                            gravity=g, damping=D)
        bodies = [hub, body]
        loads.append((body.node(2, N), force))
    else:
        bodies = [hub]
        pts = []
        for i in range(len(modes.mass)):
            r = modes.position[i]
            disp = [sum(float(modes.shape[i, c, k]) * eta[k] for k in range(n)) for c in range(3)]
            p = Po.locatenew(f"n{i}", sum(((float(r[c]) + disp[c]) * [P.x, P.y, P.z][c]
                                           for c in range(3)), me.Vector(0)))
            p.set_vel(P, p.pos_from(Po).dt(P))
            p.v1pt_theory(Po, N, P)
            bodies.append(me.Particle(f"m{i}", p, float(modes.mass[i])))
            loads.append((p, float(modes.mass[i]) * g))
            pts.append(p)
        loads.append((pts[2], force))
        # a modal spring: a point at eta_k along N.x of a fixed frame has partial
        # velocity N.x for zeta_k alone
        K = np.asarray(modes.stiffness, float)
        for k in range(n):
            s = me.Point(f"s{k}")
            s.set_vel(N, zeta[k] * N.x)
            fk = -sum(K[k, l] * eta[l] + D[k, l] * zeta[l] for l in range(n))
            loads.append((s, fk * N.x))
    q = list(x) + list(a) + [qj] + list(eta)
    u = list(v) + list(w) + [uj] + list(zeta)
    return N, q, u, kd, bodies, loads, list(T) + list(F)


def _node_data(seed=1, nodes=3, n=2):
    rng = np.random.default_rng(seed)
    pos = rng.normal(size=(nodes, 3))
    shapes = rng.normal(size=(nodes, 3, n)) * 0.5
    K = rng.normal(size=(n, n))
    K = K @ K.T + 3 * np.eye(n)
    D = 0.05 * K
    return fe_modes(pos, rng.uniform(0.5, 2, nodes), shapes, K,
                    geometric_stiffening=False), D


def test_flexible_body_matches_particles_on_springs_in_kanes_method():
    """The same node data: GibbsAppellMethod with a FlexibleBody (no foreshortening, so
    its second-order S is the particles' exact one) against KanesMethod with the nodes
    as particles, at random states and inputs: mass matrix and forcing to rounding."""
    modes, D = _node_data()
    flex = _hub_and_panel(True, modes, D)
    part = _hub_and_panel(False, modes, D)
    N, q, u, kd, bodies, loads, r = flex
    ga = GibbsAppellMethod(N, q, u, kd_eqs=kd)
    ga.kanes_equations(bodies, loads)
    N2, q2, u2, kd2, bodies2, loads2, r2 = part
    km = me.KanesMethod(N2, q2, u2, kd_eqs=kd2)
    km.kanes_equations(bodies2, loads2)
    f_ga = sm.lambdify([q + u + r], [ga.mass_matrix_full, ga.forcing_full], cse=True)
    f_km = sm.lambdify([q2 + u2 + r2], [km.mass_matrix_full, km.forcing_full], cse=True)
    rng = np.random.default_rng(4)
    for _ in range(3):
        s = rng.normal(size=len(q + u + r)) * 0.6
        (Ma, Fa), (Mk, Fk) = f_ga(s), f_km(s)
        Ma, Mk = np.array(Ma, float), np.array(Mk, float)
        Fa, Fk = np.array(Fa, float).ravel(), np.array(Fk, float).ravel()
        assert np.abs(Ma - Mk).max() < 1e-11 * np.abs(Mk).max()
        assert np.abs(Fa - Fk).max() < 1e-11 * np.abs(Fk).max()


# ---- frequencies from linearize ---------------------------------------------------

#: Wright et al. (1982): first flapwise nondimensional frequency at nu, zero hub radius
WRIGHT = {0: 3.5160, 1: 3.6816, 2: 4.1373, 3: 4.7973, 4: 5.5850, 5: 6.4495, 10: 11.2023}


@pytest.fixture(scope="session")
def rotating(tmp_path_factory):
    """rotating_beam(n) compiled, per n."""
    out, cache = tmp_path_factory.mktemp("rotating"), {}

    def get(n):
        if n not in cache:
            model = ex.rotating_beam(n, out_of_plane=True)
            cache[n] = generate(GibbsAppellMethod(**model.kwargs), f"rotating_beam{n}",
                                output_dir=out)
        return cache[n]
    return get


def _frequencies(A, idx):
    """The undamped frequencies of the states idx (coordinates then speeds) of A."""
    ev = np.linalg.eigvals(A[np.ix_(idx, idx)])
    assert np.abs(ev.real).max() < 1e-8 * np.abs(ev).max()
    return np.sort(np.abs(ev.imag))[::2]


def test_cantilever_frequencies_from_linearize(rotating):
    """Not spinning: beta_k L from the compiled linearize equal the roots of
    cos(b) cosh(b) = -1 to 1e-6 (published 1.8751, 4.6941, 7.8548), both directions."""
    mod = rotating(4)
    L, EI, rA = 10.0, 1.4e4, 1.2
    p = mod.parameters(dict(L=L, EI=EI, rho_A=rA, Omega=0.0))
    A, _ = mod.linearize(np.zeros(mod.nx), p, [])
    roots = [brentq(lambda b: np.cos(b) * np.cosh(b) + 1, a, a + 1.5) for a in (1.0, 4.0, 7.0)]
    for d in range(2):                       # chordwise (y), flapwise (z)
        idx = [d * 4 + k for k in range(4)] + [8 + d * 4 + k for k in range(4)]
        beta = np.sqrt(_frequencies(A, idx) / np.sqrt(EI / (rA * L**4)))
        assert np.allclose(beta[:3], roots, rtol=1e-6, atol=0)
        assert np.allclose(beta[:3], [1.8751, 4.6941, 7.8548], atol=6e-5)


def test_rotating_beam_matches_wright_through_linearize(rotating):
    """Unit L, EI, rho_A: the first flapwise frequency of the compiled rotating_beam at
    spin nu matches Wright et al., converging in the mode count (max errors 6.1e-3,
    6.0e-4, 1.2e-4 at 2, 4, 6 modes); chordwise omega^2 = omega_flap^2 - nu^2; the
    two directions do not couple about eta = 0."""
    errors = []
    for n in (2, 4, 6):
        mod = rotating(n)
        flap = list(range(n, 2 * n)) + list(range(3 * n, 4 * n))
        chord = list(range(n)) + list(range(2 * n, 3 * n))
        err = 0.0
        for nu, ref in WRIGHT.items():
            p = mod.parameters(dict(L=1.0, EI=1.0, rho_A=1.0, Omega=float(nu)))
            A, _ = mod.linearize(np.zeros(mod.nx), p, [])
            assert np.abs(A[np.ix_(flap, chord)]).max() < 1e-12
            err = max(err, abs(_frequencies(A, flap)[0] / ref - 1))
            if n == 6 and nu in (2, 5):
                assert _frequencies(A, chord)[0] == pytest.approx(math.sqrt(ref**2 - nu**2),
                                                                  rel=1e-4)
        errors.append(err)
    assert errors[0] > errors[1] > errors[2] and errors[2] < 2e-4, errors


# ---- conservation through the compiled model ------------------------------------------

@pytest.fixture(scope="session")
def spacecraft2(tmp_path_factory):
    model = ex.spacecraft(2)
    ga = GibbsAppellMethod(**model.kwargs)
    mod = generate(ga, "spacecraft2", outputs=model.outputs,
                   output_dir=tmp_path_factory.mktemp("spacecraft"))
    return model, ga, mod


def test_spacecraft_conserves_energy_and_angular_momentum(spacecraft2):
    """Free-floating, no damping, no torque: energy, linear and angular momentum (about
    N's origin) constant to 1e-9 relative over 100 s (dopri5 at 1e-12)."""
    model, _, mod = spacecraft2
    x0 = np.zeros(mod.nx)
    names = mod.states
    start = dict(v0=0.05, w0=0.01, w1=-0.02, w2=0.1, eta_p1=0.05, eta_m2=-0.03, zeta_p2=0.02)
    for k, v in start.items():
        x0[names.index(k)] = v
    run = mod.simulate((0, 100), x0, mod.parameters({}), [0.0], method="dopri5", rtol=1e-12,
                       atol=1e-12, t_eval=np.linspace(0, 100, 201))
    assert run.success
    assert np.ptp(run.x[:, names.index("eta_p1")]) > 0.05          # it vibrates
    E, H, P = (run.outputs[k] for k in ("energy", "angular_momentum", "linear_momentum"))
    assert np.ptp(E) < 1e-9 * E[0]
    assert np.abs(H - H[0]).max() < 1e-9 * np.linalg.norm(H[0])
    assert np.abs(P - P[0]).max() < 1e-9 * np.linalg.norm(P[0])
    # the slew torque: dH/dt = T about the hub's z axis, seen in N
    slew = mod.simulate((0, 2), x0, mod.parameters({}), [5.0], method="bdf", rtol=1e-10,
                        atol=1e-10, t_eval=[0.0, 2.0])
    assert slew.success
    assert abs(slew.outputs["angular_momentum"][1, 2] - H[0, 2] - 10.0) < 0.05



def test_flexible_arm_conserves_energy_under_gravity(tmp_path):
    """The two-link arm with a flexible second link, no torques, gravity on both links
    (the flexible one through its deformed mass distribution): kinetic plus potential
    energy constant to 1e-9 relative over 5 s; bdf and rosw agree with dopri5."""
    model = ex.flexible_arm(2)
    ga = GibbsAppellMethod(**model.kwargs)
    mod = generate(ga, "flexible_arm2", output_dir=tmp_path,
                   outputs=dict(energy=model.energy(), tip=model.outputs["tip"]))
    p = mod.parameters(model.parameter_values)
    t = np.linspace(0, 5, 51)
    runs = {m: mod.simulate((0, 5), model.initial_state, p, [0.0, 0.0], method=m, rtol=1e-12
                            if m == "dopri5" else 1e-9, atol=1e-12 if m == "dopri5" else 1e-11,
                            t_eval=t) for m in ("dopri5", "bdf", "rosw")}
    E = runs["dopri5"].outputs["energy"]
    assert np.ptp(E) < 1e-9 * np.abs(E).max()
    eta = runs["dopri5"].x[:, 2]
    assert np.ptp(eta) > 1e-3                                  # the link bends
    for m in ("bdf", "rosw"):
        assert np.abs(runs[m].x - runs["dopri5"].x).max() < 1e-5
    # the tip hangs below the shoulder at rest position, 2.5 m of arm
    assert np.linalg.norm(runs["dopri5"].outputs["tip"][0]) == pytest.approx(2.5, abs=0.1)


def test_fmu_of_the_spin_up(tmp_path):
    """export_fmu of spin_up_beam (explicit time in the prescribed hub angle): valid,
    and its co-simulation equals simulate at the same tolerance."""
    fmpy = pytest.importorskip("fmpy")
    from fmpy.validation import validate_fmu
    from codegen import export_fmu
    model = ex.spin_up_beam(2, omega=4.0)
    ga = GibbsAppellMethod(**model.kwargs)
    mod = generate(ga, "spin_up_fmu", output_dir=tmp_path / "py")
    p = mod.parameters(model.parameter_values)
    values = dict(zip(mod.constants, p))
    path = export_fmu(ga, "spin_up_fmu", tmp_path, start_values=values, method="bdf",
                      tolerance=1e-8)
    assert validate_fmu(str(path)) == []
    res = fmpy.simulate_fmu(str(path), stop_time=5.0, output_interval=0.1,
                            fmi_type="CoSimulation", output=mod.states)
    cosim = np.array([res[s] for s in mod.states]).T
    ours = mod.simulate((0, 5.0), model.initial_state, p, method="bdf", rtol=1e-8, atol=1e-8,
                        t_eval=res["time"])
    assert np.abs(ours.x).max() > 1e-3
    assert abs(cosim - ours.x).max() < 1e-9


# ---- bad input ---------------------------------------------------------------------

def test_too_large_deformation_is_reported(tmp_path):
    """The linear modal model in the spin-up at Omega = 10 diverges: the body's
    deformation event ends the run, named, once the RMS deflection passes 10 % of
    the beam's size; the stiffened model never reaches it."""
    runs = {}
    for stiff in (True, False):
        model = ex.spin_up_beam(2, omega=10.0, geometric_stiffening=stiff)
        beam = model.bodies[0]
        events = beam.deformation_event(0.1)
        mod = generate(GibbsAppellMethod(**model.kwargs), f"spin_up_event{int(stiff)}",
                       output_dir=tmp_path, events=events)
        runs[stiff] = mod.simulate((0, 20.0), model.initial_state,
                                   mod.parameters(model.parameter_values), method="bdf",
                                   rtol=1e-8, atol=1e-10,
                                   events={"beam_deformation": {"direction": -1, "terminal": True}})
    assert runs[True].events == [] and runs[True].t[-1] == 20.0
    name, t_stop, _ = runs[False].events[0]
    assert name == "beam_deformation" and 5.0 < t_stop < 20.0
    assert runs[False].status == 17 and runs[False].t[-1] <= t_stop     # CG_TERMINAL_EVENT
    with pytest.raises(ValueError, match="deformation limit"):
        model.bodies[0].deformation_event(2.0)


def test_bad_flexible_input_in_the_model():
    """Modal coordinates missing from the model's coordinates, and bad modal matrices
    given to the body, are errors that name what is wrong."""
    modes, D = _node_data()
    N, q, u, kd, bodies, loads, _ = _hub_and_panel(True, modes, D)
    n = modes.n
    ga = GibbsAppellMethod(N, q[:-n], u[:-n], kd_eqs=kd[:-n])
    with pytest.raises(ValueError, match=r"modal coordinates eta0\(t\), eta1\(t\) of "
                                         r"flexible body 'panel' are not coordinates"):
        ga.kanes_equations(bodies, loads)
    P, Po, eta, zeta = bodies[1].frame, bodies[1].origin, bodies[1].q, bodies[1].u
    for K, match in ((np.array([[1.0, 0.2], [0.0, 1.0]]), "not symmetric"),
                     (-np.eye(2), "not positive semidefinite"),
                     (np.eye(3), "expected 2 x 2")):
        with pytest.raises(ValueError, match=match):
            FlexibleBody("panel", P, Po, modes, eta, zeta, stiffness=K,
                         geometric_stiffening=False)
    with pytest.raises(ValueError, match="not positive definite"):
        fe_modes(modes.position, modes.mass, np.ones((3, 3, 2)), np.eye(2),
                 geometric_stiffening=False)


def test_system_and_the_symbolic_linearize():
    """SymPy's System takes a FlexibleBody (eom_method=GibbsAppellMethod) and gives the
    matrices GibbsAppellMethod gives directly; GibbsAppellMethod.linearize of the
    rotating beam gives the cantilever roots at rest and Wright's chordwise value."""
    model = ex.flexible_arm(1)
    system = me.System(model.frame, fixed_point=me.Point("O0"))
    system.add_coordinates(*model.q_ind)
    system.add_speeds(*model.u_ind)
    system.add_kdes(*model.kd_eqs)
    system.add_bodies(*model.bodies)
    system.add_loads(*model.loads)
    system.form_eoms(eom_method=GibbsAppellMethod)
    ga = GibbsAppellMethod(**model.kwargs)
    ga.kanes_equations(model.bodies, model.loads)
    args = model.q_ind + model.u_ind + model.specifieds + model.constants
    values = np.random.default_rng(2).normal(size=len(args))
    for a, b in ((system.mass_matrix_full, ga.mass_matrix_full),
                 (system.forcing_full, ga.forcing_full)):
        a, b = (np.array(sm.lambdify([args], m)(values), float) for m in (a, b))
        assert np.abs(a - b).max() < 1e-12 * np.abs(b).max()
    beam = ex.rotating_beam(2, out_of_plane=False)
    ga = GibbsAppellMethod(**beam.kwargs)
    ga.kanes_equations(beam.bodies, beam.loads)
    A, _, _ = ga.linearize(op_point=dict.fromkeys(list(ga.q) + list(ga.u), 0), A_and_B=True)
    L, EI, rho_A, Omega = beam.constants
    f = sm.lambdify([Omega], A.subs({L: 1.0, EI: 1.0, rho_A: 1.0}))
    roots = [brentq(lambda b: np.cos(b) * np.cosh(b) + 1, a, a + 1.5) for a in (1.0, 4.0)]
    w0 = np.sort(np.abs(np.linalg.eigvals(np.array(f(0.0), float)).imag))[::2]
    assert np.allclose(np.sqrt(w0), roots, rtol=1e-6)
    w2 = np.sort(np.abs(np.linalg.eigvals(np.array(f(2.0), float)).imag))[::2]
    assert w2[0] == pytest.approx(math.sqrt(WRIGHT[2]**2 - 4), rel=1e-3)
