"""What a simulation returns (plain data; the compiled runtime fills it)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..abi import STATUS, STATUS_CODE

__all__ = ["SimulationResult", "BatchResult", "ENDED_BY_EVENT"]

#: the statuses of a run that ended as asked: at a terminal event, or at its max_events-th
ENDED_BY_EVENT = (STATUS_CODE["CG_TERMINAL_EVENT"], STATUS_CODE["CG_MAX_EVENTS"])


@dataclass(slots=True)
class SimulationResult:
    """What CompiledModel.simulate returns: x[k] is the state at t[k].

    outputs: {name: array} of the model's outputs at t (shape (len(t),) + the
    output's shape), evaluated in C with the run's inputs. events: the events the run
    met, in time order, as (name, t, x) tuples, x the state at the event (before any
    reset or impact)."""
    t: np.ndarray
    x: np.ndarray
    states: list
    status: int            # a code of cg_model.h's CG_STATUS_LIST: 0 = ok, -1 = interrupted, ...
    message: str
    nsteps: int            # accepted steps
    nrejected: int
    nfev: int              # rhs evaluations
    method: str
    outputs: dict = field(default_factory=dict)
    events: list = field(default_factory=list)

    @property
    def success(self) -> bool:
        """The run reached its end, or ended as asked at a terminal event (status
        CG_TERMINAL_EVENT) or at its max_events-th event (CG_MAX_EVENTS)."""
        return self.status == 0 or self.status in ENDED_BY_EVENT

    def __getitem__(self, name: str):
        """The trajectory of one state by name."""
        return self.x[:, self.states.index(name)]

    def animate(self, path="motion.html", **options):
        """The run played in 3-D in one HTML page: ``codegen.animate(None, run, path,
        ...)`` (the model must have been compiled with the animation outputs)."""
        from ..animation.page import animate
        return animate(None, self, path, **options)

    def plot(self, states=None, outputs=(), energy=None, path=None):
        """A matplotlib Figure of states, outputs and the energy drift (codegen.runtime.plot.plot;
        needs the ``plot`` extra)."""
        from .plot import plot
        return plot(self, states, outputs, energy, path)


class BatchResult(tuple):
    """What simulate_batch returns: the tuple (t, X, status), so ``t, X, status =
    mod.simulate_batch(...)`` unpacks it, with ``outputs`` ({name: (N, len(t)) + its
    shape}, NaN after a run's failure or end), ``events`` (one list of (name, t, x)
    per run) and ``messages`` (one text per run: its status, and for a non-finite
    event function, output or impact, which one) as attributes."""

    def __new__(cls, t, X, status, outputs=None, events=None, messages=None):
        self = super().__new__(cls, (t, X, status))
        self.outputs = outputs if outputs is not None else {}
        self.events = events if events is not None else [[] for _ in range(len(status))]
        if messages is None:
            messages = [STATUS.get(int(s), f"status {s}") for s in status]
        self.messages = messages
        return self

    def __getnewargs__(self):
        return (*self, self.outputs, self.events, self.messages)

    t = property(lambda self: self[0])
    x = property(lambda self: self[1])
    status = property(lambda self: self[2])
