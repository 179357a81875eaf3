"""The runtime's second fault campaign (issue 49): what a user passes to simulate,
simulate_batch and sweep with solve_ivp's habits, and what a run meets on the way (a
controller that raises, a restitution out of range, an event or output that turns
non-finite, a reset that raises). Each case is a clear error naming the culprit, or the
right answer; never a silent success, a wrong trajectory or a crash."""
import ctypes
import sys
import traceback

import numpy as np
import pytest
import sympy as sm

from codegen import DynamicsError, GibbsAppellMethod, generate, sweep
from codegen import examples as ex
from codegen.abi import STATUS_CODE

TERMINAL = STATUS_CODE["CG_TERMINAL_EVENT"]
OUTPUT = STATUS_CODE["CG_ERR_OUTPUT"]
CONTROL = STATUS_CODE["CG_ERR_CONTROL"]
SIGNATURE = ctypes.CFUNCTYPE(None, ctypes.c_double, ctypes.POINTER(ctypes.c_double),
                             ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double),
                             ctypes.c_void_p)


@pytest.fixture(scope="module")
def ball(hybrid):
    """The bouncing ball: its floor impact's restitution is the constant e."""
    b = hybrid("ball")
    return b["mod"], b["p"]


@pytest.fixture(scope="module")
def cart(tmp_path_factory):
    """A pendulum on a cart, whose input a controller sets."""
    model = ex.n_pendulum_on_cart(1)
    mod = generate(GibbsAppellMethod(**model.kwargs), "faults_cart",
                   output_dir=tmp_path_factory.mktemp("faults_cart"))
    return mod, mod.parameters(model.parameter_values), np.array([0.0, 1.5, 0.0, 0.0])


@pytest.fixture(scope="module")
def rooted(hybrid, tmp_path_factory):
    """The simple pendulum with sqrt(q - 0.2) as an event and as an output: both turn
    NaN once the pendulum swings below q = 0.2 (from q = 1.2, at t of about 0.6)."""
    pd = hybrid("pendulum")
    q, u = pd["symbols"][:2]
    out = tmp_path_factory.mktemp("faults_rooted")
    events = generate(pd["ga"], "faults_root_event", output_dir=out,
                      events={"gap": sm.sqrt(q - 0.2), "turn": u})
    outputs = generate(pd["ga"], "faults_root_output", output_dir=out,
                       outputs={"root": sm.sqrt(q - 0.2), "q": q})
    return events, outputs, events.parameters(m=1.0, g=9.81, l=1.0)


