"""Flexible bodies, phase 1: mode data, invariants and the body's terms against oracles.

Oracles: the Euler–Bernoulli frequency equations (roots found here by SciPy), the
body as point masses differentiated by SymPy (tests/support/flexible_oracle.py), the
published rotating-beam frequencies (Wright et al. 1982), conservation of energy
and angular momentum, and Exudyn's geometrically exact ANCF beam in the spin-up.
"""
import math

import numpy as np
import pytest
import sympy as sm
from scipy.integrate import solve_ivp
from scipy.optimize import brentq
from sympy.physics.vector import Point, ReferenceFrame, dynamicsymbols

from codegen.flexible import FlexibleBody, beam_modes, beams, fe_modes
from codegen.flexible.invariants import invariants
from codegen.flexible.terms import body_terms
from flexible_oracle import PointOracle

#: Wright et al. (1982): first flapwise nondimensional frequency at nu, zero hub radius
WRIGHT = {0: 3.5160, 1: 3.6816, 2: 4.1373, 3: 4.7973, 4: 5.5850, 5: 6.4495, 10: 11.2023}


def _freqs(K, M):
    return np.sqrt(np.sort(np.linalg.eigvals(np.linalg.solve(M, K)).real))


def _terms_fn(inv):
    """The body's M_b, h_b, Q lambdified: fn(w, eta, etad, gB) -> numpy arrays."""
    n = inv.n
    w, eta, etad, g = (sm.symbols("w0:3"), sm.symbols(f"e0:{n}"), sm.symbols(f"d0:{n}"),
                       sm.symbols("g0:3"))
    bt = body_terms(inv, w, eta, etad, gravity=g)
    f = sm.lambdify([w, eta, etad, g], [bt.M, bt.h, bt.Q], "numpy")

    def fn(wv, e, d, gB):
        M, h, Q = f(wv, e, d, np.zeros(3) if gB is None else gB)
        return (np.array(M, dtype=float), np.array(h, dtype=float).ravel(),
                np.array(Q, dtype=float).ravel())
    return fn


def fe_beam(nodes: int, L=10.0, EI=14.0, rho_A=1.2, modes=3, bending=("y", "z"),
            rotary_inertia=None):
    """A cantilever as FE programs export it (codegen.flexible.fe_beam: Hermite beam
    elements, lumped node masses, modes from numpy with the rotations condensed out)."""
    return beams.fe_beam(nodes, L, EI, rho_A, modes, bending=bending,
                         rotary_inertia=rotary_inertia)


# ---- mode data ----------------------------------------------------------------

def test_cantilever_and_free_free_frequencies():
    L, EI, rA = 10.0, 14.0, 1.2
    scale = math.sqrt(EI / (rA * L**4))
    for kind, f in (("cantilever", lambda b: 1 + math.cos(b) * math.cosh(b)),
                    ("free-free", lambda b: math.cos(b) * math.cosh(b) - 1)):
        start = 1.0 if kind == "cantilever" else 3.0
        roots = [brentq(f, a, a + 0.5) for a in np.arange(start, 24, 0.5)
                 if f(a) * f(a + 0.5) < 0][:6]
        m = beam_modes(L, EI, rA, 6, kind=kind)
        got = _freqs(m.stiffness, m.modal_mass)
        assert np.allclose(got, np.array(roots) ** 2 * scale, rtol=1e-9, atol=0)
    m = beam_modes(L, EI, rA, 3)
    published = np.array([1.8751, 4.6941, 7.8548])
    assert np.allclose(np.sqrt(_freqs(m.stiffness, m.modal_mass) / scale), published, atol=6e-5)
    # free-free elastic modes satisfy the mean-axis conditions
    ff = beam_modes(L, EI, rA, 4, kind="free-free", bending=("y", "z"))
    inv = invariants(ff)
    assert np.abs(inv.S1).max() < 1e-12 * inv.mass
    assert np.abs(inv.C1).max() < 1e-11 * inv.mass * L


