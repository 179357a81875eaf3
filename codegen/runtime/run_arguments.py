"""A run's events, resets and feedback as the runtime takes them: the arguments of
``simulate``, ``simulate_batch`` and ``sweep`` checked and put in C's terms.

Pure Python (NumPy): the compiled runtime (codegen.runtime._runtime) calls these before it
starts a run, so that every refusal names the argument and what it should be.

Feedback (``controller=``), evaluated in C at every right-hand side of the run:

- a matrix K of shape (nr, nx): r = r_ref - K (x - x_ref), r_ref the run's inputs
  (``r``, zero by default) and x_ref ``x_ref=`` (zero by default); what
  ``scipy.linalg.solve_continuous_are`` gives from ``mod.linearize``;
- a C function ``void controller(double t, const double *x, const double *p,
  double *r, void *data)``: r holds the reference inputs on entry, the function
  writes the inputs to apply. Give it as a ctypes function
  (``ctypes.CFUNCTYPE(None, c_double, POINTER(c_double), POINTER(c_double),
  POINTER(c_double), c_void_p)``), a numba ``cfunc`` (its ``.address``) or an address
  (an int: ``int(ffi.cast("uintptr_t", f))`` for cffi); ``controller_data=`` (a float64
  array, or an address) is its ``data``. simulate_batch calls it from several threads
  at once.
"""
from __future__ import annotations

import ctypes
import numbers
import sys
import threading

import numpy as np

__all__ = ["event_settings", "feedback", "checked_reset", "DEFAULT_MAX_EVENTS", "t_eval_error", "count",
           "ControllerGuard", "restitution_error", "method_error", "reset_never_called"]

#: the events a run records before it ends (status CG_MAX_EVENTS), unless max_events says
DEFAULT_MAX_EVENTS = 10000


def event_settings(model: str, names: tuple, impacts: tuple, events) -> tuple:
    """(index, direction, terminal) int32 arrays of the events a run locates, from
    simulate's ``events``: None (every event of the model), a list of names, or {name:
    {"direction": -1, 0 or +1, "terminal": bool}}. A missing setting takes its default:
    both directions and not terminal, or for an event with an impact (whose function is
    the contact's gap) falling (-1) and terminal."""
    if events is None:
        chosen = {name: {} for name in names}
    elif isinstance(events, dict):
        chosen = events
    elif isinstance(events, (list, tuple)):
        chosen = {name: {} for name in events}
    elif callable(events):
        chosen = {events: {}}
    else:
        raise TypeError(f"{model}: events must be a dict {{name: {{'direction': d, "
                        f"'terminal': b}}}} or a list of names, got {type(events).__name__}")
    index, direction, terminal = [], [], []
    for name, spec in chosen.items():
        if callable(name):
            # solve_ivp's habit: an event function g(t, y); the run cannot call Python
            raise TypeError(f"{model}: events names the model's compiled event functions; the "
                            f"run is in C and cannot call the Python function {name!r}: compile "
                            f"it with generate(..., events={{name: g}}) and give its name, with "
                            f"{{'direction': d, 'terminal': b}} for solve_ivp's attributes")
        if name not in names:
            raise ValueError(f"{model}: {name!r} is not an event of the model (events: "
                             f"{', '.join(names) or 'none; generate(..., events=...) adds them'})")
        spec = {} if spec is None else spec
        if not isinstance(spec, dict) or set(spec) - {"direction", "terminal"}:
            raise ValueError(f"{model}: event {name!r} takes {{'direction': -1, 0 or 1, "
                             f"'terminal': bool}}, got {spec!r}")
        d = spec.get("direction", -1 if impacts[names.index(name)] else 0)
        if d not in (-1, 0, 1):
            raise ValueError(f"{model}: event {name!r}: direction must be -1, 0 or 1, got {d!r}")
        term = spec.get("terminal", impacts[names.index(name)])
        if term not in (True, False):
            raise ValueError(f"{model}: event {name!r}: terminal must be True or False, "
                             f"got {term!r}")
        index.append(names.index(name))
        direction.append(int(d))
        terminal.append(int(term))
    return (np.array(index, dtype=np.intc), np.array(direction, dtype=np.intc),
            np.array(terminal, dtype=np.intc))


