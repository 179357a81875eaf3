"""codegen: Gibbs–Appell equations of motion turned into fast compiled dynamics.

Public names: GibbsAppellMethod (formulation), generate and load (compiled
models), EquationsOfMotion / equations_of (the neutral form between them),
Options (code generation), animate (a run played in the browser),
potential_energy (an output of constant forces),
DynamicsError, ConvergenceError, BuildError, CacheError and BudgetError.
"""
from .version import __version__
from .animation import animate
from .formulation.appell import GibbsAppellMethod
from .pipeline.build import generate
from .pipeline.cache import load
from .equations.equations_of_motion import EquationsOfMotion
from .formulation.equations_of import equations_of
from .export.casadi import casadi_function, export_casadi
from .export.casadi_outputs import casadi_outputs
from .export.standalone import export_c, export_fmu
from .errors import BudgetError, BuildError, CacheError, ConvergenceError, DynamicsError
from .pipeline.options import Options
from .equations.signals import potential_energy
from .runtime.sweep import SweepResult, sweep

__all__ = ["GibbsAppellMethod", "animate", "generate", "load", "export_c", "export_fmu",
           "casadi_function", "casadi_outputs", "export_casadi", "Options",
           "sweep", "SweepResult", "potential_energy",
           "EquationsOfMotion", "equations_of", "BudgetError", "BuildError", "CacheError",
           "ConvergenceError", "DynamicsError"]