def test_polynomial_and_fe_data_approach_the_exact_beam():
    L, EI, rA = 10.0, 14.0, 1.2
    exact = _freqs(beam_modes(L, EI, rA, 3).stiffness, beam_modes(L, EI, rA, 3).modal_mass)
    poly = beam_modes(L, EI, rA, 6, kind="polynomial")
    p = _freqs(poly.stiffness, poly.modal_mass)[:2]
    # Rayleigh–Ritz bounds the frequencies from above, up to round-off: six monomials'
    # modal mass has a condition number near 1e9 (the first frequency's Ritz excess,
    # about 1e-10, is below it; LAPACK builds differ there)
    d = np.sqrt(np.diag(poly.modal_mass))
    tol = 10 * np.linalg.cond(poly.modal_mass / np.outer(d, d)) * np.finfo(float).eps
    assert np.all(p >= exact[:2] * (1 - tol)) and np.allclose(p, exact[:2], rtol=2e-3)
    assert p[1] > exact[1] * (1 + tol)             # the second one's excess (1.4e-5) is no noise
    errs = []
    for nodes in (11, 21, 41):
        fe = fe_beam(nodes, L, EI, rA, modes=2, bending=("y",))
        errs.append(abs(_freqs(fe.stiffness, fe.modal_mass)[0] / exact[0] - 1))
    assert errs[2] < 1e-3 and errs[0] > errs[1] > errs[2]


# ---- the terms against point masses ---------------------------------------------

@pytest.fixture(scope="module")
def oracle2():
    return PointOracle(2)


def test_terms_equal_point_masses_at_random_states(oracle2):
    """Random 3D point cloud, shapes and foreshortening: M_b, h_b and gravity equal the
    second-order S of the same points differentiated by SymPy, at rounding."""
    rng = np.random.default_rng(7)
    n, npts = 2, 5
    mass, r = rng.uniform(0.5, 2, npts), rng.normal(size=(npts, 3))
    Phi, G = rng.normal(size=(npts, 3, n)), rng.normal(size=(npts, n, n))
    G = G + G.transpose(0, 2, 1)
    modes = fe_modes(r, mass, Phi, np.diag([2.0, 3.0]), foreshortening=G)
    fn = _terms_fn(invariants(modes))
    g = np.array([0.3, -9.81, 1.2])
    for _ in range(2):
        state = rng.normal(size=2 * (6 + n)) * 0.7
        Mp, Rp, Qp = oracle2.particles(state, mass, r, Phi, G, [1, 0, 0], g=g)
        Mm, Rm, Qm = oracle2.body(state, fn, g=g)
        _, _, Qel = oracle2.body(state, fn, g=None)      # elastic part alone
        assert np.abs(Mm - Mp).max() < 1e-11 * np.abs(Mp).max()
        assert np.abs(Rm - Rp).max() < 1e-11 * np.abs(Rp).max()
        assert np.abs((Qm - Qel) - Qp).max() < 1e-11 * np.abs(Qp).max()


def test_beam_terms_converge_to_point_masses(oracle2):
    """The analytic beam (Gauss-integrated invariants) against the beam cut into N
    equal point masses at midpoints: agreement improves ~N^-2."""
    L, EI, rA = 10.0, 14.0, 1.2
    beam = beam_modes(L, EI, rA, 1, bending=("y", "z"))
    fn = _terms_fn(invariants(beam))
    state = np.random.default_rng(3).normal(size=16) * 0.5
    Mm, Rm, _ = oracle2.body(state, fn)
    errs = []
    for N in (10, 40):
        x = (np.arange(N) + 0.5) * L / N
        data = [beam.shape_at(xi) for xi in x]
        r = np.column_stack([x, np.zeros(N), np.zeros(N)])
        Mp, Rp, _ = oracle2.particles(state, np.full(N, rA * L / N), r,
                                      [d[0] for d in data], [d[1] for d in data], [1, 0, 0])
        errs.append(max(np.abs(Mp - Mm).max() / np.abs(Mm).max(),
                        np.abs(Rp - Rm).max() / np.abs(Rm).max()))
    assert errs[1] < 2e-3 and errs[0] / errs[1] > 10


