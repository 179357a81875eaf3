"""Deprecated alias: the program layer is :mod:`codegen.program` (Program, Input,
make_program, operation_count, live_temporaries) and the plan of a model's programs
is :mod:`codegen.plan` (build_programs). Importing this module warns; it will be
removed in a later version."""
import warnings

from .plan import TREE_OPERATION_COST, build_programs
from .program import Input, Program, live_temporaries, make_program, operation_count

__all__ = ["Program", "Input", "build_programs", "make_program", "operation_count",
           "live_temporaries", "TREE_OPERATION_COST"]

warnings.warn("codegen.kernel is deprecated: import from codegen.program and codegen.plan",
              DeprecationWarning, stacklevel=2)
