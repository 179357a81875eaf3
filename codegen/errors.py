"""Exceptions of the generated modules and of the build."""

__all__ = ["DynamicsError", "ConvergenceError", "BuildError", "CacheError", "BudgetError"]


class DynamicsError(ArithmeticError):
    """The equations cannot be evaluated at a state: M singular or a non-finite result."""


class BuildError(RuntimeError):
    """Compiling generated code failed; the message carries the compiler's output."""


class ConvergenceError(DynamicsError):
    """An iteration (e.g. project onto the constraints) did not converge."""


class CacheError(OSError):
    """A generated model's files do not match its manifest (damaged, truncated,
    or built for another runtime): regenerate the model."""


class BudgetError(TimeoutError):
    """A build ran longer than its budget (``generate(..., budget=seconds)``); the
    message names the stage it was in."""