@pytest.mark.parametrize("data", ["beam", "fe_rotary"])
def test_energy_and_momentum_conserved_free_rotation(data):
    """A beam bending in y and z on a free rigid hub (fixed point O): with the
    second-order S, energy and angular momentum are exact invariants (also with the
    rotary inertia of FE nodes)."""
    modes = beam_modes(10.0, 14.0, 1.2, 1, bending=("y", "z")) if data == "beam" \
        else fe_beam(6, modes=1, rotary_inertia=np.full(6, 0.05))
    inv = invariants(modes)
    n = inv.n
    w, eta, etad = sm.symbols("w0:3"), sm.symbols(f"e0:{n}"), sm.symbols(f"d0:{n}")
    bt = body_terms(inv, w, eta, etad)
    M = bt.M[3:, 3:] + sm.diag(50, 50, 50, *([0] * n))     # hub inertia 50 I
    V = sm.Matrix(list(w) + list(etad))
    E = (V.T * M * V)[0] / 2 + sum(inv.stiffness[k, k] * eta[k]**2 / 2 for k in range(n))
    f = sm.lambdify([w, eta, etad], [M, bt.Q[3:, :] - bt.h[3:, :], E, M[:3, :] * V])

    def ode(t, x):
        M_, r, _, _ = f(x[:3], x[3:3 + n], x[3 + n:3 + 2 * n])
        acc = np.linalg.solve(np.array(M_, float), np.array(r, float).ravel())
        R, wv = x[3 + 2 * n:].reshape(3, 3), x[:3]
        W = np.array([[0, -wv[2], wv[1]], [wv[2], 0, -wv[0]], [-wv[1], wv[0], 0]])
        return np.concatenate([acc[:3], x[3 + n:3 + 2 * n], acc[3:], (R @ W).ravel()])

    x0 = np.concatenate([[0.3, -0.2, 1.5], [0.2, -0.1], [0.05, 0.1], np.eye(3).ravel()])
    sol = solve_ivp(ode, (0, 10), x0, method="DOP853", rtol=1e-12, atol=1e-12)
    vals = [f(x[:3], x[3:3 + n], x[3 + n:3 + 2 * n]) for x in sol.y.T]
    energy = np.array([v[2] for v in vals])
    HN = np.array([x[3 + 2 * n:].reshape(3, 3) @ np.array(v[3], float).ravel()
                   for x, v in zip(sol.y.T, vals)])
    assert np.ptp(energy) < 1e-10 * energy[0]
    assert np.abs(HN - HN[0]).max() < 1e-10 * np.linalg.norm(HN[0])


# ---- centrifugal stiffening: published frequencies -------------------------------

def _spinning(modes, geometric_stiffening=True):
    """nu -> first frequency of the modal rows linearized about eta = 0 at spin nu
    about z (None where they diverge)."""
    inv = invariants(modes, geometric_stiffening)
    n = inv.n
    eta, etad, spin = sm.symbols(f"e0:{n}"), sm.symbols(f"d0:{n}"), sm.Symbol("spin")
    bt = body_terms(inv, [0, 0, spin], eta, etad)
    rows = bt.h[6:, :] - bt.Q[6:, :]
    at0 = dict.fromkeys(eta + etad, 0)
    f = sm.lambdify(spin, [rows.jacobian(eta).subs(at0), rows.jacobian(etad).subs(at0)])
    Minv = np.linalg.inv(np.array(bt.M[6:, 6:], float))

    def first(nu):
        K, C = (np.array(x, float) for x in f(nu))
        A = np.block([[np.zeros((n, n)), np.eye(n)], [-Minv @ K, -Minv @ C]])
        ev = np.linalg.eigvals(A)
        if np.max(ev.real) > 1e-9:
            return None
        return np.sort(np.abs(ev.imag[ev.imag > 1e-9]))[0]
    return first


