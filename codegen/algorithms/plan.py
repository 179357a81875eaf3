"""The plan of a model's generated functions: which programs it gets.

Above the program layer (codegen.programs.program) and the solvers built on it:
the L D Lᵀ solve (codegen.algorithms.ldlt), the articulated-body recursion
(codegen.algorithms.aba) and the analytic Jacobian (codegen.algorithms.jacobian). None of
them imports this module.
"""
from __future__ import annotations

import dataclasses

from . import jacobian as jac
from .jacobian_columns import column_solve_program, state_supports
from .crba import composite_programs
from ..equations.equations_of_motion import EquationsOfMotion
from .lanes import lane_program
from .rnea import inverse_program
from ..programs.program import check_defined, make_program
from .aba import tree_program
from .ldlt import ldl_program

__all__ = ["build_programs", "planned_equations", "TREE_OPERATION_COST", "COMPARE_LIMIT"]


def _flat(matrix) -> list:
    return [matrix[i, j] for i in range(matrix.rows) for j in range(matrix.cols)]


# One operation of the recursion weighed against one of the dense program and its solve:
# the recursion's long dependency chains and many live temporaries make each operation
# cost more (spatial_chain(4): 0.37 times the dense operations, 0.49 times the time).
TREE_OPERATION_COST = 1.25

# Up to this many speeds a tree's symbolic M is cheap to form, and its CSE can find a
# shorter eval program than the composite-rigid-body algorithm's (codegen.algorithms.crba;
# the HyQ's four legs: 1,756 operations against 2,138): the shorter is kept, and the
# recursion is weighed against the formulation's M. Above it M is not formed.
COMPARE_LIMIT = 20


def planned_equations(eom: EquationsOfMotion, recursive: bool | None) -> EquationsOfMotion:
    """The equations the plan works on: without their tree when recursive is False (the
    user's choice: no program over the tree), else as they are. The emitter reads the same
    value, so that the model's description says why it has no recursion."""
    if recursive is False and eom.tree is not None:
        return dataclasses.replace(eom, tree=None, tree_note="recursive=False")
    return eom


