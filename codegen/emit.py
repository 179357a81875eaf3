"""Program -> C sources, rendered from the templates in templates/.

The emitter knows nothing of frames or bodies: it prints a
:class:`~codegen.kernel.Program`. Integer powers become multiplications
(``x*x``, ``cg_sq(expr)``, ``cg_powi`` for larger exponents), never ``pow``.
"""
from __future__ import annotations

import string
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import sympy as sm
from sympy.printing.c import C99CodePrinter

from . import __version__
from .eom import EquationsOfMotion
from .kernel import Program

__all__ = ["Sources", "emit", "template", "TEMPLATE_DIR"]


def _template_dir() -> Path:
    """templates/ of a source checkout, else the installed codegen.templates."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "templates", here / "templates"):
        if (candidate / "model.c").is_file():
            return candidate
    raise FileNotFoundError("codegen's templates/ folder is missing from the installation")


TEMPLATE_DIR = _template_dir()


@lru_cache(maxsize=None)
def template(name: str) -> string.Template:
    return string.Template((TEMPLATE_DIR / name).read_text())


class _Printer(C99CodePrinter):
    """C99 with the program's C names for its inputs and integer powers as products."""

    _MAX_UNROLL = 4

    def __init__(self, names):
        # order="none": the canonical term order costs a third of the printing
        super().__init__({"full_prec": False, "order": "none"})
        self._names = names

    def _print_Symbol(self, expr):
        name = self._names.get(expr)
        return name if name is not None else super()._print_Symbol(expr)

    _print_Dummy = _print_Symbol

    def _print_Function(self, expr):
        name = self._names.get(expr)
        return name if name is not None else super()._print_Function(expr)

    def _print_Derivative(self, expr):
        name = self._names.get(expr)
        if name is None:
            raise ValueError(f"{expr} is neither a state nor a specified input")
        return name

    def _print_Pow(self, expr):
        b, e = expr.base, expr.exp
        if e.is_Integer and e != 0:
            n = abs(int(e))
            if b.is_Symbol and n <= self._MAX_UNROLL:
                prod = "*".join([self._print(b)] * n)
            elif n == 2:
                prod = f"cg_sq({self._print(b)})"
            elif n == 3:
                prod = f"cg_cube({self._print(b)})"
            else:
                return f"cg_powi({self._print(b)}, {int(e)})"
            if e < 0:
                return f"1.0/({prod})" if n > 1 else f"1.0/{self.parenthesize(b, 1000)}"
            return f"({prod})" if n > 1 and b.is_Symbol else prod
        if e == sm.S.Half:
            return f"sqrt({self._print(b)})"
        if e == -sm.S.Half:
            return f"1.0/sqrt({self._print(b)})"
        return f"pow({self._print(b)}, {self._print(e)})"


@dataclass
class Sources:
    """The generated texts of one model, keyed by file name."""
    name: str
    files: dict           # file name -> text
    operation_count: int
    solver: str
    mass_failure: str     # what a failed factorization means, for error messages


def _quoted(names):
    return " ".join(f'"{n}",' for n in names)


def emit(program: Program, eom: EquationsOfMotion, name: str, key: str = "") -> Sources:
    """Render <name>.c and <name>.h for a program."""
    c_expression = _Printer(program.names).doprint
    lines = []
    for inp in program.inputs:
        lines.append(f"    const double {inp.name} = {inp.array}[{inp.index}];  /* {inp.label} */")
    if program.temporaries:
        lines.append("    /* common subexpressions */")
    for sym, expr in program.temporaries:
        lines.append(f"    const double {sym} = {c_expression(expr)};")
    lines.append("    /* q' */")
    lines += [f"    qd[{i}] = {c_expression(e)};" for i, e in enumerate(program.qdot)]
    layout = "packed lower triangle" if program.symmetric else "full, row-major"
    lines.append(f"    /* mass matrix, {layout} */")
    lines += [f"    M[{i}] = {c_expression(e)};" for i, e in enumerate(program.mass)]
    lines.append("    /* forcing */")
    lines += [f"    F[{i}] = {c_expression(e)};" for i, e in enumerate(program.forcing)]
    ops = program.operation_count
    solver = ("Cholesky of the symmetric positive definite M" if program.symmetric
              else "LU with partial pivoting")
    mass_failure = ("the mass matrix is not positive definite" if program.symmetric
                    else "the mass matrix is singular")
    fields = dict(
        name=name, NAME=name.upper(), version=__version__,
        origin=eom.origin or "a SymPy model",
        nq=program.nq, nu=program.nu, nx=program.nq + program.nu,
        np=program.np, nr=program.nr, nm=len(program.mass), mass_layout=layout,
        state_list=", ".join(eom.state_names) or "(none)",
        constant_list=", ".join(eom.constant_names) or "(none)",
        specified_list=", ".join(eom.specified_names) or "(none)",
        state_names=_quoted(eom.state_names), constant_names=_quoted(eom.constant_names),
        specified_names=_quoted(eom.specified_names),
        solver=solver, mass_failure=mass_failure, operation_count=ops,
        body="\n".join(lines), key=key,
    )
    fields["solver_source"] = template("cholesky.c" if program.symmetric else "lu.c").substitute(fields)
    files = {
        f"{name}.h": template("model.h").substitute(fields),
        f"{name}.c": template("model.c").substitute(fields),
    }
    return Sources(name=name, files=files, operation_count=ops, solver=solver,
                   mass_failure=mass_failure)
