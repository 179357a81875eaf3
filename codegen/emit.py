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

__all__ = ["Sources", "emit", "template", "c_function", "TEMPLATE_DIR"]


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
        self.trig = {}        # argument -> k: sin, cos of it are cg_s<k>, cg_c<k>

    def _print_sin(self, expr):
        return self._trig_name(expr, "s") or super()._print_Function(expr)

    def _print_cos(self, expr):
        return self._trig_name(expr, "c") or super()._print_Function(expr)

    def _trig_name(self, expr, kind):
        k = self.trig.get(expr.args[0])
        return None if k is None else f"cg_{kind}{k}"

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
    nc: int = 0           # run-time constraint rows
    nh: int = 0           # of which from configuration constraints


def _quoted(names):
    return " ".join(f'"{n}",' for n in names)


_SIGNATURE = "double t, const double *x, const double *p, const double *r"


def _trig_plan(program: Program) -> dict:
    """The sin/cos pairs to compute before each statement (temporaries, then
    output entries, numbered in that order): {statement: [[arg] or [arg, arg]]}.

    Each argument gets one evaluation, placed before its first use. Two
    arguments share one cg_sincos2 (two SSE2 lanes): the one needed now and
    the next one in order of first use whose inputs are already defined."""
    statements = [e for _, e in program.temporaries] + [e for _, exprs in program.outputs
                                                        for e in exprs]
    index_of = {sym: i for i, (sym, _) in enumerate(program.temporaries)}
    first, ready = {}, {}
    for i, e in enumerate(statements):
        for node in sm.preorder_traversal(e):
            if isinstance(node, (sm.sin, sm.cos)) and node.args[0] not in first:
                arg = node.args[0]
                first[arg] = i
                ready[arg] = max((index_of[s] for s in arg.free_symbols if s in index_of),
                                 default=-1)
    pending = list(first)                   # in order of first use
    plan = {}
    for arg, i in first.items():
        if arg not in pending:
            continue                        # computed early, as another's partner
        pending.remove(arg)
        partner = next((b for b in pending if ready[b] < i), None)
        if partner is not None:
            pending.remove(partner)
        plan.setdefault(i, []).append([arg] if partner is None else [arg, partner])
    return plan


def _sincos_lines(printer: _Printer, groups: list) -> list:
    lines = []
    for group in groups:
        ks = []
        for arg in group:
            ks.append(len(printer.trig))
            printer.trig[arg] = ks[-1]
        lines.append("    double " + ", ".join(f"cg_s{k}, cg_c{k}" for k in ks) + ";")
        args = ", ".join(printer.doprint(a) for a in group)
        outs = ", ".join(f"&cg_s{k}, &cg_c{k}" for k in ks)
        lines.append(f"    cg_sincos{'2' if len(ks) == 2 else ''}({args}, {outs});")
    return lines


def c_function(name: str, program: Program, comment: str, signature: str = _SIGNATURE) -> str:
    """A static C function that evaluates one program into its output arrays
    (inputs are all read before any output is written, so an array may be both)."""
    printer = _Printer(program.names)
    c_expression = printer.doprint
    read = {part.split("*")[-1].strip() for part in signature.split(",")}
    args = ", ".join(f"double *{array}" for array, _ in program.outputs if array not in read)
    lines = [f"/* {comment} */", f"static void {name}({signature}{', ' if args else ''}{args})",
             "{"]
    if signature == _SIGNATURE:
        lines.append("    (void)t; (void)x; (void)p; (void)r;")
    for inp in program.inputs:
        lines.append(f"    const double {inp.name} = {inp.array}[{inp.index}];  /* {inp.label} */")
    if program.temporaries:
        lines.append("    /* common subexpressions */")
    plan = _trig_plan(program)
    k = 0
    for sym, expr in program.temporaries:
        lines += _sincos_lines(printer, plan.get(k, []))
        lines.append(f"    const double {c_expression(sym)} = {c_expression(expr)};")
        k += 1
    for array, exprs in program.outputs:
        lines.append(f"    /* {array} */")
        for i, e in enumerate(exprs):
            lines += _sincos_lines(printer, plan.get(k, []))
            lines.append(f"    {array}[{i}] = {c_expression(e)};")
            k += 1
    lines.append("}")
    return "\n".join(lines) + "\n"