# -- the four classes of the issue -------------------------------------------------------------
def test_a_raising_ctypes_controller_ends_the_run_with_its_exception(cart, capfd):
    """The Python body of a ctypes controller raises at t > 0.3: ctypes cannot raise
    through C, so the run used to print "Exception ignored" at every right-hand side and
    report success. Now the run ends at that call and simulate raises the exception
    itself, noted with the controller's name and the time, printed nowhere."""
    mod, p, x0 = cart
    calls = []

    def breaks_late(t, x, p_, r, data):
        calls.append(t)
        if t > 0.3:
            raise ZeroDivisionError("the law divides by zero")
        r[0] = -10.0 * x[1]
    hook = sys.unraisablehook
    with pytest.raises(ZeroDivisionError, match="the law divides by zero") as info:
        mod.simulate((0, 1), x0, p, controller=SIGNATURE(breaks_late))
    note = "\n".join(info.value.__notes__)
    assert "faults_cart: raised in the controller breaks_late" in note and "t = 0.3" in note
    assert sum(t > 0.3 for t in calls) == 1            # the run ended at the first raise
    assert "breaks_late" in [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert sys.unraisablehook is hook                   # the hook was the run's only
    assert "Exception ignored" not in capfd.readouterr().err


def test_a_raising_ctypes_controller_ends_a_batch(cart, capfd):
    """Called from the batch's OpenMP threads: every run ends, the exception is raised
    once, with how many runs it ended."""
    mod, p, x0 = cart

    def breaks(t, x, p_, r, data):
        raise RuntimeError("no law")
    with pytest.raises(RuntimeError, match="no law") as info:
        mod.simulate_batch((0, 1), np.tile(x0, (6, 1)), p, controller=SIGNATURE(breaks))
    assert "6 of the 6 runs" in "\n".join(info.value.__notes__)
    assert "Exception ignored" not in capfd.readouterr().err
    # a controller that does not raise runs as before, through the same guard
    quiet = SIGNATURE(lambda t, x, p_, r, data: None)
    assert mod.simulate((0, 1), x0, p, controller=quiet).success


def test_a_raising_cffi_controller_ends_the_run(cart):
    """The same through cffi, whose callbacks report the same way; the controller is
    then an address."""
    cffi = pytest.importorskip("cffi")
    mod, p, x0 = cart
    ffi = cffi.FFI()

    @ffi.callback("void(double, double *, double *, double *, void *)")
    def law(t, x, p_, r, data):
        raise ArithmeticError("cffi law")
    with pytest.raises(ArithmeticError, match="cffi law") as info:
        mod.simulate((0, 1), x0, p, controller=int(ffi.cast("uintptr_t", law)))
    assert "faults_cart: raised in the controller" in "\n".join(info.value.__notes__)


def test_an_unrelated_unraisable_exception_is_passed_on(cart, monkeypatch):
    """An exception Python cannot raise that is no callback's (a __del__ that raises)
    goes to the hook that was there: the run is not stopped for it."""
    mod, p, x0 = cart
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)

    class Leaky:
        def __del__(self):
            raise OSError("closing failed")

    def law(t, x, p_, r, data):
        if not seen:
            Leaky()
        r[0] = -10.0 * x[1]
    res = mod.simulate((0, 1), x0, p, controller=SIGNATURE(law))
    assert res.success and len(seen) == 1 and isinstance(seen[0].exc_value, OSError)
    assert sys.unraisablehook == seen.append


def test_restitution_outside_0_1_is_refused_at_run_time(ball):
    """The restitution is the constant e: a negative one would let the ball through the
    floor, one above 1 would add energy. simulate, simulate_batch (naming the row),
    impact and sweep (before any cluster) refuse it naming the impact and the constant;
    0 and 1 are allowed; NaN is a non-finite constant named as such."""
    mod, p = ball
    for e, what in ((1.5, "above 1"), (-0.2, "negative")):
        pe = mod.parameters(m=1.0, g=9.81, e=e)
        match = rf"the restitution of impact 'floor' is {e} \(from the constant e = {e}\), {what}"
        with pytest.raises(ValueError, match=match):
            mod.simulate((0, 3), [1.0, 0.0], pe)
        with pytest.raises(ValueError, match=match):
            mod.impact("floor", 0.0, [0.0, -1.0], pe)
        with pytest.raises(ValueError, match="row 1: " + match):
            mod.simulate_batch((0, 3), [[1.0, 0.0]] * 2, [p, pe])
        with pytest.raises(ValueError, match="P row 1: " + match):
            sweep(mod, (0, 3), [1.0, 0.0], [p, pe])
    with pytest.raises(ValueError, match=r"p is not finite at \['e'\]"):
        mod.simulate((0, 3), [1.0, 0.0], mod.parameters(m=1.0, g=9.81, e=np.nan))
    assert mod.restitutions(p) == {"floor": 0.9}
    for e in (0.0, 1.0):
        res = mod.simulate((0, 3), [1.0, 0.0], mod.parameters(m=1.0, g=9.81, e=e), max_events=4)
        assert res.success
    # a reset replaces the impact: its restitution is then not the run's
    res = mod.simulate((0, 3), [1.0, 0.0], mod.parameters(m=1.0, g=9.81, e=5.0),
                       reset=lambda name, t, x, p_: [0.0, -0.5 * x[1]], max_events=3)
    assert res.success and res.events[0][0] == "floor"


