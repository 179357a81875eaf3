"""Progress of the stages of a build, one line each as it finishes, with its time, and
the build's time budget.

The same printing for ``generate(..., progress=True)`` and the command line. With a
budget (``generate(..., budget=seconds)``), the stages and the long loops inside them
(the formulation's bodies, the CSE's rounds, the emitter's functions) call
:func:`checkpoint`, which raises :class:`codegen.errors.BudgetError` naming the stage
once the build has run longer than its budget; the compiler is given what is left.
"""
from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from contextvars import ContextVar

from .errors import BudgetError

__all__ = ["Stages", "checkpoint"]

_ACTIVE: ContextVar = ContextVar("codegen_stages", default=None)


class Stages:
    """``with stages("forming"): ...`` prints ``forming     0.123 s`` when enabled.

    budget: seconds the stages may take together (None: no limit), counted from the
    first stage; what names the build in the message of a BudgetError."""

    def __init__(self, enabled: bool = True, stream=None, budget: float | None = None,
                 what: str = "the build"):
        self.enabled = bool(enabled)
        self.stream = stream
        self.times = {}
        self.budget, self.what = budget, what
        self.stage = None
        self._start = None

    @contextmanager
    def __call__(self, name: str):
        if self._start is None:
            self._start = time.perf_counter()
        self.stage = name
        token = _ACTIVE.set(self)
        t0 = time.perf_counter()
        try:
            self.check()
            yield
        finally:
            _ACTIVE.reset(token)
        self.times[name] = time.perf_counter() - t0
        self.line(f"{name:<12}{self.times[name]:8.3f} s")
        self.check()

    def remaining(self) -> float | None:
        """Seconds left of the budget (None: no budget)."""
        if self.budget is None:
            return None
        start = self._start if self._start is not None else time.perf_counter()
        return self.budget - (time.perf_counter() - start)

    def check(self) -> None:
        """BudgetError if the stages have run longer than the budget."""
        left = self.remaining()
        if left is not None and left < 0:
            self.exceeded()

    def exceeded(self):
        elapsed = time.perf_counter() - self._start
        raise BudgetError(f"{self.what} stopped in stage {self.stage!r} after {elapsed:.1f} s, "
                          f"over its budget of {self.budget:g} s (generate(..., budget=...)); "
                          f"a larger model takes longer: raise the budget, or leave it out "
                          f"(progress=True prints each stage's time)")

    def line(self, text: str) -> None:
        if self.enabled:
            print(text, file=self.stream or sys.stderr, flush=True)


def checkpoint() -> None:
    """Inside a stage of a build with a budget: BudgetError once it is spent."""
    stages = _ACTIVE.get()
    if stages is not None and stages.budget is not None:
        stages.check()
