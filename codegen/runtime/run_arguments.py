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

import numpy as np

__all__ = ["event_settings", "feedback", "checked_reset", "DEFAULT_MAX_EVENTS"]

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
    else:
        raise TypeError(f"{model}: events must be a dict {{name: {{'direction': d, "
                        f"'terminal': b}}}} or a list of names, got {type(events).__name__}")
    index, direction, terminal = [], [], []
    for name, spec in chosen.items():
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
        data = np.ascontiguousarray(np.asarray(data, dtype=np.float64))
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
        x_new = np.array(reset(event, t, np.array(x), p), dtype=np.float64)
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