def test_rotating_beam_matches_wright():
    """Unit L, EI, rho_A: frequencies are nondimensional. Flapwise (z) matches the
    published values, converging in the mode count; chordwise (y) obeys
    omega^2 = omega_flap^2 - Omega^2."""
    prev = None
    for n in (2, 4, 6):
        flap = _spinning(beam_modes(1.0, 1.0, 1.0, n, bending=("z",)))
        err = max(abs(flap(nu) / ref - 1) for nu, ref in WRIGHT.items())
        assert prev is None or err < prev
        prev = err
    assert prev < 2e-4
    chord = beam_modes(1.0, 1.0, 1.0, 6, bending=("y",))
    for nu in (2, 5):
        assert _spinning(chord)(nu) == pytest.approx(math.sqrt(WRIGHT[nu]**2 - nu**2), rel=1e-4)
    # without stiffening: no flapwise stiffening, and chordwise divergence above 3.516
    flap_linear = _spinning(beam_modes(1.0, 1.0, 1.0, 4, bending=("z",)), False)
    assert flap_linear(3) == pytest.approx(WRIGHT[0], rel=1e-4)
    assert _spinning(chord, False)(4) is None


def test_fe_data_foreshortening_from_slopes():
    """Beam-like FE node data: the foreshortening built from the node rotations gives
    the centrifugal stiffening, approaching Wright's value as the mesh is refined."""
    errs = []
    for nodes in (6, 11, 21):
        fe = fe_beam(nodes, 1.0, 1.0, 1.0, modes=3, bending=("z",))
        errs.append(abs(_spinning(fe)(4) / WRIGHT[4] - 1))
    assert errs[0] > errs[1] > errs[2] and errs[2] < 3e-3


# ---- the description ------------------------------------------------------------

def test_flexible_body_points_and_terms():
    N = ReferenceFrame("N")
    th = dynamicsymbols("th")
    B = N.orientnew("B", "Axis", (th, N.z))
    O = Point("O")
    O.set_vel(N, 0)
    eta, zeta = dynamicsymbols("eta1:3"), dynamicsymbols("zeta1:3")
    modes = beam_modes(10.0, 14.0, 1.2, 2)
    body = FlexibleBody("blade", B, O, modes, eta, zeta)
    tip = body.point_at(10.0, N)
    phi, G = modes.shape_at(10.0)
    vals = {eta[0]: 0.1, eta[1]: -0.02}
    pos = tip.pos_from(O).to_matrix(B).subs(vals)
    e = np.array([0.1, -0.02])
    assert float(pos[1]) == pytest.approx(phi[1] @ e)
    assert float(pos[0]) == pytest.approx(10.0 - e @ G @ e / 2)
    assert tip.vel(N).dot(B.y).has(sm.Derivative)      # eta' appears in its velocity
    plain = FlexibleBody("b2", B, O, modes, eta, zeta, geometric_stiffening=False)
    assert float(plain.point_at(10.0).pos_from(O).to_matrix(B).subs(vals)[0]) == 10.0
    assert body.kd_eqs()[1] == eta[1].diff() - zeta[1]
    w, s = sm.symbols("w0:3"), sm.symbols("s0:4")
    assert body.terms(w, s[:2], s[2:]).M.shape == (8, 8)


def test_beam_constants_stay_symbolic():
    """A beam's terms in free constants L, EI, rho_A equal, at values, those of the beam
    computed with those values; so do its points."""
    L, EI, rA = sm.symbols("L EI rho_A")
    N = ReferenceFrame("N")
    O = Point("O")
    eta, zeta = dynamicsymbols("eta1:3"), dynamicsymbols("zeta1:3")
    unit = beam_modes(1.0, 1.0, 1.0, 1, bending=("y", "z"), damping_ratio=0.02)
    sym = FlexibleBody("s", N, O, unit, eta, zeta, constants=dict(L=L, EI=EI, rho_A=rA))
    num = FlexibleBody("n", N, O, beam_modes(10.0, 14.0, 1.2, 1, bending=("y", "z"),
                                             damping_ratio=0.02), eta, zeta)
    w, e, d, g = sm.symbols("w0:3"), sm.symbols("e0:2"), sm.symbols("d0:2"), sm.symbols("g0:3")
    values = dict(zip(w + e + d + g, np.random.default_rng(5).normal(size=10)))
    values.update({L: 10.0, EI: 14.0, rA: 1.2})
    ts, tn = sym.terms(w, e, d, g), num.terms(w, e, d, g)
    for a, b in ((ts.M, tn.M), (ts.h, tn.h), (ts.Q, tn.Q)):
        a, b = np.array(a.subs(values), float), np.array(b.subs(values), float)
        assert np.abs(a - b).max() < 1e-12 * np.abs(b).max()
    at = {L: 10.0, eta[0]: 0.3, eta[1]: -0.2}
    ps = sym.point_at(1.0).pos_from(O).to_matrix(N).subs(at)
    pn = num.point_at(10.0).pos_from(O).to_matrix(N).subs(at)
    assert np.allclose(np.array(ps, float), np.array(pn, float), rtol=1e-12)
    assert sym.elastic_energy().has(EI)


