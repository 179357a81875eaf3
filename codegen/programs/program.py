"""Equations -> straight-line program: named inputs, one CSE, ordered outputs.

The program is what every emitter prints. Its expressions are SymPy
expressions over C-ready names:

- inputs: each state, constant and specified gets a local with a valid,
  unique C identifier (its own name where possible), read from x, p, r;
- temporaries: one ``sympy.cse`` over all outputs together (q', the mass
  matrix, the forcing), so work shared between them is done once;
- outputs: named C arrays; the right-hand side's program holds q' (NQ),
  the mass matrix (packed lower triangle, row by row, if symmetric; else
  full row-major), the forcing (NU) and, for run-time constraints, A and
  the right side of A u' = B' (see codegen.algorithms.plan.build_programs).

``sympy.cse(order='none')`` is used: the canonical ordering costs far more
on large inputs and the result is the same set of temporaries. The same
equations always give the same program (nothing here depends on hashing).

This is the bottom of the code generator: the algorithms (codegen.algorithms: ldlt,
aba, jacobian, ...) build on Program, and codegen.algorithms.plan chooses which
programs a model gets.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sympy as sm

from ..symbolic.counting import operation_count
from .cse import cse

if TYPE_CHECKING:          # only read here: the equations are built above this layer
    from ..equations.equations_of_motion import EquationsOfMotion

__all__ = ["Program", "Input", "make_program", "live_temporaries", "dependents", "check_defined",
           "dependency_order"]


@dataclass
class Input:
    name: str        # C local
    array: str       # 'x', 'p' or 'r'
    index: int
    label: str       # the model's name for it, for the comment


@dataclass
class Program:
    """One straight-line function: inputs, CSE temporaries, named output arrays."""
    inputs: list          # Input, in array order (only those the outputs use)
    names: dict           # every input object (symbol, function of time, derivative) -> C name
    temporaries: list     # (Symbol, expr)
    outputs: list         # (C array name, [expr]) in order
    # a function over columns (codegen.algorithms.jacobian_columns): (output name, B's columns) of each body
    # of its own after the first, which takes only those columns
    column_groups: list = field(default_factory=list)
    # a Jacobian's program that leaves M's factor in its output L (codegen.algorithms.jacobian):
    # (the speed of each of the factor's rows, the nonzero positions (i, j) of its L),
    # for the columns function that reads it (codegen.algorithms.jacobian_columns)
    factor_layout: tuple | None = None
    # the temporaries that are pairs of doubles (cg_v2: codegen.algorithms.lanes)
    vectors: frozenset = frozenset()
    # the same outputs by pairs of limbs side by side (codegen.algorithms.lanes), compiled
    # where the compiler has GCC's vector extension
    lanes: "Program | None" = None

    @property
    def operation_count(self) -> int:
        """Arithmetic operations and function calls of the program (after CSE)."""
        return operation_count([e for _, e in self.temporaries]
                               + [e for _, exprs in self.outputs for e in exprs])


def live_temporaries(temporaries: list, outputs: list) -> list:
    """The temporaries the outputs need, directly or through other temporaries
    (an unused one would be a C compiler warning and wasted work)."""
    needed = set()
    for _, exprs in outputs:
        for e in exprs:
            needed |= sm.sympify(e).free_symbols
    kept = []
    for sym, expr in reversed(temporaries):
        if sym in needed:
            kept.append((sym, expr))
            needed |= expr.free_symbols
    return kept[::-1]


def dependents(temporaries: list, seeds: set) -> set:
    """The temporaries' symbols that read any of seeds, directly or through the
    temporaries before them (a loop's body: what reads the column's input)."""
    depends = set(seeds)
    for sym, expr in temporaries:
        if expr.free_symbols & depends:
            depends.add(sym)
    return depends - set(seeds)


def check_defined(program: Program, what: str) -> None:
    """Every symbol, function of time and derivative the program uses is one of its
    inputs or a temporary defined before its use; else a ValueError that names it and
    the function (an internal error: the C would name an undeclared variable)."""
    read = {i.name for i in program.inputs} | {"t"}
    defined = {o for o, n in program.names.items() if n in read}
    kinds = (sm.Symbol, sm.Derivative, sm.core.function.AppliedUndef)

    def check(expr, where):
        # a defined s'' (an input) holds s(t) among its arguments: not a use of s(t)
        missing, stack = set(), [sm.sympify(expr)]
        while stack:
            node = stack.pop()
            if node in defined:
                continue
            if isinstance(node, kinds):
                missing.add(node)
            else:
                stack.extend(node.args)
        if missing:
            raise ValueError(f"internal error: the {what} program uses {sorted(map(str, missing))}"
                             f" in {where}, which it does not define (please report it)")
    for sym, expr in program.temporaries:
        check(expr, f"the definition of {sym}")
        defined.add(sym)
    for array, exprs in program.outputs:
        for i, e in enumerate(exprs):
            check(e, f"{array}[{i}]")


def _c_names(labels: list, arrays: list) -> list:
    """A unique C identifier for each input: its array's letter, an underscore and
    the label made an identifier (x_theta, p_m, r_F). The prefix keeps the user's
    names apart from every name the generator uses (arrays, cg_*, temporaries)."""
    out, used = [], set()
    for label, array in zip(labels, arrays):
        base = f"{array}_" + re.sub(r"\W", "_", label)
        name, k = base, 2
        while name in used:
            name, k = f"{base}_{k}", k + 1
        used.add(name)
        out.append(name)
    return out


def _temp_prefix(names) -> str:
    prefix = "z"
    while any(re.fullmatch(re.escape(prefix) + r"\d+", n) for n in names):
        prefix += "z"
    return prefix


def _inputs(eom: EquationsOfMotion):
    """(originals, C names, arrays, indices, labels) of every state, constant, specified."""
    labels = eom.state_names + eom.constant_names + eom.specified_names
    arrays = (["x"] * len(eom.state_names) + ["p"] * len(eom.constant_names)
              + ["r"] * len(eom.specified_names))
    cnames = _c_names(labels, arrays)
    index = (list(range(len(eom.state_names))) + list(range(len(eom.constant_names)))
             + list(range(len(eom.specified_names))))
    originals = list(eom.q) + list(eom.u) + list(eom.constants) + list(eom.specifieds)
    return originals, cnames, arrays, index, labels


def _needed(intermediates: list, exprs: list) -> list:
    """The intermediates exprs use, directly or through other intermediates, in order."""
    by_symbol = {item.symbol: item for item in intermediates}
    needed = set()
    stack = [s for e in exprs for s in e.free_symbols if s in by_symbol]
    while stack:
        s = stack.pop()
        if s not in needed:
            needed.add(s)
            stack.extend(x for x in by_symbol[s].expr.free_symbols if x in by_symbol)
    return [item for item in intermediates if item.symbol in needed]


def dependency_order(defs: list) -> list:
    """defs [(symbol, expr)] reordered so that each comes after the symbols it
    uses (a stable depth-first order: CSE temporaries and intermediates interleave)."""
    index = {s: i for i, (s, _) in enumerate(defs)}
    deps = [sorted(index[s] for s in e.free_symbols if s in index) for _, e in defs]
    state, out = [0] * len(defs), []          # 0 new, 1 on the stack, 2 placed
    for root in range(len(defs)):
        if state[root]:
            continue
        state[root] = 1
        stack = [(root, iter(deps[root]))]
        while stack:
            i, pending = stack[-1]
            for j in pending:
                if state[j] == 0:
                    state[j] = 1
                    stack.append((j, iter(deps[j])))
                    break
                if state[j] == 1:
                    raise ValueError(f"{defs[j][0]} is defined through itself")
            else:
                stack.pop()
                state[i] = 2
                out.append(defs[i])
    return out


def _key(expr, memo: dict):
    """expr with each sum and product as the multiset of its terms, nested ones flattened:
    the solvers build theirs unevaluated (codegen.algorithms.ldlt's products, whose numbers SymPy
    would distribute), in their own order and nesting, and a definition read through by
    xreplace rebuilds another in SymPy's."""
    if expr.is_Atom:
        return expr
    key = memo.get(expr)
    if key is None:
        if expr.is_Add or expr.is_Mul:
            terms, stack = Counter(), list(expr.args)
            while stack:
                a = stack.pop()
                if a.func is expr.func:
                    stack.extend(a.args)
                else:
                    terms[_key(a, memo)] += 1
            key = expr.func, frozenset(terms.items())
        else:
            key = expr.func, tuple(_key(a, memo) for a in expr.args)
        memo[expr] = key
    return key


