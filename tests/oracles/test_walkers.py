"""Walking with events and resets: the rimless wheel (McGeer 1990) against its analytic
step-to-step map, and the simplest walking model (Garcia, Chatterjee, Ruina & Coleman
1998) against its published period-one gait. Each stride is a simulate in C that ends at
the heelstrike event, found and differentiated with scipy.optimize."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq, root

from codegen.abi import STATUS_CODE

TERMINAL = STATUS_CODE["CG_TERMINAL_EVENT"]


@pytest.fixture(scope="module")
def wheel(hybrid):
    w = hybrid("rimless_wheel")
    v = w["values"]
    l, k, a = v["l"], v["k"], v["alpha"]

    def strike(name, t, x, p):
        """The heelstrike: the stance state as the free wheel's, the free wheel's generated
        impact at the front foot, then the front spoke relabelled as the stance one."""
        phi, w_ = x
        free = np.array([l * np.sin(phi), l * np.cos(phi), -phi,
                         l * np.cos(phi) * w_, -l * np.sin(phi) * w_, -w_])
        after = w["free"].impact("strike", t, free, w["pf"])
        return np.array([phi - 2 * a, -after[5]])

    def step(omega):
        """The step-to-step map: the rate at the start of a step to the next one's."""
        r = w["stance"].simulate((0, 50), [v["gamma"] - a, omega], w["ps"], t_eval=[0.0, 50.0],
                                 rtol=1e-13, atol=1e-13, events={"strike": {"terminal": True}})
        assert r.status == TERMINAL, r.message
        return strike(*r.events[0], w["ps"])[1]
    return dict(w, strike=strike, step=step)


def test_rimless_wheel_fixed_point_and_eigenvalue(wheel):
    """McGeer (1990): with angular momentum kept about the new foot, the rate after a
    strike is eta = (k^2 + l^2 cos 2 alpha) / (k^2 + l^2) times the rate before it, and
    a step gains c = 4 g l sin(gamma) sin(alpha) / (k^2 + l^2) in the rate squared, so
    the step-to-step map is omega' = eta sqrt(omega^2 + c): its fixed point is
    eta sqrt(c / (1 - eta^2)) and its eigenvalue there eta^2. Both to 1e-9, the
    eigenvalue by a central difference of the simulated map (Richardson-extrapolated)."""
    v = wheel["values"]
    g, l, k, a, gam = v["g"], v["l"], v["k"], v["alpha"], v["gamma"]
    eta = (k**2 + l**2 * np.cos(2 * a)) / (k**2 + l**2)
    c = 4 * g * l * np.sin(gam) * np.sin(a) / (k**2 + l**2)
    omega = eta * np.sqrt(c / (1 - eta**2))
    step = wheel["step"]
    fixed = brentq(lambda w: step(w) - w, 0.95 * omega, 1.5 * omega, xtol=1e-15)
    assert abs(fixed - omega) < 1e-9

    def slope(d):
        return (step(fixed + d) - step(fixed - d)) / (2 * d)
    eigenvalue = (4 * slope(5e-4) - slope(1e-3)) / 3
    assert abs(eigenvalue - eta**2) < 1e-9


def test_rimless_wheel_walks_onto_its_limit_cycle(wheel):
    """One run of thirty strikes with the reset: the rate before each strike converges
    to the fixed point's, as fast as eta^2 per step."""
    v = wheel["values"]
    res = wheel["stance"].simulate((0, 100), [v["gamma"] - v["alpha"], 0.55], wheel["ps"],
                                   rtol=1e-12, atol=1e-12, reset=wheel["strike"], max_events=30,
                                   events={"strike": {"direction": -1, "terminal": True}})
    before = np.array([x[1] for _, _, x in res.events])
    g, l, k, a, gam = v["g"], v["l"], v["k"], v["alpha"], v["gamma"]
    eta = (k**2 + l**2 * np.cos(2 * a)) / (k**2 + l**2)
    c = 4 * g * l * np.sin(gam) * np.sin(a) / (k**2 + l**2)
    target = np.sqrt(c / (1 - eta**2))
    assert len(before) == 30 and res.success
    assert abs(before[-1] - target) < 1e-7 < abs(before[0] - target)


#: Garcia et al. (1998), the stable period-one gait at gamma = 0.009, as theta and
#: theta' just after heelstrike, "to 1e-10" (as the Cornell group's simulation code
#: lists them with the model's equations)
GARCIA_GAIT = np.array([0.20031090049483, -0.19983247291764])


def _heelstrike(x):
    """Garcia et al. (1998), eq. (4): the legs swap, and the stance leg's rate drops."""
    theta, phi, thetad, phid = x
    c = np.cos(2 * theta)
    return np.array([-theta, -2 * theta, c * thetad, c * (1 - c) * thetad])


def _start(z):
    """The state just after heelstrike from (theta, theta'): phi = 2 theta and
    phi' = (1 - cos 2 theta) theta'."""
    return np.array([z[0], 2 * z[0], z[1], (1 - np.cos(2 * z[0])) * z[1]])