def _address(controller):
    """The address of a C function (ctypes, numba cfunc, int), or None."""
    if isinstance(controller, (int, np.integer)) and not isinstance(controller, bool):
        return int(controller)
    if isinstance(controller, ctypes._CFuncPtr):
        return ctypes.cast(controller, ctypes.c_void_p).value
    address = getattr(controller, "address", None)        # a numba cfunc
    if isinstance(address, int):
        return address
    return None


def _check_prototype(model: str, controller) -> None:
    """A ctypes function's declared prototype is the controller's (when it declares one)."""
    argtypes = getattr(controller, "argtypes", None)
    if not isinstance(controller, ctypes._CFuncPtr) or argtypes is None:
        return
    pointer, void = ctypes.POINTER(ctypes.c_double), ctypes.c_void_p
    ok = (len(argtypes) == 5 and argtypes[0] is ctypes.c_double
          and all(a in (pointer, void) for a in argtypes[1:]) and controller.restype is None)
    if not ok:
        names = ", ".join(getattr(a, "__name__", repr(a)) for a in argtypes)
        rtype = getattr(controller.restype, "__name__", repr(controller.restype))
        raise TypeError(f"{model}: the controller is declared as {rtype} f({names}); it must be "
                        f"void f(double t, const double *x, const double *p, double *r, void "
                        f"*data): ctypes.CFUNCTYPE(None, c_double, POINTER(c_double), "
                        f"POINTER(c_double), POINTER(c_double), c_void_p)")


def feedback(model: str, nx: int, nr: int, controller, x_ref, data) -> tuple:
    """(K (nr, nx) or None, x_ref (nx) or None, function address (0: none), data
    address, objects to keep alive) from simulate's controller, x_ref and
    controller_data."""
    if controller is None:
        if x_ref is not None or data is not None:
            raise ValueError(f"{model}: x_ref and controller_data need a controller")
        return None, None, 0, 0, ()
    if nr == 0:
        raise ValueError(f"{model}: the model has no inputs for a controller to set")
    K, address = None, _address(controller)
    if address is None:
        if callable(controller):
            raise TypeError(f"{model}: the controller runs in C: give a matrix K, a C function "
                            f"(ctypes CFUNCTYPE, numba cfunc, or its address), or compile the law "
                            f"into the model with generate(..., control=...)")
        try:
            K = np.array(controller, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{model}: controller must be a matrix K or a C function: "
                            f"{exc}") from None
        if K.shape != (nr, nx):
            raise ValueError(f"{model}: K must have shape (nr, nx) = ({nr}, {nx}), got {K.shape}")
        if not np.isfinite(K).all():
            raise ValueError(f"{model}: K is not finite")
        K = np.ascontiguousarray(K)
        address = 0
    elif not address:
        raise ValueError(f"{model}: the controller's address is NULL")
    else:
        _check_prototype(model, controller)
    if x_ref is not None:
        if K is None:
            raise ValueError(f"{model}: x_ref goes with a matrix K")
        x_ref = np.ascontiguousarray(np.array(x_ref, dtype=np.float64).ravel())
        if x_ref.shape != (nx,) or not np.isfinite(x_ref).all():
            raise ValueError(f"{model}: x_ref must be {nx} finite numbers, got {x_ref!r}")
    keep = (controller,)
    if data is None:
        data_address = 0
    elif isinstance(data, (int, np.integer)):
        data_address = int(data)
    else:
        try:
            data = np.ascontiguousarray(np.asarray(data, dtype=np.float64))
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{model}: controller_data must be an array of numbers (float64) "
                            f"or an address, got {type(data).__name__}: {exc}") from None
        data_address = data.ctypes.data
        keep += (data,)
    if K is not None and data is not None:
        raise ValueError(f"{model}: controller_data goes with a C function")
    return K, x_ref, address, data_address, keep


