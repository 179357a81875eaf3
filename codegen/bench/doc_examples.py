"""The seventeen documentation examples of issue 27, by name: SymPy's pages for
physics.mechanics and physics.biomechanics (codegen.bench.doc_sympy) and PyDy's
examples (codegen.bench.doc_pydy), each a builder of a fresh
:class:`codegen.bench.doc_model.DocModel`."""
from __future__ import annotations

from . import doc_pydy, doc_sympy

__all__ = ["MODELS"]

MODELS = {
    "rolling_disc": doc_sympy.rolling_disc,
    "rolling_disc_aux": doc_sympy.rolling_disc_aux,
    "bicycle": doc_sympy.bicycle,
    "nonminimal_pendulum": doc_sympy.nonminimal_pendulum,
    "multidof_system": doc_sympy.multidof_system,
    "four_bar": doc_sympy.four_bar,
    "duffing": doc_sympy.duffing,
    "atwood": doc_sympy.atwood,
    "arm": doc_sympy.arm,
    "double_pendulum": doc_pydy.double_pendulum,
    "nbody_pendulum3": doc_pydy.nbody_pendulum,
    "conical_pendulum": doc_pydy.conical_pendulum,
    "mass_spring_damper": doc_pydy.mass_spring_damper,
    "chaos_pendulum": doc_pydy.chaos_pendulum,
    "multidof_holonomic": doc_pydy.multidof_holonomic,
    "astrobee": doc_pydy.astrobee,
    "carvallo_whipple": doc_pydy.carvallo_whipple,
}
