"""codegen: Gibbs–Appell equations of motion turned into fast compiled dynamics.

Public names: GibbsAppellMethod (formulation), generate and load (compiled
models), EquationsOfMotion / equations_of (the neutral form between them),
Options (code generation), animate (a run played in the browser),
potential_energy (an output of constant forces),
DynamicsError, ConvergenceError, BuildError, CacheError and BudgetError.
"""
__version__ = "0.1.0"

from .animation import animate
from .appell import GibbsAppellMethod
from .build import generate
from .cache import load
from .eom import EquationsOfMotion, equations_of
from .export import export_c, export_fmu
from .errors import BudgetError, BuildError, CacheError, ConvergenceError, DynamicsError
from .options import Options
from .signals import potential_energy
from .sweep import SweepResult, sweep

__all__ = ["GibbsAppellMethod", "animate", "generate", "load", "export_c", "export_fmu", "Options",
           "sweep", "SweepResult", "potential_energy",
           "EquationsOfMotion", "equations_of", "BudgetError", "BuildError", "CacheError",
           "ConvergenceError", "DynamicsError"]