def checked_reset(model: str, reset, event: str, t: float, x, p, nx: int, residuals):
    """reset(event, t, x, p) as a state: nx finite numbers, on the constraints (residuals:
    None, or the model's [f; A u - B] at a state) to CG_MANIFOLD_TOL; else ValueError
    naming the event."""
    try:
        given = reset(event, t, np.array(x), p)
    except Exception as exc:             # the user's own error: its type and traceback kept
        exc.add_note(f"{model}: raised in reset at event {event!r} (t = {t:.17g}); the run "
                     f"stopped there")
        raise
    try:
        x_new = np.array(given, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{model}: reset at event {event!r} (t = {t:.17g}) did not return "
                         f"numbers: {exc}") from None
    if x_new.shape != (nx,):
        raise ValueError(f"{model}: reset at event {event!r} (t = {t:.17g}) returned shape "
                         f"{x_new.shape}, not ({nx},)")
    if not np.isfinite(x_new).all():
        raise ValueError(f"{model}: reset at event {event!r} (t = {t:.17g}) returned a "
                         f"non-finite state {x_new.tolist()}")
    if residuals is not None:
        from ..abi import CONSTANTS
        res = np.abs(residuals(x_new))
        tol = CONSTANTS["CG_MANIFOLD_TOL"] * (1.0 + np.abs(x_new).max())
        if res.max() > tol:
            raise ValueError(f"{model}: reset at event {event!r} (t = {t:.17g}) returned a "
                             f"state off the constraints (max residual {res.max():.3g}, allowed "
                             f"{tol:.1e}): project it (mod.project)")
    return np.ascontiguousarray(x_new)


def count(model: str, what: str, value) -> int:
    """A run's bound given as a number of steps or events: a whole number of at least 1 (a
    fraction is refused rather than truncated)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{model}: {what} must be a whole number, got {value!r}")
    if value < 1:
        raise ValueError(f"{model}: {what} must be at least 1, got {value}")
    return int(value)


def t_eval_error(model: str, t_eval, t0: float, t1: float) -> str:
    """Why t_eval is not 1-D, finite, non-decreasing and inside [t0, t1] (as solve_ivp
    refuses it), naming the first entry at fault."""
    head = f"{model}: t_eval must be finite, ascending and inside t_span ({t0:.17g}, {t1:.17g})"
    t_eval = np.asarray(t_eval)
    if t_eval.ndim != 1:
        return f"{head}: it must be 1-D, got shape {t_eval.shape}"
    for i, v in enumerate(t_eval.tolist()):
        if not np.isfinite(v):
            return f"{head}: t_eval[{i}] = {v} is not finite"
        if v < t0 or v > t1:
            return f"{head}: t_eval[{i}] = {v:.17g} is outside it"
        if i and v < t_eval[i - 1]:
            return (f"{head}: t_eval[{i}] = {v:.17g} comes after t_eval[{i - 1}] = "
                    f"{t_eval[i - 1]:.17g} (sort it)")
    return head


def method_error(model: str, method, methods) -> str:
    """The refusal of an unknown method, with solve_ivp's names translated."""
    scipy = {"RK45": "dopri5", "BDF": "bdf", "RK23": "dopri5", "DOP853": "dopri5",
             "Radau": "bdf", "LSODA": "bdf"}
    hint = (f" (solve_ivp's {method!r}: use {scipy[method]!r})"
            if isinstance(method, str) and method in scipy else "")
    return f"{model}: method must be one of {list(methods)}, got {method!r}{hint}"


def reset_never_called(model: str, names: tuple, index, terminal) -> str | None:
    """The refusal of a reset that no located event would call (none is terminal), or None."""
    if any(terminal):
        return None
    located = [names[i] for i in index]
    return (f"{model}: reset is called at a terminal event, and none of the located events "
            f"({', '.join(located) or 'none'}) is terminal: give events={{name: "
            f"{{'terminal': True}}}}")


