"""Identification of inertial parameters: the regressor τ = Y(q, u, u') π, the exact base
parameters, and their estimation from measured motion (docs/identification.md).

``reg = regressor(model)`` (codegen.identification.regressor) carries ``parameters``,
``values``, ``base`` (exact combinations of π), ``base_table()``, ``generate(name)``, a
compiled module with ``regressor(x, udot)`` and ``base_regressor(x, udot)``, and
``export_c(name)``, the same as standalone C (codegen.identification.standalone). A
model's constraints, closed loops included, are projected onto its independent speeds
(codegen.identification.loops), and a loop's exact states are algebraic
(codegen.identification.algebraic). ``stack`` and
``estimate`` (codegen.identification.estimation) fit the base parameters by weighted least
squares; ``optimize_excitation`` (codegen.identification.excitation) finds a Fourier
trajectory that conditions the fit. ``estimate_consistent``
(codegen.identification.consistent) fits π on the full regressor (``stack_full``) with
every body's pseudo-inertia positive semidefinite (cvxpy), and ``consistency`` gives each
body's smallest pseudo-inertia eigenvalue for any π.
"""
from .consistent import (ConsistentEstimate, InconsistentSolve, base_matrix, consistency,
                         estimate_consistent, pseudo_inertia, stack_full)
from .estimation import Estimate, RankDeficientExcitation, condition_number, estimate, stack
from .excitation import FourierTrajectory, optimize_excitation
from .regressor import Regressor, regressor

__all__ = ["regressor", "Regressor", "stack", "estimate", "Estimate", "condition_number",
           "RankDeficientExcitation", "FourierTrajectory", "optimize_excitation",
           "estimate_consistent", "ConsistentEstimate", "InconsistentSolve", "stack_full",
           "pseudo_inertia", "consistency", "base_matrix"]