def test_a_non_finite_event_names_itself(rooted):
    """The event, not the equations of motion, in the message: mid-run (status 3), per
    run of a batch, and at the start (an exception). An event the run does not locate
    cannot end it."""
    mod, _, p = rooted
    res = mod.simulate((0, 3), [1.2, 0.0], p)
    assert res.status == OUTPUT and not res.success
    assert res.message.startswith("event 'gap' is not finite at t = ")
    assert "equations of motion" in res.message and "overflow" not in res.message
    assert len(res.t) and res.t[-1] < 0.7 and np.isfinite(res.x).all()
    batch = mod.simulate_batch((0, 3), [[1.2, 0.0], [0.25, 0.0]], p)
    assert batch.status.tolist() == [OUTPUT, OUTPUT]
    assert all(m.startswith("event 'gap' is not finite") for m in batch.messages)
    with pytest.raises(DynamicsError, match=r"event 'gap' is not finite at t = 0"):
        mod.simulate((0, 3), [0.1, 0.0], p)
    turns = mod.simulate((0, 3), [1.2, 0.0], p, events=["turn"])
    assert turns.success and [e[0] for e in turns.events] == ["turn"]


def test_a_non_finite_output_names_itself(rooted):
    _, mod, p = rooted
    res = mod.simulate((0, 3), [1.2, 0.0], p)
    assert res.status == OUTPUT
    assert res.message.startswith("output 'root' is not finite at t = ")
    assert "'q'" not in res.message and np.isfinite(res.outputs["root"]).all()
    batch = mod.simulate_batch((0, 3), [[1.2, 0.0]], p)
    assert batch.messages[0].startswith("output 'root' is not finite")


def test_a_reset_that_raises_propagates_as_itself(ball):
    """Its own type and traceback, with the event's name and time as a note; not
    "did not return numbers"."""
    mod, p = ball

    def strike(name, t, x, p_):
        return {"velocity": -x[1]}["speed"]
    with pytest.raises(KeyError, match="speed") as info:
        mod.simulate((0, 3), [1.0, 0.0], p, reset=strike)
    assert any(n.startswith("hy_ball: raised in reset at event 'floor' (t = 0.4515")
               for n in info.value.__notes__)
    assert "strike" in [f.name for f in traceback.extract_tb(info.value.__traceback__)]


# -- solve_ivp's time span ----------------------------------------------------------------------
def test_t_eval_only_picks_output_times(ball):
    """As solve_ivp's: a run from t = 1 with t_eval=[1.0] goes on to t_span[1], its
    events the same as a run with output times all the way; a terminal event past the
    last output time ends it there; simulate_batch does the same."""
    mod, p = ball
    full = mod.simulate((0, 4), [1.0, 0.0], p, t_eval=np.linspace(0, 4, 9), rtol=1e-12,
                        atol=1e-12)
    short = mod.simulate((0, 4), [1.0, 0.0], p, t_eval=[0.0], rtol=1e-12, atol=1e-12)
    assert short.success and short.t.tolist() == [0.0] and short.x.shape == (1, 2)
    assert [e[0] for e in short.events] == [e[0] for e in full.events] and len(full.events) > 6
    assert np.allclose([e[1] for e in short.events], [e[1] for e in full.events], atol=1e-12)
    ends = mod.simulate((1, 10), [1.0, 0.0], p, t_eval=[1.0],
                        events={"floor": {}, "apex": {"direction": -1, "terminal": True}})
    assert ends.status == TERMINAL and ends.t.tolist() == [1.0]
    assert [e[0] for e in ends.events] == ["floor", "apex"] and ends.events[1][1] > 1.8
    batch = mod.simulate_batch((0, 4), [[1.0, 0.0], [2.0, 0.0]], p, t_eval=[0.0],
                               rtol=1e-12, atol=1e-12)
    assert batch.status.tolist() == [0, 0] and batch.x.shape == (2, 1, 2)
    assert [e[0] for e in batch.events[0]] == [e[0] for e in full.events]


