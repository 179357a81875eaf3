"""The names a model and its variables may take.

A model's name names its files, its C functions and its folder; its states',
constants' and specifieds' names are C strings in the generated name tables
and FMI variable names. Both are checked before anything is written.
"""
from __future__ import annotations

import re

from ..abi import RUNTIME_DIR

__all__ = ["C_KEYWORDS", "c_identifier_error", "model_name_error", "check_model_name",
           "check_variable_names"]

C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum
extern float for goto if inline int long register restrict return short signed sizeof
static struct switch typedef union unsigned void volatile while _Bool _Complex _Imaginary
bool true false class new delete this template typename namespace operator private
protected public virtual friend mutable explicit using try catch throw""".split())

#: files shipped beside a model (the runtime, the FMI headers): a model may not take their names
_SHIPPED = frozenset({p.stem for p in RUNTIME_DIR.iterdir()}
                     | {"fmi2Functions", "fmi2FunctionTypes", "fmi2TypesPlatform"})
_MAX_NAME = 64


def c_identifier_error(name: str) -> str | None:
    """Why name cannot be a C identifier of the generated code, or None."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return (f"{name!r} is not a C identifier (letters, digits, underscores; not starting "
                f"with a digit)")
    if name in C_KEYWORDS:
        return f"{name!r} is a C/C++ keyword"
    if name.startswith("__") or re.match(r"_[A-Z]", name):
        return f"{name!r} is reserved in C (leading double underscore or underscore-capital)"
    return None


def model_name_error(name) -> str | None:
    """Why name cannot name a model (its files, C functions and folder), or None."""
    why = c_identifier_error(name)
    if why:
        return why
    if len(name) > _MAX_NAME:
        return f"{name[:20]!r}... has {len(name)} characters, more than {_MAX_NAME}"
    if name.startswith("cg_") or name in _SHIPPED:
        return (f"{name!r} is taken by the files shipped beside a model (the runtime's cg_*, "
                f"the FMI headers)")
    return None


def check_model_name(name) -> None:
    """A ValueError that says why, if name cannot name a model."""
    why = model_name_error(name)
    if why:
        raise ValueError(f"model name: {why}")


def check_variable_names(eq) -> None:
    """A ValueError naming the first state, constant or specified of the equations eq
    whose name cannot be a C string or an FMI variable name."""
    for kind, names in (("state", eq.state_names), ("constant", eq.constant_names),
                        ("specified", eq.specified_names)):
        for n in names:
            if not n.isascii() or not n.isprintable() or any(ch in n for ch in '"\\'):
                raise ValueError(f"{kind} name {n!r} cannot be a C string or an FMI variable "
                                 f"name (printable ASCII without quotes or backslashes)")