# ---- bad input ------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    (dict(shapes=np.zeros((4, 3, 2))), "mode shapes have 4 nodes, but there are 3"),
    (dict(stiffness=-np.eye(2)), "modal stiffness is not positive semidefinite"),
    (dict(stiffness=[[1.0, 0.5], [0.0, 1.0]]), "modal stiffness is not symmetric"),
    (dict(damping=[[1.0, 0.0], [0.0, -1.0]]), "modal damping is not positive semidefinite"),
    (dict(shapes=np.ones((3, 3, 2))), "modal mass matrix is not positive definite"),
    (dict(masses=[1.0, -1.0, 1.0]), "negative mass"),
    (dict(stiffness=np.eye(3)), r"modal stiffness has shape \(3, 3\), expected 2 x 2"),
    (dict(geometric_stiffening=True), "needs the slopes"),
    (dict(shapes=np.full((3, 3, 2), np.nan)), "non-finite"),
])
def test_bad_mode_data(kwargs, match):
    rng = np.random.default_rng(0)
    args = dict(positions=np.column_stack([np.arange(3.0), np.zeros(3), np.zeros(3)]),
                masses=np.ones(3), shapes=rng.normal(size=(3, 3, 2)), stiffness=np.eye(2),
                geometric_stiffening=False)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        fe_modes(**args)


def test_bad_beam_and_body_input():
    with pytest.raises(ValueError, match="off the axis"):
        fe_modes([[0, 0, 0], [1, 0.5, 0]], [1, 1], np.ones((2, 6, 1)), np.eye(1))
    with pytest.raises(ValueError, match="EI must be a positive number"):
        beam_modes(10.0, -1.0, 1.0, 2)
    with pytest.raises(ValueError, match="kind"):
        beam_modes(10.0, 1.0, 1.0, 2, kind="pinned")
    N = ReferenceFrame("N")
    with pytest.raises(ValueError, match="2 modes but 1 modal coordinates"):
        FlexibleBody("b", N, Point("O"), beam_modes(1.0, 1.0, 1.0, 2),
                     dynamicsymbols("a:1"), dynamicsymbols("b:2"))
    nodal = fe_modes([[0, 0, 0], [1, 0, 0]], [1, 1], np.ones((2, 3, 1)), np.eye(1),
                     geometric_stiffening=False)
    with pytest.raises(ValueError, match="no foreshortening"):
        FlexibleBody("b", N, Point("O"), nodal, dynamicsymbols("a:1"), dynamicsymbols("b:1"))


# ---- the spin-up against Exudyn ------------------------------------------------

@pytest.fixture(scope="session")
def exudyn_reference():
    """Exudyn's spin-up per Omega, computed once (a modest mesh: 8 elements are within
    0.02 % of 32 at Omega = 10)."""
    pytest.importorskip("exudyn")
    from codegen.flexible.reference import exudyn_spin_up
    cache = {}

    def get(omega):
        if omega not in cache:
            cache[omega] = exudyn_spin_up(omega, t_end=20.0, elements=8, steps=2000)
        return cache[omega]
    return get


@pytest.mark.parametrize("omega", [4.0, 10.0])
def test_spin_up_against_exudyn(exudyn_reference, omega):
    """Above the first frequency (3.8 rad/s): the modal model with geometric stiffening
    follows the exact beam within 2 % of the peak; without it the tip deflection
    grows without bound."""
    from codegen.flexible.reference import modal_spin_up
    t, exact = exudyn_reference(omega)
    peak = np.abs(exact).max()
    assert 0.3 < peak < 1.0
    _, d = modal_spin_up(omega, n_modes=3, t_end=20.0, t_eval=t, rtol=1e-8, atol=1e-10)
    assert np.abs(d - exact).max() < 0.02 * peak
    _, lin = modal_spin_up(omega, n_modes=2, t_end=15.0, t_eval=t[t <= 15.0],
                           geometric_stiffening=False, rtol=1e-6, atol=1e-8)
    assert np.abs(lin).max() > 100 * peak