def test_an_empty_t_eval_gives_the_events_only(ball):
    mod, p = ball
    res = mod.simulate((0, 3), [1.0, 0.0], p, t_eval=[])
    assert res.success and res.x.shape == (0, 2) and res.t.shape == (0,)
    assert [e[0] for e in res.events[:3]] == ["floor", "apex", "floor"]
    assert mod.simulate_batch((0, 3), [[1.0, 0.0]], p, t_eval=[]).x.shape == (1, 0, 2)
    with pytest.raises(ValueError, match="reduce='final' needs output times"):
        sweep(mod, (0, 3), [1.0, 0.0], p, t_eval=[], reduce="final")


def test_a_repeated_output_time_repeats_the_state(ball):
    mod, p = ball
    res = mod.simulate((0, 1), [1.0, 0.0], p, t_eval=[0.2, 0.2, 0.6])
    assert res.success and np.array_equal(res.x[0], res.x[1])
    assert abs(res.x[0, 0] - (1.0 - 9.81 * 0.2**2 / 2)) < 1e-12


@pytest.mark.parametrize("t_eval, match", [
    ([0.5, 0.2], r"t_eval\[1\] = 0.2\d* comes after t_eval\[0\] = 0.5 \(sort it\)"),
    ([0.5, 1.5], r"t_eval\[1\] = 1.5 is outside it"),
    ([0.5, np.nan], r"t_eval\[1\] = nan is not finite"),
    ([[0.5]], r"it must be 1-D, got shape \(1, 1\)"),
])
def test_a_bad_t_eval_names_its_entry(ball, t_eval, match):
    mod, p = ball
    head = r"t_eval must be finite, ascending and inside t_span \(0, 1\): "
    with pytest.raises(ValueError, match=head + match):
        mod.simulate((0, 1), [1.0, 0.0], p, t_eval=t_eval)
    with pytest.raises(ValueError, match=head + match):
        mod.simulate_batch((0, 1), [[1.0, 0.0]], p, t_eval=t_eval)


def test_t_eval_before_a_later_start_is_refused(ball):
    mod, p = ball
    with pytest.raises(ValueError, match=r"t_span \(1, 2\): t_eval\[0\] = 0.5 is outside it"):
        mod.simulate((1, 2), [1.0, 0.0], p, t_eval=[0.5, 1.5])


# -- solve_ivp's other habits -------------------------------------------------------------------
def test_solve_ivp_method_names_are_translated_in_the_refusal(ball):
    mod, p = ball
    with pytest.raises(ValueError, match=r"got 'RK45' \(solve_ivp's 'RK45': use 'dopri5'\)"):
        mod.simulate((0, 1), [1.0, 0.0], p, method="RK45")
    with pytest.raises(ValueError, match=r"got 'LSODA' \(solve_ivp's 'LSODA': use 'bdf'\)"):
        mod.simulate_batch((0, 1), [[1.0, 0.0]], p, method="LSODA")


def test_solve_ivp_keywords_without_a_counterpart_are_named(ball):
    mod, p = ball
    for keyword in ("max_step", "args", "dense_output"):
        with pytest.raises(TypeError, match=rf"unexpected keyword argument '{keyword}'"):
            mod.simulate((0, 1), [1.0, 0.0], p, **{keyword: 0.1})


def test_events_as_a_python_function_are_refused(hybrid):
    """solve_ivp's events are Python functions; the run is in C: refused, naming what to
    do, alone or in a list."""
    pd = hybrid("pendulum")

    def g(t, y):
        return y[0]
    g.terminal = True
    for events in (g, [g]):
        with pytest.raises(TypeError, match=r"cannot call the Python function .*generate\(\.\.\., "
                                            r"events=\{name: g\}\)"):
            pd["mod"].simulate((0, 1), [1.0, 0.0], pd["p"], events=events)


def test_a_bad_first_step_is_refused_for_adaptive_methods(ball):
    """dt is the fixed-step methods' step; the adaptive ones choose theirs, but a dt that
    is no step at all is still a mistake."""
    mod, p = ball
    for dt in (-1.0, 0.0, np.nan, np.inf):
        with pytest.raises(ValueError, match=r"dt must be a positive, finite step, got .*"
                                             r"dopri5 chooses its own steps"):
            mod.simulate((0, 1), [1.0, 0.0], p, dt=dt)
    assert mod.simulate((0, 1), [1.0, 0.0], p, dt=1e-3).success


