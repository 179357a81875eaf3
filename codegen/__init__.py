"""codegen: Gibbs–Appell equations of motion turned into fast compiled dynamics.

Public names: GibbsAppellMethod (formulation), generate and load (compiled
models), EquationsOfMotion / equations_of (the neutral form between them),
DynamicsError and BuildError.
"""
__version__ = "0.1.0"

from .appell import GibbsAppellMethod
from .build import generate, load
from .eom import EquationsOfMotion, equations_of
from .export import export_c, export_fmu
from .errors import BuildError, ConvergenceError, DynamicsError

__all__ = ["GibbsAppellMethod", "generate", "load", "export_c", "export_fmu",
           "EquationsOfMotion", "equations_of", "BuildError", "ConvergenceError",
           "DynamicsError"]