# ---- the spin-up through the pipeline ---------------------------------------------

@pytest.fixture(scope="module")
def spin_up_modules(tmp_path_factory):
    """spin_up_beam compiled: 3 modes with stiffening, 2 without, 3 from FE node data
    (11 and 41 nodes), with the tip outputs."""
    from codegen import GibbsAppellMethod, examples, generate
    out = tmp_path_factory.mktemp("spin_up")
    mods = {}
    for key, kw in (("exact", dict(n_modes=3)), ("linear", dict(n_modes=2, geometric_stiffening=False)),
                    ("fe11", dict(n_modes=3, nodes=11)), ("fe41", dict(n_modes=3, nodes=41))):
        model = examples.spin_up_beam(**kw)
        mods[key] = model, generate(GibbsAppellMethod(**model.kwargs), f"spin_up_{key}",
                                    outputs=model.outputs, output_dir=out)
    return mods


@pytest.mark.parametrize("omega", [4.0, 10.0])
def test_compiled_spin_up_against_exudyn(exudyn_reference, spin_up_modules, omega):
    """examples.spin_up_beam through generate: bdf and the Rosenbrock-W method follow
    Exudyn's exact beam within 2 % of the peak (the prescribed hub angle an explicit
    function of t); the linear modal model, compiled, diverges."""
    t, exact = exudyn_reference(omega)
    peak = np.abs(exact).max()
    model, mod = spin_up_modules["exact"]
    p = mod.parameters(dict(model.parameter_values, Omega=omega))
    ds = {}
    for method in ("bdf", "rosw"):
        run = mod.simulate((0, 20.0), model.initial_state, p, method=method, rtol=1e-8,
                           atol=1e-10, t_eval=t)
        assert run.success, run.message
        d = ds[method] = run.outputs["tip_deflection"]
        assert np.abs(d - exact).max() < 0.02 * peak
        # foreshortening: second order, positive, small against the deflection
        fs = run.outputs["tip_foreshortening"]
        assert fs.min() > -1e-12 and fs.max() < peak
    # a batch over both spin rates in C: each run equals its own simulate
    P = np.array([mod.parameters(dict(model.parameter_values, Omega=w)) for w in (4.0, 10.0)])
    batch = mod.simulate_batch((0, 20.0), np.zeros((2, mod.nx)), P, method="bdf", rtol=1e-8,
                               atol=1e-10, t_eval=t)
    row = [4.0, 10.0].index(omega)
    assert batch[2][row] == 0
    assert np.abs(batch.outputs["tip_deflection"][row] - ds["bdf"]).max() < 1e-9 * peak
    model, lin = spin_up_modules["linear"]
    run = lin.simulate((0, 15.0), model.initial_state, p, method="bdf", rtol=1e-6, atol=1e-8,
                       t_eval=t[t <= 15.0])
    assert np.abs(run.outputs["tip_deflection"]).max() > 100 * peak


def test_fe_node_data_spin_up_approaches_the_analytic_beam(spin_up_modules):
    """The same spin-up (Omega = 10) with FE-style node data (fe_beam: Hermite elements,
    lumped masses, modes from numpy): the tip deflection approaches the analytic
    beam's as the mesh is refined (11 -> 41 nodes)."""
    t = np.linspace(0, 20, 201)
    runs = {}
    for key, (model, mod) in spin_up_modules.items():
        p = mod.parameters(dict(model.parameter_values, Omega=10.0))
        runs[key] = mod.simulate((0, 20.0), model.initial_state, p, method="bdf", rtol=1e-9,
                                 atol=1e-11, t_eval=t).outputs["tip_deflection"]
    peak = np.abs(runs["exact"]).max()
    e11, e41 = (np.abs(runs[k] - runs["exact"]).max() / peak for k in ("fe11", "fe41"))
    assert e41 < e11 / 4 and e41 < 5e-3, (e11, e41)
