"""Events located in C on the integrators' dense output, against SciPy's solve_ivp events
on the same right-hand side, and impacts against the bouncing ball's closed form."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from codegen.abi import STATUS_CODE

TERMINAL, MAX_EVENTS = STATUS_CODE["CG_TERMINAL_EVENT"], STATUS_CODE["CG_MAX_EVENTS"]


@pytest.fixture(scope="module")
def pend(hybrid):
    return hybrid("pendulum")


def _scipy_events(mod, p, x0, t_end, directions):
    """solve_ivp (DOP853, 1e-13) with Python event functions on the compiled rhs."""
    events = []
    for k, d in directions.items():
        index = mod.event_names.index(k)
        f = (lambda i: lambda t, x: mod.event_functions(t, x, p)[i])(index)
        f.direction = d
        events.append(f)
    sol = solve_ivp(lambda t, x: mod.rhs(t, x, p), (0, t_end), x0, method="DOP853",
                    rtol=1e-13, atol=1e-13, events=events)
    return {k: sol.t_events[i] for i, k in enumerate(directions)}


def test_event_times_equal_solve_ivps(pend):
    """Every crossing of q (both ways) and every turn of u falling, over three periods of
    a swing near the top: the same events at the same times, to 1e-10 s."""
    mod, p = pend["mod"], pend["p"]
    x0 = [1.2, 0.3]
    directions = {"vertical": 0, "turn": -1}
    res = mod.simulate((0, 12), x0, p, rtol=1e-13, atol=1e-13,
                       events={k: {"direction": d} for k, d in directions.items()})
    oracle = _scipy_events(mod, p, x0, 12.0, directions)
    assert res.status == 0
    assert [e[1] for e in res.events] == sorted(e[1] for e in res.events)
    for name in directions:
        ours = np.array([e[1] for e in res.events if e[0] == name])
        assert len(ours) == len(oracle[name]) >= 3
        assert np.abs(ours - oracle[name]).max() < 1e-10
        # the state at each event is on g = 0 and is the trajectory's there
        for e in res.events:
            assert abs(mod.event_functions(e[1], e[2], p)[mod.event_names.index(e[0])]) < 1e-12


@pytest.mark.parametrize("method, options, tol", [
    ("rk4", dict(dt=1e-3), 1e-9), ("bdf", dict(rtol=1e-11, atol=1e-11), 1e-7),
    ("rosenbrock", dict(rtol=1e-10, atol=1e-10), 1e-7), ("rosw", dict(rtol=1e-9, atol=1e-9), 1e-6)])
def test_every_method_locates_events(pend, method, options, tol):
    """On each method's own dense output (BDF's polynomial, the Rosenbrock methods'
    Hermite, a fixed step's cubic Hermite between its ends): g = 0 there to 1e-12, and
    the times solve_ivp's within the method's own accuracy."""
    mod, p = pend["mod"], pend["p"]
    res = mod.simulate((0, 6), [1.2, 0.0], p, method=method, t_eval=np.linspace(0, 6, 7),
                       events={"vertical": {"direction": 0}}, **options)
    oracle = _scipy_events(mod, p, [1.2, 0.0], 6.0, {"vertical": 0})["vertical"]
    ours = np.array([e[1] for e in res.events])
    assert res.status == 0 and len(ours) == len(oracle)
    assert np.abs(ours - oracle).max() < tol
    assert max(abs(mod.event_functions(t, x, p)[0]) for _, t, x in res.events) < 1e-12


def test_a_terminal_event_ends_the_run(pend):
    mod, p = pend["mod"], pend["p"]
    res = mod.simulate((0, 6), [1.2, 0.0], p, rtol=1e-12, atol=1e-12,
                       events={"vertical": {"direction": -1, "terminal": True}})
    t_event = res.events[-1][1]
    assert res.status == TERMINAL and res.success and "'vertical'" in res.message
    assert len(res.events) == 1 and res.t[-1] <= t_event < res.t[-1] + 0.06
    assert len(res.outputs["T"]) == len(res.t)


def test_a_start_on_the_event_is_not_a_crossing(pend):
    """q starts at exactly 0: the first event is its return there, not the start."""
    mod, p = pend["mod"], pend["p"]
    res = mod.simulate((0, 3), [0.0, 2.0], p, rtol=1e-12, atol=1e-12, events=["vertical"])
    oracle = _scipy_events(mod, p, [0.0, 2.0], 3.0, {"vertical": 0})["vertical"]
    oracle = oracle[oracle > 1e-9]                    # solve_ivp counts the start
    assert res.events[0][1] > 0.1
    assert np.abs(np.array([e[1] for e in res.events]) - oracle).max() < 1e-9


def test_max_events_ends_the_run(pend):
    mod, p = pend["mod"], pend["p"]
    res = mod.simulate((0, 20), [1.2, 0.0], p, max_events=3)
    assert res.status == MAX_EVENTS and res.success and len(res.events) == 3


def _ball_oracle(h0, g, e, n):
    """Impact times and the speeds just before each impact, from the closed form."""
    t1, v1 = np.sqrt(2 * h0 / g), np.sqrt(2 * g * h0)
    speeds = v1 * e ** np.arange(n)
    times = t1 + np.concatenate([[0.0], np.cumsum(2 * speeds[:-1] * e / g)])
    return times, speeds


def test_bouncing_ball_twenty_bounces(hybrid):
    """Event times, speeds before each impact and the apex heights e^2k h0 over 20
    bounces, with the generated impact map (Newton's law, restitution e) in C."""
    b = hybrid("ball")
    mod, p, (g, e) = b["mod"], b["p"], (b["values"]["g"], b["values"]["e"])
    res = mod.simulate((0, 30), [1.0, 0.0], p, rtol=1e-12, atol=1e-12, max_events=40)
    floor = [ev for ev in res.events if ev[0] == "floor"]
    apex = [ev for ev in res.events if ev[0] == "apex"]
    times, speeds = _ball_oracle(1.0, g, e, 20)
    assert res.status == MAX_EVENTS and len(floor) == 20
    assert np.abs(np.array([ev[1] for ev in floor]) - times).max() < 1e-10
    assert np.abs(np.array([-ev[2][1] for ev in floor]) - speeds).max() < 1e-10
    heights = np.array([ev[2][0] for ev in apex])
    assert np.abs(heights - e ** (2 * np.arange(1, len(heights) + 1))).max() < 1e-10
    assert mod.impact("floor", 0.0, [0.0, -2.0], p) == pytest.approx([0.0, 1.8], abs=1e-15)
    assert list(mod.impact("floor", 0.0, [0.0, 2.0], p)) == [0.0, 2.0]   # leaving: no strike


def test_batches_report_each_runs_events(hybrid):
    b = hybrid("ball")
    mod, p = b["mod"], b["p"]
    X0 = np.array([[1.0, 0.0], [2.0, 0.0], [0.5, 0.0]])
    batch = mod.simulate_batch((0, 10), X0, p, rtol=1e-12, atol=1e-12,
                               events={"floor": {}}, max_events=4)
    t, X, status = batch
    assert list(status) == [MAX_EVENTS] * 3
    for i, h0 in enumerate(X0[:, 0]):
        times, _ = _ball_oracle(h0, 9.81, 0.9, 4)
        assert np.abs(np.array([ev[1] for ev in batch.events[i]]) - times).max() < 1e-10
        alone = mod.simulate((0, 10), X0[i], p, rtol=1e-12, atol=1e-12, events={"floor": {}},
                             max_events=4)
        assert np.array_equal(X[i, :len(alone.t)], alone.x)
        assert np.isnan(X[i, len(alone.t):]).all()
        assert np.array_equal(batch.outputs["h"][i, :len(alone.t)], alone.outputs["h"])
    terminal = mod.simulate_batch((0, 10), X0, p, events={"floor": {}, "apex": {"terminal": True}})
    assert list(terminal[2]) == [TERMINAL] * 3 and all(len(e) == 2 for e in terminal.events)