def emit(programs: dict, eom: EquationsOfMotion, name: str, key: str = "",
         rank_rtol: float = 1e-9) -> Sources:
    """Render <name>.c and <name>.h from the programs of kernel.build_programs."""
    main = programs["eval"]
    c = eom.constraints
    layout = "packed lower triangle" if eom.symmetric else "full, row-major"
    functions = [c_function(f"{name}_eval", main,
                           f"q' into qd, the mass matrix into M ({layout}), F into F"
                           + (", the constraint matrix into A, B' into Bd and Baumgarte's"
                              " term into S (A u' = B' + S)" if c else "") + ": one pass")]
    if "position" in programs:
        functions.append(c_function(f"{name}_eval_position", programs["position"],
                                   "configuration constraints f(q, t) and their Jacobian f_q"))
    if "velocity" in programs:
        functions.append(c_function(f"{name}_eval_velocity", programs["velocity"],
                                   "A and B of the constraints A u = B"))
    tree = programs.get("tree")
    if tree is not None:
        functions.append(c_function(f"{name}_tree", tree,
                                    "q' into qd and u' into ud by the articulated-body recursion "
                                    "(codegen.recursive), the pivots into D"))
    solve = programs.get("solve")
    if solve is not None:
        functions.append(c_function(f"{name}_ldl", solve,
                                   "M u' = F by L D L^T, unrolled over M's structural nonzeros: "
                                   "u' into F, the pivots into D", "const double *M, double *F"))
    # the equations' operations (the solve is counted apart, as the peers do it numerically)
    ops = sum(p.operation_count for k, p in programs.items() if k not in ("solve", "tree"))
    solver = ("articulated-body recursion over the tree of bodies, O(n)" if tree is not None
              else "unrolled LDL^T of the symmetric positive definite M" if solve is not None
              else "Cholesky of the symmetric positive definite M" if eom.symmetric
              else "LU with partial pivoting")
    if c:
        solver = "SVD null-space elimination of the constraints, then " + solver
    mass_failure = ("the mass matrix is not positive definite" if eom.symmetric
                    else "the mass matrix is singular")
    nq, nu = eom.nq, eom.nu
    fields = dict(
        name=name, NAME=name.upper(), version=__version__,
        origin=eom.origin or "a SymPy model",
        nq=nq, nu=nu, nx=nq + nu, np=len(eom.constants), nr=len(eom.specifieds),
        nm=nu * (nu + 1) // 2 if eom.symmetric else nu * nu, mass_layout=layout,
        state_list=", ".join(eom.state_names) or "(none)",
        constant_list=", ".join(eom.constant_names) or "(none)",
        specified_list=", ".join(eom.specified_names) or "(none)",
        state_names=_quoted(eom.state_names), constant_names=_quoted(eom.constant_names),
        specified_names=_quoted(eom.specified_names),
        solver=solver, mass_failure=mass_failure, operation_count=ops,
        eval_functions="\n".join(functions), key=key,
        nc=c.nc if c else 0, nh=c.nh if c else 0, rank_rtol=repr(float(rank_rtol)),
        solve_call=(f"{name}_solve_unrolled(M, F)" if solve is not None
                    else f"{name}_cholesky_solve({name.upper()}_NU, M, F, work)" if eom.symmetric
                    else f"{name}_solve_mass(M, F)"),
    )
    # lu.c serves the Rosenbrock integrator (and a non-symmetric mass matrix)
    linalg = [template("lu.c")]
    if eom.symmetric:
        linalg += [template("packed.c")] + ([] if solve or tree else [template("cholesky.c")])
    else:
        linalg.append(template("mass_full.c"))
    if c:
        linalg.append(template("svd.c"))
        fields["eval_extra_decl"] = (f"    double A[{name.upper()}_NC * {name.upper()}_NU], "
                                     f"Bd[{name.upper()}_NC], S[{name.upper()}_NC];\n")
        fields["eval_extra_args"] = ", A, Bd, S"
        fields["rhs_source"] = template("constrained.c").substitute(fields)
        fields["constraint_api"] = template("constrained.h").substitute(fields)
    else:
        fields["eval_extra_decl"] = ""
        fields["eval_extra_args"] = ""
        fields["rhs_source"] = template("rhs_tree.c" if tree else "rhs.c").substitute(fields)
        fields["constraint_api"] = f"#define {name.upper()}_NC 0   /* no run-time constraints */\n"
    fields["trig_source"] = template("trig.c").template
    fields["linalg_source"] = "\n".join(t.substitute(fields) for t in linalg)
    fields["solve_source"] = template("ldl.c").substitute(fields) if solve is not None else ""
    fields["integrator_api"] = template("integrators.h").substitute(fields)
    # explicit methods and the shared parts, the Rosenbrock family, BDF (which
    # uses the Rosenbrock family's Jacobian and LU), then integrate_to over all
    fields["integrators_source"] = "\n".join(
        template(t).substitute(fields) for t in ("integrators.c", "rosenbrock.c", "bdf.c",
                                                 "integrate.c"))
    files = {
        f"{name}.h": template("model.h").substitute(fields),
        f"{name}.c": template("model.c").substitute(fields),
    }
    return Sources(name=name, files=files, operation_count=ops, solver=solver,
                   mass_failure=mass_failure, nc=fields["nc"], nh=fields["nh"])
