"""Progress of the stages of a build, one line each as it finishes, with its time.

The same printing for ``generate(..., progress=True)`` and the command line.
"""
from __future__ import annotations

import sys
import time
from contextlib import contextmanager

__all__ = ["Stages"]


class Stages:
    """``with stages("forming"): ...`` prints ``forming     0.123 s`` when enabled."""

    def __init__(self, enabled: bool = True, stream=None):
        self.enabled = bool(enabled)
        self.stream = stream
        self.times = {}

    @contextmanager
    def __call__(self, name: str):
        t0 = time.perf_counter()
        yield
        self.times[name] = time.perf_counter() - t0
        self.line(f"{name:<12}{self.times[name]:8.3f} s")

    def line(self, text: str) -> None:
        if self.enabled:
            print(text, file=self.stream or sys.stderr, flush=True)