def _propagate_copies(temps: list, outputs: list):
    """temps without the definitions that are another symbol or a number (an
    intermediate the CSE reduced to one of its temporaries): their uses read
    the original instead, so the C has no copies."""
    rename, kept = {}, []
    for sym, expr in temps:
        if rename and not expr.free_symbols.isdisjoint(rename):
            expr = expr.xreplace(rename)
        if expr.is_Symbol or expr.is_number:
            rename[sym] = expr
        else:
            kept.append((sym, expr))
    if not rename:
        return temps, outputs
    return kept, [e.xreplace(rename) if not sm.sympify(e).free_symbols.isdisjoint(rename) else e
                  for e in outputs]


def make_program(eom: EquationsOfMotion, groups, extra_inputs=(), extra_intermediates=()) -> Program:
    """One CSE over all the groups [(array, exprs)] of one generated function.

    The expressions keep the equations' own symbols; ``names`` says how each
    prints in C (renaming by substitution would rebuild every expression).
    The intermediates the outputs need are computed first, as temporaries
    named ``cg_<name>``, in the same CSE. extra_inputs: (symbol, array, index,
    C name) read from further arrays; extra_intermediates: more definitions.
    """
    originals, cnames, arrays, index, labels = _inputs(eom)
    for sym, array, i, cname in extra_inputs:
        originals, cnames = originals + [sym], cnames + [cname]
        arrays, index, labels = arrays + [array], index + [i], labels + [f"{array}[{i}]"]
    names = dict(zip(originals, cnames))
    names[eom.t] = "t"
    outputs = [sm.sympify(e) for _, exprs in groups for e in exprs]
    items = _needed(list(eom.intermediates) + list(extra_intermediates), outputs)
    # no assignment for a zero dependent speed, a pivot that is one, or a definition
    # equal to an earlier one once those are read through (two rows of M's factor alike
    # over a floating base, codegen.algorithms.rnea_derivatives): the CSE below sees only
    # expressions, and what is formed from both would differ by name alone
    trivial, kept, seen, memo = {}, [], {}, {}
    for item in items:
        expr = item.expr.xreplace(trivial) if trivial else item.expr
        if expr.is_number or expr.is_Symbol:
            trivial[item.symbol] = expr
            continue
        key = _key(expr, memo)
        if key in seen:
            trivial[item.symbol] = seen[key]
        else:
            seen[key] = item.symbol
            kept.append(type(item)(item.symbol, expr, item.name))
    items = kept
    if trivial:
        outputs = [e.xreplace(trivial) for e in outputs]
    for item in items:
        names[item.symbol] = f"cg_{item.name}"
    exprs = [item.expr for item in items] + outputs
    free = set()
    for e in exprs:
        free |= e.free_symbols
    temp_symbols = sm.numbered_symbols(_temp_prefix(cnames), real=True, exclude=free)
    temps, reduced = cse(exprs, temp_symbols)
    if items:
        temps = dependency_order(list(temps) + [(item.symbol, e) for item, e in
                                                 zip(items, reduced[:len(items)])])
        reduced = reduced[len(items):]
    temps, reduced = _propagate_copies(temps, reduced)
    # a definition can go unread once its reader was found equal to an earlier one (the
    # dedupe above): the HyQ's derivative program had 72 such, each a C compiler warning
    temps = live_temporaries(temps, [("outputs", reduced)])
    present = set()
    for e in reduced + [e for _, e in temps]:
        present |= e.free_symbols | e.atoms(sm.Derivative) | e.atoms(sm.core.function.AppliedUndef)
    inputs = [Input(n, a, i, l) for o, n, a, i, l in zip(originals, cnames, arrays, index, labels)
              if o in present]
    out, k = [], 0
    for array, exprs in groups:
        out.append((array, reduced[k:k + len(exprs)]))
        k += len(exprs)
    return Program(inputs=inputs, names=names, temporaries=temps, outputs=out)