def _variational_eigenvalues(z, gamma=0.009):
    """The oracle for the stride function's eigenvalues: SciPy's DOP853 with its own event
    location on the variational equations, the saltation matrix at heelstrike (the event
    time's variation) and the heelstrike map's Jacobian; written here, independent of the
    compiled model and of its event location."""
    def f(x):
        th, ph, thd, phd = x
        return np.array([thd, phd, np.sin(th - gamma),
                         np.sin(th - gamma) + np.sin(ph) * (thd**2 - np.cos(th - gamma))])

    def jac(x):
        th, ph, thd, phd = x
        J = np.zeros((4, 4))
        J[0, 2] = J[1, 3] = 1.0
        J[2, 0] = np.cos(th - gamma)
        J[3, 0] = np.cos(th - gamma) + np.sin(ph) * np.sin(th - gamma)
        J[3, 1] = np.cos(ph) * (thd**2 - np.cos(th - gamma))
        J[3, 2] = 2 * thd * np.sin(ph)
        return J

    def rhs(t, y):
        return np.concatenate([f(y[:4]), (jac(y[:4]) @ y[4:].reshape(4, 4)).ravel()])

    def strike(t, y):
        return y[1] - 2 * y[0]
    strike.terminal, strike.direction = True, 1
    y0 = np.concatenate([_start(z), np.eye(4).ravel()])
    early = solve_ivp(rhs, (0, 1), y0, method="DOP853", rtol=1e-13, atol=1e-13)   # past the scuff
    sol = solve_ivp(rhs, (1, 10), early.y[:, -1], method="DOP853", rtol=1e-13, atol=1e-13,
                    events=strike)
    y = sol.y_events[0][0]
    x, P = y[:4], y[4:].reshape(4, 4)
    dg = np.array([-2.0, 1.0, 0.0, 0.0])
    saltation = P - np.outer(f(x), dg @ P) / (dg @ f(x))
    th, thd = x[0], x[2]
    c, s = np.cos(2 * th), np.sin(2 * th)
    DH = np.zeros((4, 4))
    DH[0, 0], DH[1, 0] = -1.0, -2.0
    DH[2, 0], DH[2, 2] = -2 * s * thd, c
    DH[3, 0], DH[3, 2] = (-2 * s * (1 - c) + 2 * c * s) * thd, c * (1 - c)
    E = np.array([[1, 0], [2, 0], [0, 1], [2 * np.sin(2 * z[0]) * z[1], 1 - np.cos(2 * z[0])]])
    return np.linalg.eigvals((DH @ saltation @ E)[[0, 2]])


def test_simplest_walker_period_one_gait(hybrid):
    """The published equations and heelstrike map, the heelstrike located in C (phi - 2
    theta rising through 0; its falling passage at mid-stance is the foot's scuff, ignored
    as in the paper): the period-one gait found by scipy.optimize.root over simulate
    matches the published one to the 1e-10 it is given to, and the stride function's
    eigenvalues (central differences over simulate, Richardson-extrapolated) the
    variational oracle's to 1e-8. The published eigenvalues, -0.19120868949940 +-
    0.55633363687106i, differ from both by 1.7e-3: this model's, by two independent
    computations, are -0.1900998 +- 0.5575988i."""
    mod = hybrid("simplest_walker")
    p = np.array([0.009])

    def stride(z):
        r = mod.simulate((0, 10), _start(z), p, t_eval=[0.0, 10.0], rtol=1e-13, atol=1e-13,
                         events={"heelstrike": {"direction": 1, "terminal": True}})
        assert r.status == TERMINAL, r.message
        return _heelstrike(r.events[0][2])[[0, 2]]
    gait = root(lambda z: stride(z) - z, [0.2, -0.2], tol=1e-14).x
    assert np.abs(gait - GARCIA_GAIT).max() < 1.5e-10

    def jacobian(d):
        return np.column_stack([(stride(gait + d * e) - stride(gait - d * e)) / (2 * d)
                                for e in np.eye(2)])
    J = (4 * jacobian(2.5e-5) - jacobian(5e-5)) / 3
    ours = np.sort_complex(np.linalg.eigvals(J))
    oracle = np.sort_complex(_variational_eigenvalues(gait))
    assert np.abs(ours - oracle).max() < 1e-8
    assert np.abs(oracle - np.array([-0.1900998 - 0.5575988j, -0.1900998 + 0.5575988j])).max() < 1e-6


def test_simplest_walker_stride_map_as_solve_ivp_users_write_it(hybrid):
    """The stride map as _variational_eigenvalues writes it with solve_ivp: a first run
    past the foot's scuff without events (the state at its last output time), then a run
    from t = 1 with t_eval=[1.0] alone and a terminal upward heelstrike. t_eval only picks
    the output times, as solve_ivp's: the second run goes on past t = 1 to the heelstrike.
    Garcia et al.'s gait to 1e-9 and the eigenvalues to 1e-6."""
    mod = hybrid("simplest_walker")
    p = np.array([0.009])
    strike = {"heelstrike": {"direction": 1, "terminal": True}}

    def stride(z):
        early = mod.simulate((0, 1), _start(z), p, rtol=1e-13, atol=1e-13)
        sol = mod.simulate((1, 10), early.x[-1], p, t_eval=[1.0], rtol=1e-13, atol=1e-13,
                           events=strike)
        assert sol.status == TERMINAL and sol.success, sol.message
        assert sol.t.tolist() == [1.0] and np.array_equal(sol.x[0], early.x[-1])
        name, t, x = sol.events[0]
        assert name == "heelstrike" and 1.0 < t < 10.0
        return _heelstrike(x)[[0, 2]]
    gait = root(lambda z: stride(z) - z, [0.2, -0.2], tol=1e-14).x
    assert np.abs(gait - GARCIA_GAIT).max() < 1e-9

    def jacobian(d):
        return np.column_stack([(stride(gait + d * e) - stride(gait - d * e)) / (2 * d)
                                for e in np.eye(2)])
    J = (4 * jacobian(2.5e-5) - jacobian(5e-5)) / 3
    ours = np.sort_complex(np.linalg.eigvals(J))
    assert np.abs(ours - np.array([-0.1900998 - 0.5575988j, -0.1900998 + 0.5575988j])).max() < 1e-6
    assert np.abs(ours - np.sort_complex(_variational_eigenvalues(gait))).max() < 1e-8