def test_non_finite_initial_state_names_x0(ball):
    mod, p = ball
    with pytest.raises(ValueError, match=r"hy_ball: x0 is not finite at \['y'\]"):
        mod.simulate((0, 1), [np.nan, 0.0], p)
    t, X, status = mod.simulate_batch((0, 1), [[np.inf, 0.0], [1.0, 0.0]], p)
    assert status.tolist() == [STATUS_CODE["CG_ERR_INPUT"], 0]
    assert np.isnan(X[0]).all() and np.isfinite(X[1]).all()


def test_constants_by_name_point_to_parameters(ball):
    mod, p = ball
    with pytest.raises(TypeError, match=r"p must be an array of numbers, got a dict: "
                                        r"mod.parameters"):
        mod.simulate((0, 1), [1.0, 0.0], {"m": 1.0, "g": 9.81, "e": 0.5})


def test_a_reset_that_no_event_calls_is_refused(hybrid):
    """A reset is called at terminal events; with none terminal it would be ignored."""
    pd = hybrid("pendulum")
    with pytest.raises(ValueError, match=r"none of the located events \(vertical, turn\) is "
                                         r"terminal"):
        pd["mod"].simulate((0, 1), [1.0, 0.0], pd["p"], reset=lambda name, t, x, p: x)


def test_a_controller_declared_with_another_prototype_is_refused(cart):
    mod, p, x0 = cart
    wrong = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(lambda t: t)
    with pytest.raises(TypeError, match=r"declared as c_double f\(c_double\); it must be void "
                                        r"f\(double t"):
        mod.simulate((0, 1), x0, p, controller=wrong)
    with pytest.raises(TypeError, match=r"controller_data must be an array of numbers"):
        mod.simulate((0, 1), x0, p, controller=SIGNATURE(lambda *a: None),
                     controller_data="gains")


def test_batch_inputs_of_the_wrong_kind_are_named(ball, cart):
    mod, p, x0 = cart
    with pytest.raises(TypeError, match=r"a table \(times, values\) is simulate's"):
        mod.simulate_batch((0, 1), [x0], p, R=([0.0, 1.0], [[1.0], [2.0]]))
    with pytest.raises(ValueError, match=r"R must have shape \(2, 1\) or \(1,\), got \(3, 1\)"):
        mod.simulate_batch((0, 1), [x0] * 2, p, R=[[1.0]] * 3)
    bmod, bp = ball
    with pytest.raises(ValueError, match="hy_ball: the model has no specified inputs, got R"):
        bmod.simulate_batch((0, 1), [[1.0, 0.0]], bp, R=[0.5])


def test_outputs_times_must_match_the_states(rooted):
    _, mod, p = rooted
    with pytest.raises(ValueError, match=r"t must be one time or 2 times \(one per row of x\), "
                                         r"got shape \(3,\)"):
        mod.outputs([0.0, 1.0, 2.0], np.ones((2, 2)), p)
    assert mod.outputs([0.0, 1.0], np.ones((2, 2)), p)["q"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("what", ["max_steps", "max_events"])
def test_bounds_are_whole_numbers(ball, what):
    """A bound on steps or events is a count: a fraction is refused, not truncated, and
    a NumPy integer is one."""
    mod, p = ball
    x0 = np.array([1.0, 0.0])
    with pytest.raises(TypeError, match=rf"{what} must be a whole number, got 2.5"):
        mod.simulate((0, 1), x0, p, **{what: 2.5})
    with pytest.raises(TypeError, match=rf"{what} must be a whole number"):
        mod.simulate_batch((0, 1), x0[None, :], p[None, :], **{what: 2.5})
    with pytest.raises(ValueError, match=rf"{what} must be at least 1, got 0"):
        mod.simulate((0, 1), x0, p, **{what: 0})
    assert mod.simulate((0, 1), x0, p, **{what: np.int64(100000)}).success
