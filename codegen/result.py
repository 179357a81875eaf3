"""What a simulation returns (plain data; the compiled runtime fills it)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SimulationResult"]


@dataclass(slots=True)
class SimulationResult:
    """What CompiledModel.simulate returns: x[k] is the state at t[k]."""
    t: np.ndarray
    x: np.ndarray
    states: list
    status: int            # a code of cg_model.h's CG_STATUS_LIST: 0 = ok, -1 = interrupted, ...
    message: str
    nsteps: int            # accepted steps
    nrejected: int
    nfev: int              # rhs evaluations
    method: str

    @property
    def success(self) -> bool:
        return self.status == 0

    def __getitem__(self, name: str):
        """The trajectory of one state by name."""
        return self.x[:, self.states.index(name)]