def restitution_error(model: str, event: str, value: float, sources: list, where: str = "") -> str:
    """The refusal of an impact's restitution outside [0, 1] or not finite: sources are the
    constants it is computed from."""
    origin = (f" (from the constant{'s' if len(sources) > 1 else ''} {', '.join(sources)})"
              if sources else "")
    effect = ("not finite" if not np.isfinite(value) else
              "negative: the contact would pass through" if value < 0 else
              "above 1: the impact would add energy")
    return (f"{model}: {where}the restitution of impact {event!r} is {value!r}{origin}, "
            f"{effect}; it must be in [0, 1]")


#: the controller guards of the runs going on (ControllerGuard), and the hook they share
_GUARDS: list = []
_LOCK = threading.Lock()
_PREVIOUS = [None]


def _unraisable(unraisable) -> None:
    """sys.unraisablehook while a run with a C controller is on: a callback's exception
    (ctypes' and cffi's say "callback") in a thread running a guarded run stops that
    run; any other goes to the hook that was there before."""
    ident = threading.get_ident()
    with _LOCK:
        guards = list(_GUARDS)
        previous = _PREVIOUS[0]
    callback = "callback" in (unraisable.err_msg or "")
    guard = next((g for g in guards if g.thread == ident), None) if callback else None
    if callback and guard is None and any(g.any_thread for g in guards):
        # an OpenMP thread of a batch is not one of Python's threads
        if ident not in {t.ident for t in threading.enumerate()}:
            guard = next(g for g in guards if g.any_thread)
    if guard is None:
        (previous or sys.__unraisablehook__)(unraisable)
        return
    guard.caught(unraisable)


class ControllerGuard:
    """A run with a C controller, watched: a ctypes (or cffi) callback whose Python body
    raises cannot raise through C (it prints "Exception ignored" and returns), so for the
    run's duration sys.unraisablehook catches the exception, sets ``flag`` (which the
    runtime's wrapper of the controller reads after each call, ending the run with
    non-finite inputs) and keeps the first exception for :meth:`raise_caught`.

    ``any_thread``: the run is a batch, whose OpenMP threads call the controller too."""

    def __init__(self, model: str, controller, any_thread: bool = False):
        self.model, self.controller, self.any_thread = model, controller, any_thread
        self.flag = np.zeros(1, dtype=np.intc)
        self.thread = threading.get_ident()
        self.error, self.more, self.source = None, 0, None

    def caught(self, unraisable) -> None:
        if self.error is None:
            exc = unraisable.exc_value
            if exc is None:
                exc = unraisable.exc_type()
            if unraisable.exc_traceback is not None and exc.__traceback__ is None:
                exc = exc.with_traceback(unraisable.exc_traceback)
            self.error, self.source = exc, unraisable.object
        else:
            self.more += 1
        self.flag[0] = 1

    def __enter__(self):
        with _LOCK:
            if not _GUARDS:
                _PREVIOUS[0] = sys.unraisablehook
                sys.unraisablehook = _unraisable
            _GUARDS.append(self)
        return self

    def __exit__(self, *exc_info):
        with _LOCK:
            _GUARDS.remove(self)
            if not _GUARDS:
                if sys.unraisablehook is _unraisable:
                    sys.unraisablehook = _PREVIOUS[0]
                _PREVIOUS[0] = None
        return False

    def raise_caught(self, t: float, runs: str = "") -> None:
        """Raise the controller's exception, if it raised, with where the run stopped."""
        if self.error is None:
            return
        more = f" (and {self.more} more times in other threads)" if self.more else ""
        body = getattr(self.source, "__name__", None)
        name = f"{body} ({self.controller!r})" if body else repr(self.controller)
        self.error.add_note(f"{self.model}: raised in the controller {name}, a C function "
                            f"that calls Python, at t = {t:.17g}{more}; "
                            f"{runs or 'the run'} stopped there")
        raise self.error
