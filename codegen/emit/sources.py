"""Programs -> C sources: plain data rendered by the Jinja2 templates in templates/model/.

The emitter knows nothing of frames or bodies: it turns each
:class:`~codegen.programs.program.Program` into a function's data (parameters, input
reads, statements as C expression strings, sin/cos pairs; :mod:`codegen.emit.layout`) and
lets ``model.c.j2`` / ``model.h.j2`` write the C, with StrictUndefined (a name
the template uses and the data lacks is an error, never an empty string).
Integer powers become multiplications (``x*x``, ``cg_sq(expr)``,
``cg_powi`` for larger exponents), never ``pow`` (:mod:`codegen.emit.printer`).

A model's C holds only its own functions and its descriptor (cg_model.h);
the solve, the constraint elimination and the integrators are the runtime's
(templates/runtime), compiled once.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..abi import FUNCTIONS
from ..equations.equations_of_motion import EquationsOfMotion
from ..equations.signals import entry_names
from ..version import __version__
from .column_loops import overwritten_entries
from . import layout
from .layout import SCHEDULED, executed_operations, function_data, spread_parts
from .render import render

__all__ = ["Sources", "emit"]


@dataclass
class Sources:
    """The generated texts of one model, keyed by file name."""
    name: str
    files: dict           # file name -> text
    c_files: list         # the files to compile, in order
    operation_count: int
    solver: str
    mass_failure: str     # what a failed factorization means, for error messages
    nc: int = 0           # run-time constraint rows
    nh: int = 0           # of which from configuration constraints
    jacobian: bool = False  # the analytic Jacobian is generated
    flags: tuple = ()     # the descriptor's flags (cg_model.h's CG_FLAG_LIST symbols)
    file_flags: dict = None  # c file -> compiler flags after the build's (PART_FLAGS)


def emit(programs: dict, eom: EquationsOfMotion, name: str, rank_rtol: float,
         fused: bool) -> Sources:
    """<name>.c and <name>.h from the programs of plan.build_programs; rank_rtol and
    fused as in codegen.pipeline.options.Options (fused: the runtime compiled into the model's
    file, see templates/runtime/cg_fused.c)."""
    c = eom.constraints
    storage = "packed lower triangle" if eom.symmetric else "full, row-major"
    # a model's M by its mass function alone, which eval calls (codegen.algorithms.plan)
    calls_mass = "mass" in programs and "M" not in dict(programs["eval"].outputs)
    functions = []

    def add(kind, program, comment, **options):
        """kind's function, and before it its twin over pairs where program has one
        (mirrored limbs side by side, where cg_math.h has cg_v2), each under its guard."""
        if program.lanes is not None:
            functions.append(dict(function_data(kind, f"{name}_{kind}", program.lanes,
                                                comment + ", mirrored limbs side by side",
                                                options.get("calls", ())),
                                  guard="defined(CG_LANES)", part_symbol=f"{name}_{kind}_lanes"))
        functions.append(dict(function_data(kind, f"{name}_{kind}", program, comment, **options),
                              guard="!defined(CG_LANES)" if program.lanes is not None else ""))
    add("eval", programs["eval"], f"q' into qd, the mass matrix into M ({storage}), F into F"
        + (", the constraint matrix into A, B' into Bd and Baumgarte's"
           " term into S (A u' = B' + S)" if c else "")
        + (f" (M by {name}_mass)" if calls_mass else ": one pass"),
        calls=[("mass", f"{name}_mass")] if calls_mass else ())
    # the descriptor's function pointers, in cg_model's order (0: the model has none)
    pointers = dict.fromkeys(FUNCTIONS, "0")
    pointers["eval"] = f"{name}_eval"
    nx = eom.nq + eom.nu
    for kind, key, comment in (
            ("mass", "mass", f"the mass matrix alone into M ({storage}), by the "
                             "composite-rigid-body algorithm"),
            ("position", "position", "configuration constraints f(q, t) and their Jacobian f_q"),
            ("velocity", "velocity", "A and B of the constraints A u = B"),
            ("tree", "tree", "q' into qd and u' into ud by the articulated-body recursion "
                             "(codegen.recursive), the pivots into D"),
            ("ldl", "solve", "M u' = F by L D L^T, unrolled over M's structural nonzeros: "
                             "u' into F, the pivots into D"),
            ("jacobian", "jacobian", "the analytic Jacobian's parts at x with u' given: dq'/dx "
                                     "into Jq, dF/dx - (dM/dx) u' into R, the same over r into "
                                     "Jqr and Rr (row-major)"),
            ("parameter_jacobian", "parameter_jacobian",
             "the same over the constants: dq'/dp into Jqp, dF/dp - (dM/dp) u' into Rp"),
            ("columns", "columns", "B <- M^-1 B (nu x w, row-major) by the articulated-body "
                                   "recursion: the articulated inertias once, then the passes "
                                   "over each column"),
            ("inverse_dynamics", "inverse_dynamics",
             "inverse dynamics: tau = M ud - F by the Newton-Euler passes over the tree"),
            ("outputs", "outputs", "the outputs (output_names) into y"),
            ("events", "events", "the event functions (event_names) into g"),
            ("impacts", "impacts", "the impacts' contact rows: the partial velocities along "
                                   "each normal into J (row-major), the normal velocity into "
                                   "vn, the restitution into e")):
        if key in programs:
            # R's entries the columns function writes before reading (cg_jacobian: R is
            # solved in place by it, whenever the model has one)
            overwritten = {"R": overwritten_entries(programs["columns"], nx)} \
                if kind == "jacobian" and "columns" in programs else None
            add(kind, programs[key], comment, overwritten=overwritten)
            pointers[kind] = f"{name}_{kind}"
    nr = len(eom.specified_names)
    feedback = None
    if nr:                          # the runtime's K law with the sizes compiled in
        feedback = dict(symbol=f"{name}_feedback", signature=FUNCTIONS["feedback"].signature,
                        nr=nr, nx=nx, comment="the feedback law r = c - K x (K: nr x nx, "
                                              "row-major; c = r_ref + K x_ref)")
        pointers["feedback"] = feedback["symbol"]
    tree, solve = "tree" in programs, "solve" in programs
    if calls_mass:                  # defined before its caller (both twins, where paired)
        functions = [f for f in functions if f["kind"] == "mass"] + \
            [f for f in functions if f["kind"] != "mass"]
    # the equations' operations (the solve is counted apart, as the peers do it numerically)
    # (and M's, where eval calls the mass function for it)
    ops = sum(executed_operations(p, k) for k, p in programs.items()
              if (k == "mass" and calls_mass) or k not in (
                  "mass", "solve", "tree", "jacobian", "parameter_jacobian", "columns", "outputs",
                  "events", "impacts", "inverse_dynamics"))
    solver = ("articulated-body recursion over the tree of bodies, O(n)" if tree
              else "unrolled LDL^T of the symmetric positive definite M" if solve
              else "Cholesky of the symmetric positive definite M" if eom.symmetric
              else "LU with partial pivoting")
    if c:
        solver = "SVD null-space elimination of the constraints, then " + solver
    if not tree and eom.tree is not None:
        solver += " (the articulated-body recursion measured larger)"
    elif not tree and eom.tree_note:
        solver += f" (not the tree recursion: {eom.tree_note})"
    flags = [f for f, on in (("CG_SYMMETRIC", eom.symmetric), ("CG_TREE", tree),
                             ("CG_UNROLLED", solve),
                             ("CG_QDOT_IS_U", list(eom.qdot) == list(eom.u)),
                             ("CG_HOLONOMIC", bool(c) and 0 < c.nh == c.nc),
                             ("CG_OUTPUT_FORCES", eom.output_forces),
                             ("CG_JACOBIAN_UD", "jacobian" in programs and "ud" in dict(
                                 programs["jacobian"].outputs))) if on]
    outputs = entry_names(eom.outputs)
    impact_start, rows = [], 0
    for event in eom.events:             # the impacts' rows, event by event (CSR offsets)
        impact_start.append(rows)
        rows += sum(len(i.J) for i in eom.impacts if i.event == event.name)
    impact_start.append(rows)
    data = dict(
        name=name, NAME=name.upper(), version=__version__, origin=eom.origin or "a SymPy model",
        nq=eom.nq, nu=eom.nu, nc=c.nc if c else 0, nh=c.nh if c else 0,
        nm=eom.nu * (eom.nu + 1) // 2 if eom.symmetric else eom.nu * eom.nu,
        state_names=eom.state_names, constant_names=eom.constant_names,
        specified_names=eom.specified_names, solver=solver, operation_count=ops,
        flags=" | ".join(flags) or "0", rank_rtol=repr(float(rank_rtol)),
        functions=functions, fused=fused, feedback_law=feedback,
        output_names=outputs, event_names=[e.name for e in eom.events],
        nj=rows, impact_start=impact_start if rows else [],
        # M's factor the Jacobian's program leaves for the columns function (cg_jacobian
        # passes a buffer of nl entries to both)
        nl=len(dict(programs["jacobian"].outputs).get("L", ())) if "jacobian" in programs else 0)
    solve_functions = [f for f in functions if f["kind"] in ("tree", "ldl", "columns")]
    # the files of functions compiled beside the model's own: file -> (functions, what,
    # flags after the build's)
    beside = {}
    if not fused and sum(len(f["statements"]) for f in solve_functions) > layout.SPLIT_STATEMENTS:
        beside[f"{name}_solve.c"] = (solve_functions, "the solve", ())
    looped_mass = [f for f in functions if f["kind"] == "mass" and f["column"]]
    if not fused and looped_mass:      # a large tree's: at LOOP_FLAGS, on the other core
        beside[f"{name}_mass.c"] = (looped_mass, "the mass matrix", layout.LOOP_FLAGS)
    units = {} if fused else spread_parts(functions, name)
    for fs, _, _ in beside.values():
        for f in fs:
            f["external"] = True
    data["eval_ldl_function"] = _eval_ldl(functions, name, data["nm"], eom.nu,
                                          programs["eval"].operation_count)
    if data["eval_ldl_function"]:
        pointers["eval_ldl"] = data["eval_ldl_function"]["symbol"]
    data["pointers"] = list(pointers.values())
    files = {f"{name}.h": render("model/model.h.j2", **data), f"{name}.c": render("model/model.c.j2", **data)}
    c_files = [f"{name}.c"]
    for fname, (fs, what, _) in beside.items():
        files[fname] = render("model/model_solve.c.j2", **dict(data, functions=fs, what=what,
                                                         file=fname))
        c_files.append(fname)
    for fname, parts in units.items():
        files[fname] = render("model/model_parts.c.j2", name=name, version=__version__,
                              parts=[dict(function=f, part=part) for f, part in parts])
        c_files.append(fname)
    file_flags = {fname: layout.PART_FLAGS for fname in units}
    file_flags.update({fname: flags for fname, (_, _, flags) in beside.items() if flags})
    mass_failure = ("the mass matrix is not positive definite" if eom.symmetric
                    else "the mass matrix is singular")
    return Sources(name=name, files=files, c_files=c_files, operation_count=ops, solver=solver,
                   mass_failure=mass_failure, nc=data["nc"], nh=data["nh"],
                   jacobian="jacobian" in programs, flags=tuple(flags), file_flags=file_flags)


#: eval_ldl where M's stored entries are at least this share of eval's operations: what
#: it saves is M's stores and loads and a call, what it may cost is the registers of a
#: larger function. Measured (instructions of cg_rhs, apart -> in one): the rolling disk
#: (6 entries, 39 operations) 453 -> 418, the UR5 (21, 777) 2,089 -> 1,943, HyQ (78, 1,756)
#: 4,649 -> 4,480; the Whipple bicycle (6, 2,588) 5,103 -> 5,120, left apart.
EVAL_LDL_SHARE = 0.01


def _eval_ldl(functions: list, name: str, nm: int, nu: int, eval_operations: int) -> dict | None:
    """The data of eval and the unrolled L D L^T in one function (cg_model.h's eval_ldl),
    where both are in the model's file, eval is one body (no parts, no calls) that the
    compiler can inline and M is large enough beside it (EVAL_LDL_SHARE); None otherwise
    (a tree's recursion, run-time constraints: no ldl function)."""
    kinds = {f["kind"]: f for f in functions}
    ev, ldl = kinds["eval"], kinds.get("ldl")
    if ldl is None or ldl.get("external") or ev["parts"] or ev["calls"] \
            or nm < EVAL_LDL_SHARE * eval_operations:
        return None
    return dict(symbol=f"{name}_eval_ldl", signature=FUNCTIONS["eval_ldl"].signature,
                eval=ev["symbol"], ldl=ldl["symbol"], nm=nm, scheduled="eval_ldl" in SCHEDULED,
                diagonal=[i * (i + 3) // 2 for i in range(nu)],
                comment="q' into qd and u' into ud: eval, then M u' = F by the unrolled "
                        "L D L^T, in one body; the pivots into D, M's diagonal into Md")