def build_programs(eom: EquationsOfMotion, unrolled_limit: int, jacobian: bool | None,
                   parameter_jacobian: bool, recursive: bool | None = None) -> dict:
    """The programs of a model's generated functions (the options as in
    codegen.pipeline.options.Options). The choice of the recursion is taken here, once: the
    equations carry the bodies' tree wherever they form one, and recursive (Options.recursive)
    says what to do with it: False, nothing (dense programs only); True, the recursion and
    the tree's algorithms wherever they apply; None, the same, but for rigid bodies the
    recursion only where it is the less work (below).

    - "eval": q' (qd), the mass matrix (M: packed lower triangle if symmetric,
      else full row-major; over a tree of bodies without run-time constraints, by the
      composite-rigid-body algorithm, codegen.algorithms.crba) and F, and with run-time constraints also their
      matrix A (row-major), B' (Bd) and Baumgarte's term S of A u' = B' + S:
      everything the right-hand side needs, in one CSE;
    - "mass" (bodies forming a tree, no run-time constraints): M alone by the
      composite-rigid-body algorithm, for mass_matrix, where it has fewer operations than
      "eval" (else the runtime takes M from "eval"). Where the right-hand side is the
      recursion ("tree") and no Jacobian factors eval's M, "eval" is q' and F alone and
      its M is the "mass" function's (eval calls it), so that M's entries,
      n² of them and most of a large model's compiling, are compiled once. Above
      crba.MASS_LOOP_ENTRIES entries of M, "mass" is a loop over M's columns
      (crba.mass_columns_program: O(n) statements) and "eval", q' and F alone,
      always calls it;
    - "position" (holonomic constraints): f(q, t) and its Jacobian fq;
    - "velocity" (any run-time constraints): A and B of A u = B;
    - "tree" (bodies forming a tree, no run-time constraints): q' and u' by
      the articulated-body recursion (codegen.algorithms.aba); for rigid bodies under
      recursive=None only when its program, its operations weighted by
      TREE_OPERATION_COST, has fewer operations than the formulation's eval program
      and the dense solve together (above COMPARE_LIMIT speeds, where the
      formulation's M is not formed, always); otherwise
    - "solve" (a symmetric M without run-time constraints, up to unrolled_limit
      multiply-adds): M u' = F unrolled over M's structural nonzeros (codegen.algorithms.ldlt);
    - "jacobian" (no run-time constraints; jacobian=True, or None while it stays
      within jacobian.auto_limit, its size against the programs above): the parts of
      the analytic Jacobian (codegen.algorithms.jacobian);
    - "inverse_dynamics" (bodies forming a tree, no run-time constraints): tau = M u' - F
      for a given u' by the Newton–Euler passes (codegen.algorithms.rnea); without it the runtime
      forms M u' - F from "eval";
    - "parameter_jacobian" (no run-time constraints, some constants;
      parameter_jacobian=True): the same parts over the constants;
    - "columns" (with either Jacobian, over a tree of bodies where it costs less than the
      dense solve): their solve M Z = R column by column through the recursion (see
      codegen.algorithms.jacobian_columns.column_solve_program);
    - "outputs", "events", "impacts" (codegen.equations.signals): the outputs' entries (y), the
      event functions (g) and the impacts' contact rows (J, vn, e), a CSE each, with
      the model's intermediates they use.
    """
    eom = planned_equations(eom, recursive)
    nu = eom.nu
    c = eom.constraints
    programs = {}
    composite = composite_programs(eom)   # a tree's M by its program: eom.M is not read
    # a large tree's M by the mass function's loop over columns alone (codegen.algorithms.crba)
    looped = composite is not None and composite["eval"] is None
    dense = None                          # the eval program of the formulation's M and F
    if composite is None or nu <= COMPARE_LIMIT:
        if eom.symmetric:
            mass = [eom.M[i, j] for i in range(nu) for j in range(i + 1)]
        else:
            mass = _flat(eom.M)
        groups = [("qd", list(eom.qdot)), ("M", mass), ("F", list(eom.F))]
        if c is not None:
            groups += [("A", _flat(c.A)), ("Bd", list(c.Bdot)), ("S", list(c.S))]
            if c.nh:
                programs["position"] = make_program(eom, [("f", list(c.f)), ("fq", _flat(c.fq))])
            programs["velocity"] = make_program(eom, [("A", _flat(c.A)), ("B", list(c.B))])
        dense = make_program(eom, groups)
    else:
        mass = None if looped else dict(composite["eval"].outputs)["M"]
    if looped:
        programs["eval"], programs["mass"] = composite["forces"], composite["mass"]
    else:
        programs["eval"] = composite["eval"] if dense is None or (
            composite is not None and composite["eval"].operation_count
            < dense.operation_count) else dense
        if composite is not None and \
                composite["mass"].operation_count < programs["eval"].operation_count:
            programs["mass"] = composite["mass"]
    tree = solve = None
    if eom.tree is not None and c is None:
        tree = tree_program(eom)
        if tree is not None:      # complete before its size is compared
            check_defined(tree, "tree")
    if eom.symmetric and c is None and mass is not None and (
            tree is None or (recursive is None and eom.tree.rigid and dense)):
        # the structural zeros of the formulation's M where it is formed (exact, so
        # the eval program's M, whichever it is, has them too)
        solve = ldl_program(mass, nu, unrolled_limit)
        # against the formulation's eval, as TREE_OPERATION_COST was measured
        if tree is not None and solve is not None and TREE_OPERATION_COST * tree.operation_count \
                >= dense.operation_count + solve.operation_count:
            tree = None          # rigid bodies: the recursion only where it is the less work
    if tree is not None:
        tree.lanes = lane_program(eom, tree)
        programs["tree"] = tree
    elif solve is not None:
        programs["solve"] = solve
    if composite is not None and not looped:
        # the composite programs with mirrored limbs side by side (codegen.algorithms.lanes):
        # M's, and M and F's where the right-hand side solves with them (not beside the
        # recursion: Talos's 9,677 operations matched and emitted twice for no call's gain)
        for kind in ("mass",) if tree is not None else ("eval", "mass"):
            if kind in programs and programs[kind] is composite[kind]:
                programs[kind].lanes = lane_program(eom, programs[kind])
    inverse = inverse_program(eom)
    if inverse is not None:
        inverse.lanes = lane_program(eom, inverse)
        programs["inverse_dynamics"] = inverse
    # by default, not even tried where the value program alone is ten times the limit, or
    # M is looped (its straight-line eval, not formed, would be past it): forming the
    # derivative program's values would cost more than the model, only to be refused
    limit = jac.auto_limit(programs)
    auto_skip = jacobian is None and (
        looped or programs["eval"].operation_count > 10 * limit)
    if jacobian is not False and c is None and not auto_skip:
        # the right-hand side the Jacobian would call first for u' (cg_jacobian), unless
        # its program solves u' itself for less
        rhs = [programs["tree"]] if "tree" in programs else \
            [programs["eval"], programs["solve"]] if "solve" in programs else None
        program = jac.jacobian_program(eom, None if jacobian else limit,
                                       sum(p.operation_count for p in rhs) if rhs else None)
        if program is not None:
            programs["jacobian"] = program
    if parameter_jacobian and c is None and eom.constants:
        programs["parameter_jacobian"] = jac.parameter_jacobian_program(eom)
    if "jacobian" in programs or "parameter_jacobian" in programs:
        # their solve, where it pays: over R's columns, each within its structure
        # over M's factor the Jacobian's program leaves, unless the parameter
        # sensitivities (whose runtime has no factor) share the columns function
        given = programs["jacobian"].factor_layout if "jacobian" in programs \
            and not parameter_jacobian else None
        columns = column_solve_program(eom, state_supports(
            programs["jacobian"], eom.nu, eom.nq + eom.nu) if "jacobian" in programs else None,
            given)
        if columns is not None:
            programs["columns"] = columns
    entries = [e for o in eom.outputs for e in o.exprs]
    if entries:
        programs["outputs"] = make_program(eom, [("y", entries)])
    if eom.events:
        programs["events"] = make_program(eom, [("g", [e.expr for e in eom.events])])
    if eom.impacts:
        programs["impacts"] = make_program(eom, [
            ("J", [e for i in eom.impacts for row in i.J for e in row]),
            ("vn", [e for i in eom.impacts for e in i.vn]),
            ("e", [e for i in eom.impacts for e in i.e])])
    if "mass" in programs and "tree" in programs and "jacobian" not in programs \
            and programs["eval"] is composite["eval"]:
        programs["eval"] = composite["forces"]       # M: eval calls mass (see above)
    for kind, program in programs.items():
        if kind != "tree":
            check_defined(program, kind)
    return programs
