"""Every choice that changes the generated code or its build, in one value.

``generate``, ``export_c`` and ``export_fmu`` take these as keywords, with
the defaults written here and nowhere else; the layers below them receive
the values. The cache key hashes the options together with the emitted
sources and the runtime's ABI version.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Options", "PORTABLE_FLAGS"]

#: -O2; -fno-math-errno lets sqrt compile to one instruction; -g0 drops debug
#: information. No -ffast-math, which would break the finiteness checks. These
#: are the flags of code meant for other machines (an FMU's binary).
PORTABLE_FLAGS = ("-O2", "-g0", "-fno-math-errno")


@dataclass(frozen=True)
class Options:
    """flags: C compiler flags (None: PORTABLE_FLAGS). rank_rtol: run-time constraints
    only, singular values of A below rank_rtol times the largest count as zero.
    recursive: the articulated-body recursion for trees of bodies (None: for particles,
    True: for rigid bodies too, False: never). unrolled_limit: above this many
    multiply-adds the L D Lᵀ solve is a loop instead of straight-line code, which would
    cost more to compile than it saves (a dense M of 34 unknowns is about 8000). fused:
    compile the runtime into the model's own library, specialized for it (the model's
    functions inline into the right-hand side, the integrators' loops get fixed bounds):
    faster to run, slower to build (see the performance notes). jacobian: generate the
    analytic Jacobian of the right-hand side (models without run-time constraints),
    which the implicit integrators, ``linearize`` and an FMU's directional derivatives
    use: True always, False never (the integrators fall back to finite differences),
    None (the default) while its program stays within 1.6 times the model's own and
    5,000 definitions (codegen.algorithms.jacobian.auto_limit: the robots up to the Atlas, the
    pendulum on a cart to n = 43), since beyond, its build costs more than the
    model's. parameter_jacobian: also generate the parameter sensitivities d x'/dp
    (``CompiledModel.parameter_jacobian``; models without run-time constraints), off by
    default as most models never use them."""
    flags: tuple = PORTABLE_FLAGS
    rank_rtol: float = 1e-9
    recursive: bool | None = None
    unrolled_limit: int = 8000
    fused: bool = False
    jacobian: bool | None = None
    parameter_jacobian: bool = False
    budget: float | None = None

    def __post_init__(self):
        flags = PORTABLE_FLAGS if self.flags is None else self.flags
        if isinstance(flags, (str, bytes)) or not all(isinstance(f, str) for f in flags):
            raise TypeError(f"flags must be a sequence of strings (one flag each), got {flags!r}")
        object.__setattr__(self, "flags", tuple(flags))
        if not (isinstance(self.rank_rtol, (int, float)) and math.isfinite(self.rank_rtol)
                and 0 < self.rank_rtol < 1):
            raise ValueError(f"rank_rtol must be a number in (0, 1), got {self.rank_rtol!r}")
        if self.recursive not in (None, True, False):
            raise TypeError(f"recursive must be None, True or False, got {self.recursive!r}")
        if self.fused not in (True, False):
            raise TypeError(f"fused must be True or False, got {self.fused!r}")
        if self.jacobian not in (True, False, None):
            raise TypeError(f"jacobian must be None, True or False, got {self.jacobian!r}")
        if self.parameter_jacobian not in (True, False):
            raise TypeError(f"parameter_jacobian must be True or False, got "
                            f"{self.parameter_jacobian!r}")
        if self.budget is not None and not (isinstance(self.budget, (int, float))
                                            and not isinstance(self.budget, bool)
                                            and math.isfinite(self.budget) and self.budget > 0):
            raise ValueError(f"budget must be a positive number of seconds or None, got "
                             f"{self.budget!r}")
        if not (isinstance(self.unrolled_limit, int) and self.unrolled_limit >= 0):
            raise ValueError(f"unrolled_limit must be a non-negative integer, got "
                             f"{self.unrolled_limit!r}")

    def key(self) -> str:
        """A stable text of every field that shapes the code (not the budget), for the
        cache key."""
        return (f"flags={' '.join(self.flags)}; rank_rtol={self.rank_rtol!r}; "
                f"recursive={self.recursive!r}; unrolled_limit={self.unrolled_limit}; "
                f"fused={self.fused}; jacobian={self.jacobian}"
                + ("; parameter_jacobian=True" if self.parameter_jacobian else ""))
