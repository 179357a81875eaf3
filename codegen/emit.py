"""Programs -> C sources: plain data rendered by the Jinja2 templates in templates/.

The emitter knows nothing of frames or bodies: it turns each
:class:`~codegen.program.Program` into a function's data (parameters, input
reads, statements as C expression strings, sin/cos pairs) and lets
``model.c.j2`` / ``model.h.j2`` write the C, with StrictUndefined (a name
the template uses and the data lacks is an error, never an empty string).
Integer powers become multiplications (``x*x``, ``cg_sq(expr)``,
``cg_powi`` for larger exponents), never ``pow``.

A model's C holds only its own functions and its descriptor (cg_model.h);
the solve, the constraint elimination and the integrators are the runtime's
(templates/runtime), compiled once.
"""
from __future__ import annotations

import heapq
import keyword
import re
from dataclasses import dataclass
from functools import lru_cache

import sympy as sm
from sympy.printing.c import C99CodePrinter

from . import __version__
from .abi import (CALLBACKS, CONSTANTS, DESCRIPTOR, FLAGS, FUNCTIONS, METHOD_INFO, PROPERTIES,
                  RUNTIME, RUNTIME_DIR, STATUS_CODE, TEMPLATE_DIR)
from .eom import EquationsOfMotion
from .program import Program, dependents, operation_count
from .progress import checkpoint
from .signals import entry_names

__all__ = ["Sources", "emit", "render", "TEMPLATE_DIR", "RUNTIME_DIR", "RUNTIME_C",
           "runtime_sources", "cython_contract"]


def runtime_sources() -> dict:
    """The runtime's files (name -> text), for a standalone export or an FMU."""
    return {p.name: p.read_text() for p in sorted(RUNTIME_DIR.iterdir())
            if p.suffix in (".c", ".h")}


#: the runtime's translation units (cg_fused.c is included by a fused model instead)
RUNTIME_C = tuple(sorted(p.name for p in RUNTIME_DIR.glob("cg_*.c") if p.name != "cg_fused.c"))


def _comment(text) -> str:
    """text safe inside a C comment."""
    return str(text).replace("*/", "* /").replace("/*", "/ *")


@lru_cache(maxsize=None)
def environment(*extra_dirs):
    """The Jinja2 environment of templates/ (and extra_dirs, searched first):
    StrictUndefined, and the filter ``comment`` (text safe inside /* */)."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined
    env = Environment(loader=FileSystemLoader([str(d) for d in extra_dirs] + [str(TEMPLATE_DIR)]),
                      undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False)
    env.filters["comment"] = _comment
    return env


def render(template: str, **data) -> str:
    """A template of templates/ rendered with data (a missing name is an error)."""
    return environment().get_template(template).render(**data)


def cython_contract() -> str:
    """codegen/_contract.pxi, the Cython declarations of cg_model.h (its constants, enums,
    function types, runtime table and descriptor), rendered from codegen.abi's reading
    of the header; the extension is built from the committed file, which a test keeps
    equal to this rendering."""
    def cython(parameters):       # C's struct tags dropped, Python's keywords escaped
        return ", ".join(f"{p.type.replace('struct ', '')}{'' if p.type.endswith('*') else ' '}"
                         f"{p.name}{'_' if keyword.iskeyword(p.name) else ''}"
                         for p in parameters)
    return render("contract.pxi.j2",
                  constants=[(n, "double" if isinstance(v, float) else "long")
                             for n, v in CONSTANTS.items()],
                  enums=[*STATUS_CODE, "CG_N_STATUS", *FLAGS, *PROPERTIES,
                         *(m.symbol for m in METHOD_INFO.values()), "CG_N_METHODS"],
                  functions=[dict(kind=f.kind, parameters=cython(f.parameters))
                             for f in FUNCTIONS.values()],
                  callbacks=[dict(kind=f.kind, parameters=cython(f.parameters))
                             for f in CALLBACKS.values()],
                  runtime=[dict(type=e.type, name=e.name, parameters=cython(e.parameters))
                           for e in RUNTIME.values()],
                  descriptor=[dict(type=d.type.replace("struct ", ""), name=d.name)
                              for d in DESCRIPTOR])


class _Printer(C99CodePrinter):
    """C99 with the program's C names for its inputs and integer powers as products."""

    _MAX_UNROLL = 4

    def __init__(self, names, scratch=None):
        # order="none": the canonical term order costs a third of the printing;
        # no math macros: M_PI and the like are POSIX, not C99 (the standalone C is strict)
        super().__init__({"full_prec": False, "order": "none", "math_macros": {}})
        self._names = names
        self.trig = {}        # argument -> k: sin, cos of it are cg_s<k>, cg_c<k>
        self.scratch = scratch or {}   # (k, "s" or "c") -> its slot w[i] (a parted function)

    def trig_value(self, k, kind):
        """The C name of the sine ("s") or cosine ("c") of the k-th argument."""
        return self.scratch.get((k, kind), f"cg_{kind}{k}")

    def expression(self, expr) -> str:
        """expr in C: the printer's own dispatch, without doprint's per-call set-up
        (assignments, unsupported-function bookkeeping), a third of the cost."""
        return self._print(expr)

    def _print_sin(self, expr):
        return self._trig_name(expr, "s") or super()._print_Function(expr)

    def _print_cos(self, expr):
        return self._trig_name(expr, "c") or super()._print_Function(expr)

    def _trig_name(self, expr, kind):
        k = self.trig.get(expr.args[0])
        return None if k is None else self.trig_value(k, kind)

    def _print_Symbol(self, expr):
        name = self._names.get(expr)
        return name if name is not None else super()._print_Symbol(expr)

    _print_Dummy = _print_Symbol

    def _print_NumberSymbol(self, expr):
        return repr(float(expr))             # pi, E: the double nearest, inline

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
            if n == 1 and not b.is_Symbol:     # 1/x of a compound x (M's guarded pivot: 1/fmax(0, d))
                return f"1.0/{self.parenthesize(b, 1000)}"
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


#: a function with more statements than PART_LIMIT is emitted in parts of
#: PART_STATEMENTS (function.j2): the compiler's register allocation grows faster
#: than linearly with a function's size (a 9,000-statement Jacobian: 84 s at -O2
#: in one function, 9 s in parts of 250). A temporary used only in its own part is a
#: local there (_scratch_layout): Atlas's recursion, half of them, 8.6 % fewer instructions;
#: parts of 600 keep two thirds local, but spill more (1.3 % more instructions)
PART_LIMIT, PART_STATEMENTS = 1500, 250

#: the kinds emitted whole up to this many operations (whatever their statements), in parts
#: at PART_FLAGS beyond; measured with the scratch slots shared (callgrind per call, medians
#: of alternating calls in one process, a loaded machine; whole at -O2 -> parted at -O1):
#: the recursion ("tree", the right-hand side): Atlas (11,209 operations) 23,076 -> 22,772
#: instructions, 3.20 -> 2.88 µs, compile 5.9 -> 3.2 s; Talos (12,390) 25,699 -> 25,165,
#: 3.41 -> 3.18 µs, 7.6 -> 3.3 s; but the 100-link pendulum's (6,977) 2.52 -> 2.68 µs, kept
#: whole (whole, the compile grows faster than the function: -O2 1.5 s at 3,300 statements,
#: 4.7 s at 6,600). Inverse dynamics: Talos (5,533) 12,652 -> 12,689 instructions, 2 to 9 %
#: faster in three runs of four (1.72-1.78 -> 1.61-1.69 µs), the same in the fourth (whole,
#: its 80 KB of code overflow the 64 KB L1i); Atlas (4,241; 58 KB) 0.763 -> 0.769 µs, whole.
#: The Jacobian's analytic derivative program (codegen.rnea_derivatives; fewer statements
#: than PART_LIMIT, longer ones) whole -> parted, the same results bit for bit, quiet,
#: alternating: the 20-link pendulum (4,914) build 3.3 -> 2.2 s, 4.10 -> 4.08 µs a call;
#: iiwa (5,939) 3.5 -> 2.9 s, 2.17 -> 2.00 µs; HyQ (4,050) 4.8 -> 4.2 s, 2.17 -> 2.12 µs;
#: Atlas 12.9 -> 13.0 µs, Talos 24.6 -> 23.1 µs (parted before, in parts of PART_STATEMENTS)
PART_OPERATIONS = {"tree": 9000, "inverse_dynamics": 5000, "jacobian": 4000}

#: the statements of a part of those kinds (PART_OPERATIONS), fewer than PART_STATEMENTS:
#: compiled for size (CG_PART, PART_FLAGS), short parts run faster though their instructions
#: are nearly the same (fewer spills, more values through the scratch array). Per call,
#: alternating in one process (both link orders), parts of 250 -> 90: Talos's inverse
#: dynamics 11,411 -> 11,347 instructions, 0.87-0.98 -> 0.73-0.75 µs (125: 0.76-0.92; 40
#: and 60 the same as 90); the recursion Atlas's 2.22 -> 2.17 µs, Talos's 2.49 -> 2.44
OPERATION_PART_STATEMENTS = 90

#: a model whose large functions' parts have more statements than this spreads them over
#: files of about this many, compiled at the same time (_spread_parts)
TU_STATEMENTS = 2500

#: the flags, after the build's own, of the files of a large model's parts, where gcc's -O2
#: only costs: on the 100-link pendulum, -O1 compiled them in half the CPU time, to the same
#: instructions for M (and 20 % fewer for the recursion, which ran 15 % faster). -Os runs
#: faster still, as the parts' straight-line code is read once a call and its size is what
#: costs (the instruction cache): per call against -O1, alternating in one process, Atlas's
#: RHS 2.64 -> 2.50 µs, Talos's 2.94 -> 2.82 and its inverse dynamics 1.62 -> 1.58, the
#: 200-link pendulum's RHS 4.97 -> 4.79, the 100-link one's Jacobian 161 -> 156 µs. It costs
#: compile time on the largest (the quiet benchmark, docs/performance.md: the 100-link
#: pendulum's compile 2.0 -> 2.7 s, its Jacobian's build 24 -> 32 s; the robots' the same)
PART_FLAGS = ("-Os",)

#: the flags of a large tree's mass matrix, a loop over M's columns (its own file), as measured
#: on the 100-link pendulum: -O1 compiles it in half the CPU time of -O2 to the same instructions
LOOP_FLAGS = ("-O1",)

#: a thin build whose solve (the recursion, the unrolled L D Lᵀ) has more statements
#: than this gets it in a file of its own, compiled on the second core
SPLIT_STATEMENTS = 400


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


def _ordered(program: Program, parted: bool) -> list:
    """A function's statements in the order emitted, as (temporary symbol or None, expression,
    output array, index): the temporaries, then the outputs; in a parted function each output
    right after the last temporary it reads (constants first), so that the temporaries die
    early and the scratch array holds only those still to be read (_scratch_layout): the
    100-link pendulum's Jacobian reads nearly every temporary in its outputs, at the end."""
    statements = [(sym, e, "", 0) for sym, e in program.temporaries]
    outputs = [(None, e, array, i) for array, exprs in program.outputs for i, e in enumerate(exprs)]
    if not parted:
        return statements + outputs
    position = {sym: k for k, (sym, _) in enumerate(program.temporaries)}
    after = {}                          # temporary's position (-1: none) -> outputs after it
    for st in outputs:
        after.setdefault(max((position[a] for a in st[1].free_symbols if a in position),
                             default=-1), []).append(st)
    return after.get(-1, []) + [x for k, st in enumerate(statements)
                                for x in [st] + after.get(k, [])]


def _trig_plan(statements: list, loop_args=frozenset()) -> tuple:
    """(plan, last): the sin/cos pairs to compute before each statement (_ordered's,
    numbered in that order): {statement: [[arg] or [arg, arg]]};
    and the last statement reading each value: {(arg, "s" or "c"): statement}.

    Each argument gets one evaluation, placed before its first use. Two
    arguments share one cg_sincos2 (two SSE2 lanes): the one needed now and
    the next one in order of first use whose inputs are already defined.
    The arguments in loop_args (an even number of them at most, in order of first use)
    are paired first, all before statement 0 (_trig_loop's)."""
    index_of = {st[0]: i for i, st in enumerate(statements) if st[0] is not None}
    first, ready, last = {}, {}, {}
    for i, (_, e, _, _) in enumerate(statements):
        for node in sm.preorder_traversal(e):
            if isinstance(node, (sm.sin, sm.cos)):
                arg = node.args[0]
                last[arg, "s" if isinstance(node, sm.sin) else "c"] = i
                if arg not in first:
                    first[arg] = i
                    ready[arg] = max((index_of[s] for s in arg.free_symbols if s in index_of),
                                     default=-1)
    early = [a for a in first if a in loop_args]
    early = early[:len(early) // 2 * 2]
    plan = {0: [early[j:j + 2] for j in range(0, len(early), 2)]} if early else {}
    pending = [a for a in first if a not in early]      # in order of first use
    for arg, i in first.items():
        if arg not in pending:
            continue                        # computed early, as another's partner
        pending.remove(arg)
        partner = next((b for b in pending if ready[b] < i), None)
        if partner is not None:
            pending.remove(partner)
        plan.setdefault(i, []).append([arg] if partner is None else [arg, partner])
    return plan, last


def _trig_numbers(plan: dict) -> dict:
    """{arg: k}: the sin/cos arguments numbered in the order they are computed (the
    C names cg_s<k>, cg_c<k>)."""
    return {arg: k for k, arg in enumerate(arg for i in sorted(plan) for group in plan[i]
                                           for arg in group)}


def _scratch_layout(statements: list, plan: dict, last_trig: dict, part: int = None,
                    loop_values: int = 0) -> tuple:
    """(local, slots, size) of a parted function (_ordered's statements in parts of
    part, by default PART_STATEMENTS): local, the temporaries read only in the part that defines them (local
    constants there, in registers, where the others go through the scratch array: a
    store each, and a load at each use the compiler cannot forward); slots, each value
    read in a later part -> its index in the scratch array w: temporaries by symbol,
    sin/cos values by (k, "s" or "c") (_trig_numbers; the others are the part's locals);
    size, w's length.

    The slots are reused by a linear scan over the values' live ranges (the defining
    statement to the last that reads the value, sin/cos arguments read where they are
    computed): a value's slot is freed after the statement of its last use, and a new
    value takes the lowest free slot. The 100-link pendulum's Jacobian (jacobian=True,
    22,042 temporaries): w holds 10,901 doubles instead of 22,242 (one per temporary and
    sin/cos value), 771k instructions per call instead of 794k (callgrind), and about
    225 µs instead of 300 µs per call (a loaded machine; computeABADerivatives 520 µs).
    The first loop_values sin/cos arguments (_trig_loop's) get slots wherever they are read."""
    part = part or PART_STATEMENTS
    index_of = {st[0]: k for k, st in enumerate(statements) if st[0] is not None}
    last = {}
    for k, (_, e, _, _) in enumerate(statements):
        used = set(e.free_symbols)
        for group in plan.get(k, []):
            for arg in group:
                used |= arg.free_symbols
        last.update((s, k) for s in used if s in index_of)
    numbers = _trig_numbers(plan)
    values = {}                         # statement -> [(value, its last use)] defined there
    for i, group in sorted(plan.items()):
        values[i] = [((numbers[arg], kind), last_trig.get((arg, kind), i))
                     for g in group for arg in g for kind in "sc"]
    for sym, k in index_of.items():
        values.setdefault(k, []).append((sym, last.get(sym, k)))
    local = set()
    slots, free, live, size = {}, [], [], 0      # live: a heap of (last use, slot)
    for k in sorted(values):
        while live and live[0][0] < k:
            heapq.heappush(free, heapq.heappop(live)[1])
        for value, end in values[k]:
            if end // part == k // part and not (isinstance(value, tuple)
                                                 and value[0] < loop_values):
                if value in index_of:
                    local.add(value)
                continue
            slots[value] = heapq.heappop(free) if free else size
            size = max(size, slots[value] + 1)
            heapq.heappush(live, (end, slots[value]))
    return local, slots, size


def _function(kind: str, symbol: str, program: Program, comment: str, calls=(),
              overwritten=None) -> dict:
    """One function's data for function.j2: which arrays it leaves unused, its
    input reads, and its statements (sin/cos pairs first), expressions printed;
    calls: (kind, symbol) of generated functions it calls last, on its own arguments,
    for the arrays they write; overwritten: array -> the entries its caller writes
    before any read (R's, by the columns function: _overwritten), whose zeros the
    function leaves unwritten.
    All inputs are read before any output is written, so an array may be both
    (the unrolled solve's F); that solve is never parted, as a part reads the
    inputs again after earlier parts wrote."""
    # constant outputs (a Jacobian's zeros and ones) cost the compiler nothing
    count = len(program.temporaries) + sum(not e.is_number for _, exprs in program.outputs
                                           for e in exprs)
    over = _COLUMN_ARRAYS.get(kind)             # the array looped over, if any
    looped = over is not None and any(i.array == over for i in program.inputs)
    # the mass function out of cg_math.h's copies as a loop over M's columns (a large
    # tree's, rarely on a hot path: cloned, the 200-link pendulum's compile took 2.3 ->
    # 3.8 s), the one form whose M a right-hand side solves with (eval calls it where no
    # recursion is built): those bits stay the same on every processor
    cloned = kind in CLONED and not (kind == "mass" and looped)
    large = program.operation_count > PART_OPERATIONS[kind] if kind in PART_OPERATIONS \
        else count > PART_LIMIT
    parted = large and kind != "ldl" and not looped
    size_of_part = OPERATION_PART_STATEMENTS if kind in PART_OPERATIONS else PART_STATEMENTS
    names = program.names
    local, slots, size = set(), {}, 0
    ordered = _ordered(program, parted)
    read = {i.array for i in program.inputs}
    optional = FUNCTIONS[kind].optional         # arrays passed NULL for none: guarded
    overwritten = overwritten or {}
    fills = [] if looped else [dict(array=a, count=len(exprs), guard=a in optional)
                               for a, exprs in program.outputs
                               if a not in read and _fills(exprs, overwritten.get(a, ()))]
    filled = {a["array"] for a in fills}
    ordered = [st for st in ordered if not (st[0] is None and st[1] == 0 and (
        st[2] in filled or st[3] in overwritten.get(st[2], ())))]
    reads = {i.name: i for i in program.inputs if i.array == "x"}
    angles = frozenset(sym for sym, n in program.names.items() if n in reads) if parted else ()
    plan, last_trig = _trig_plan(ordered, angles)
    trig_pairs = 0                # the pairs of coordinates whose sin/cos loop (_trig_loop)
    while trig_pairs < len(plan.get(0, ())) and len(plan[0][trig_pairs]) == 2 \
            and all(a in angles for a in plan[0][trig_pairs]):
        trig_pairs += 1
    if trig_pairs < TRIG_LOOP_PAIRS:
        trig_pairs = 0
        plan, last_trig = _trig_plan(ordered)
    numbers = _trig_numbers(plan)
    if parted:
        local, slots, size = _scratch_layout(ordered, plan, last_trig, size_of_part,
                                             2 * trig_pairs)
        names = dict(names)
        names.update({sym: f"w[{slots[sym]}]" for sym, _ in program.temporaries
                      if sym not in local})
    printer = _Printer(names, {v: f"w[{i}]" for v, i in slots.items() if isinstance(v, tuple)})
    written = {array for array, exprs in program.outputs if len(exprs)}
    written.update(a for k, _ in calls for a in FUNCTIONS[k].outputs)
    unused = [a for a in FUNCTIONS[kind].outputs if a not in written]

    def sincos(k):
        groups = []
        for g, group in enumerate(plan.get(k, [])):
            if k == 0 and g < trig_pairs:
                for arg in group:
                    printer.trig[arg] = numbers[arg]
                continue
            ks = []
            for arg in group:
                ks.append(numbers[arg])
                printer.trig[arg] = ks[-1]
            values = [(j, kind) for j in ks for kind in "sc"]
            groups.append(dict(args=[printer.expression(a) for a in group],
                               targets=[f"&{printer.trig_value(*v)}" for v in values],
                               declare=[printer.trig_value(*v) for v in values
                                        if v not in printer.scratch]))
        return groups
    statements = []
    for k, (sym, expr, array, i) in enumerate(ordered):
        if k % 1000 == 0:
            checkpoint()
        if sym is None:
            statements.append(dict(sincos=sincos(k), temporary=False, array=array, index=i,
                                   lhs=f"{array}[{i}]", rhs=printer.expression(expr),
                                   **({"guard": array} if array in optional else {})))
        else:
            statements.append(dict(sincos=sincos(k), temporary=True, array="", index=0,
                                   lhs=("" if parted and sym not in local else "const double ")
                                   + printer.expression(sym),
                                   rhs=printer.expression(expr)))
    # M's factor as the columns function reads it from the Jacobian's L: through
    # cg_value (cg_math.h), else GCC's SLP vectorizer takes the entries as one group of
    # loads and finds the columns' lanes not worth vectorizing
    inputs = [dict(cname=i.name, array=i.array, index=i.index, label=i.label,
                   **({"read": f"cg_value(L[{i.index}])"} if i.array == "L" else {}))
              for i in program.inputs]
    parts = []
    if parted:
        for k, i in enumerate(range(0, len(statements), size_of_part)):
            windows, chunk = _windows(statements[i:i + size_of_part])
            parts.append(dict(index=k, statements=chunk, file=None, fills=fills if k == 0 else (),
                              windows=windows, inputs=_inputs_used(inputs, chunk),
                              trig_loop=None))
        if trig_pairs:
            parts[0]["trig_loop"] = _trig_loop(plan[0][:trig_pairs], numbers, slots,
                                               program.names, reads)
    signature = FUNCTIONS[kind]
    column = None
    if looped:
        statements, inputs, column = _column_loop(program, statements, inputs, over)
    return dict(kind=kind, symbol=symbol, comment=comment, unused=unused, inputs=inputs,
                clones=cloned, fills=() if parted else fills,
                # the Jacobian's parts: cg_jacobian passes its arrays disjoint
                restrict=signature.restricted_signature if cloned else "",
                calls=[dict(symbol=s, arguments=FUNCTIONS[k].arguments) for k, s in calls],
                signature=signature.signature, arguments=signature.arguments,
                reads=signature.reads, column=column,
                temporaries=bool(program.temporaries), statements=statements, external=False,
                parts=parts, scratch=max(size, 1))


def _fills(exprs: list, overwritten) -> bool:
    """Whether an output array is filled with zeros first (cg_zero) rather than its zeros
    stored one by one: at ZERO_FILL zeros, and, where its caller overwrites some entries
    (their zeros then written by neither), at a quarter of its entries: the fill writes
    every entry, about four a cycle (32-byte stores), a store one."""
    zeros = sum(e == 0 for k, e in enumerate(exprs) if k not in overwritten)
    return zeros >= ZERO_FILL and (not overwritten or 4 * zeros >= len(exprs))


def _overwritten(columns: Program, nx: int) -> frozenset:
    """The entries of R (row-major, nx columns) that the columns function, when state
    says B is R, writes before any read (_column_loop): in a group's columns, the rows off
    its support (which it does not read) where its solution is not zero by structure
    (those zeros it leaves to R); less the support rows of the columns a group's padded
    runs take beside their own (their extra lane's results are discarded, but it should
    not compute on what the caller's buffer held). The jacobian function need not write
    R's zeros there: Talos's R is no longer filled (23 KB a call), 325 of its zeros are
    stored one by one, 0.3 µs of 12.8 a Jacobian."""
    groups = columns.column_groups[1:]
    if not groups:
        return frozenset()
    outputs = dict(columns.outputs)
    out, read = set(), set()
    for g, (name, cols) in enumerate(groups, 1):
        rows = {i.index for i in columns.inputs if i.array == "B" and i.name.endswith(f"_g{g}")}
        out.update(j * nx + c for c in cols for j, e in enumerate(outputs[name])
                   if j not in rows and e != 0)
        pads, _ = _group_runs(columns, cols)
        read.update(j * nx + first + lane for lane, firsts in pads.items() for first in firsts
                    for j in rows)
    return frozenset(out - read)


def _trig_loop(pairs: list, numbers: dict, slots: dict, names: dict, reads: dict) -> dict:
    """The sin and cos of a parted function's coordinates (pairs of x's symbols), computed
    by one loop at the start of its first part into their slots (function.j2's trig_loop):
    one copy of cg_sincos2's code (about 600 bytes at -Os) instead of one per pair, in code
    that the instruction cache does not hold (Talos's inverse dynamics: 16 pairs, 74 -> 64 KB)."""
    return dict(count=len(pairs), array="x",
                angles=[reads[names[a]].index for pair in pairs for a in pair],
                slots=[slots[numbers[a], kind] for pair in pairs for a in pair for kind in "sc"])


#: a parted function whose coordinates' sin/cos pairs are at least this many computes them
#: in one loop (_trig_loop); fewer stay inline, each before its first use
TRIG_LOOP_PAIRS = 2


#: the input array a function over columns loops over, by kind: the block B of the
#: Jacobian's solve (nu x w, row-major), the unit vectors E of a large tree's mass
#: function (codegen.composite.mass_columns_program; column c writes M's rows i >= c)
_COLUMN_ARRAYS = {"columns": "B", "mass": "E"}


#: the kinds of function compiled twice, the AVX2 copy taken where the processor has it
#: (cg_math.h's CG_CLONES): the Jacobian's, where the straight-line code's decoding is
#: what costs, and a tree's mass matrix (not as the loop over its columns: _function):
#: in C against pin.crba, Atlas 1.69 -> 0.98 us, Talos 1.42 -> 1.08, the iiwa 0.10 ->
#: 0.086, their builds no longer (iiwa 3.6 s, Atlas 19.3). Not the right-hand side and
#: inverse dynamics: their bits stay the same on every processor, a clone doubles a
#: function's compile, and they are several times Pinocchio's already
CLONED = frozenset({"jacobian", "parameter_jacobian", "columns", "mass"})

#: an output with at least this many zeros by structure, none of its entries read by the
#: function, is filled with zeros first (cg_zero, a memset) and only its other entries are
#: stored: a zero a store took an 11-byte instruction each (Solo12's Jacobian: 1,332 of
#: 1,813 entries, 14 KB of code a call; the fill 0.2 µs faster of 3.8)
ZERO_FILL = 16


#: base pointers a part may take into its scratch array (cg_window), each reaching the
#: WINDOW slots around it with a one-byte displacement (x86-64's -128..127 bytes), where
#: a slot's address from w itself takes four beyond w[15]; taken where at least
#: WINDOW_MIN of the part's reads and writes fall. Solo12's Jacobian (47 parts, 13k
#: accesses): 3 windows 3.44 -> 3.27 µs a call, 6 -> 3.22, 10 -> 3.19
WINDOWS, WINDOW, WINDOW_MIN = 8, 32, 8
_SLOT = re.compile(r"\bw\[(\d+)\]")


def _windows(chunk: list) -> tuple:
    """(bases, statements): a part's windows into the scratch array, greedily the WINDOW
    consecutive slots of most accesses first, and its statements with those slots read
    and written through them (cg_w<j>[offset]; a slot through one pointer only)."""
    def texts(st):
        return [st["lhs"], st["rhs"]] + [t for g in st["sincos"] for t in g["args"] + g["targets"]]
    count = {}
    for st in chunk:
        for text in texts(st):
            for k in _SLOT.findall(text):
                count[int(k)] = count.get(int(k), 0) + 1
    bases, left = [], dict(count)
    while left and len(bases) < WINDOWS:
        slots = sorted(left)
        best, lo_best, j, inside = 0, None, 0, 0
        for lo in slots:                       # the window [lo, lo + WINDOW) of most accesses
            while j < len(slots) and slots[j] < lo + WINDOW:
                inside += left[slots[j]]
                j += 1
            if inside > best:
                best, lo_best = inside, lo
            inside -= left[lo]
        if best < WINDOW_MIN:
            break
        bases.append(lo_best + WINDOW // 2)
        for k in [k for k in left if lo_best <= k < lo_best + WINDOW]:
            del left[k]
    if not bases:
        return (), chunk

    def through(m):
        k = int(m.group(1))
        for b, base in enumerate(bases):
            if -WINDOW // 2 <= k - base < WINDOW // 2:
                return f"cg_w{b}[{k - base}]"
        return m.group(0)

    def rewritten(st):
        st = dict(st, lhs=_SLOT.sub(through, st["lhs"]), rhs=_SLOT.sub(through, st["rhs"]))
        st["sincos"] = [dict(g, args=[_SLOT.sub(through, a) for a in g["args"]],
                             targets=[_SLOT.sub(through, t) for t in g["targets"]])
                        for g in st["sincos"]]
        return st
    return bases, [rewritten(st) for st in chunk]


def _executed(program: Program, kind: str) -> int:
    """The operations a call runs: a looped mass function's (_COLUMN_ARRAYS) once part
    and its loop's body once per column (every row's, though rows i < c are skipped)."""
    if kind != "mass" or not any(i.array == "E" for i in program.inputs):
        return program.operation_count
    unit = {i.name for i in program.inputs if i.array == "E"}
    loop = dependents(program.temporaries, {o for o, n in program.names.items() if n in unit})
    once = [e for sym, e in program.temporaries if sym not in loop]
    body = [e for sym, e in program.temporaries if sym in loop] \
        + [e for _, exprs in program.outputs for e in exprs]
    columns = sum(len(exprs) for _, exprs in program.outputs)
    return operation_count(once) + columns * operation_count(body)


def _column_loop(program: Program, statements: list, inputs: list, array: str) -> tuple:
    """(statements, inputs, loop) of a function over the columns of its input array
    (_COLUMN_ARRAYS): B's c < w (entry j of column c at B[j * w + c]) or E's c < nu (the
    unit vectors): the statements before the first that reads it (through its
    temporaries) run once, the rest in function.j2's loop over the columns (loop: its
    statements and the array's reads, as body() takes them)."""
    read = {i["cname"] for i in inputs if i["array"] == array}
    loop = dependents(program.temporaries, {o for o, n in program.names.items() if n in read})
    first = next((k for k, (sym, _) in enumerate(program.temporaries) if sym in loop),
                 len(program.temporaries))
    reads = [i for i in inputs if i["array"] == array]
    body = statements[first:]
    lanes = (COLUMN_LANES if array == "B" else MASS_LANES) \
        if not any(st["sincos"] for st in body) else 1
    steps = sorted({lanes, 1}, reverse=True)
    bound = "w" if array == "B" else str(sum(len(exprs) for _, exprs in program.outputs))
    column = dict(reads=[], unused=[], temporaries=False, bound=bound)
    if not program.column_groups:
        column["blocks"] = [_lanes(reads, body, k, array) for k in steps]
        return statements[:first], [i for i in inputs if i["array"] != array], column
    # bodies of their own (codegen.columns.column_groups), each over its columns' table
    # when state says B is R; the first body over the others then, or over all of B's
    own = {}
    for g, (name, _) in enumerate(program.column_groups[1:], 1):
        seeds = {o for o, n in program.names.items() if n.endswith(f"_g{g}") and n in read}
        own.update({sym: name for sym in dependents(program.temporaries, seeds)})
    owner = [own.get(sym, "B") for sym, _ in program.temporaries[first:]]
    owner += [st["array"] for st in statements[first + len(owner):]]
    # each body over whole runs of step adjacent columns (their loads and stores pair
    # into SSE2 ones, as the plain loop's do: over a table of single columns, the
    # Atlas's bodies ran twice the instructions per operation), then single columns;
    # the first body over all of B's when state is 0
    column["tables"], column["declare"], column["blocks"] = [], [], []     # declare: runs
    rows_b = len(dict(program.outputs)["B"])
    for g, (name, cols) in enumerate(program.column_groups):
        ins = [i for i in reads if i["cname"].endswith(f"_g{g}") == bool(g)]
        # a zero solved off the rows a group reads is R's zero there already
        rows = {i["index"] for i in ins}
        mine = [st for st, o in zip(body, owner) if o == name and not (
            g and not st["temporary"] and st["rhs"] == "0" and st["index"] not in rows)]
        # runs of four, two and one (a floating base's six speeds as four and a pair),
        # a group's runs of three (a leg's) as fours padded with a column of R put back
        # after (_padded_runs): alone, a column's statements do not pair into vector
        # ones and run twice the instructions
        runs = [4, 2, 1] if steps == [4, 1] else steps
        pads, tables = _group_runs(program, cols) if g and steps == [4, 1] \
            else ({}, _column_runs(cols, runs))
        for step, table, lane in [(4, table, k) for k, table in pads.items()] + \
                [(step, table, None) for step, table in zip(runs, tables)]:
            label = f"cg_g{g}_{step}" if lane is None else f"cg_g{g}_pad{lane}"
            if table:
                column["tables"].append(dict(name=label, cols=table))
            # over its table alone, when state is set: a group's runs, and the first
            # body's pairs (over all of B's columns it takes runs of four, then ones)
            tabled = bool(g) or step not in (max(steps), 1)
            if tabled and not table:
                continue
            # function.j2 writes the loop: over the table when state is set, for the
            # first body else over all of B's columns (runs of step after those of top);
            # a padded run keeps its extra lane's column as it was (keep)
            run = dict(tabled=tabled, step=step, top=max(steps), count=len(table),
                       table=label if table else None,
                       **({} if lane is None else {"keep": dict(lane=lane, rows=rows_b)}))
            if not tabled:
                column["declare"].append(run)
            block = _lanes(ins, mine, step, array, lambda j: f"cg_c0 + {j}" if j else "cg_c0")
            column["blocks"].append(dict(block, run=run))
    return statements[:first], [i for i in inputs if i["array"] != array], column


def _group_runs(program: Program, cols: list) -> tuple:
    """A group's columns (ascending) of a column solve's program as _column_loop runs them
    over four lanes: _padded_runs' ({lane: first columns}, tables over 4, 2, 1)."""
    last = max(c for _, group in program.column_groups for c in group)
    return _padded_runs(_column_runs(cols, [4, 2, 1]), last)


def _padded_runs(tables: list, last: int) -> tuple:
    """({lane: first columns}, tables): a group's runs of three adjacent columns (a
    leg's coordinates, or its speeds), from _column_runs' tables over steps 4, 2, 1 as a
    pair and a single column, as runs of four with the column before (lane 0) or, at
    column 0, the one after (lane 3; within the last column a table names): one body
    over four lanes, one instruction a statement, where the pair and the single column
    took two. The extra column is computed beside them, copied aside before and put back
    after (function.j2's keep): left unstored, its lane was dead code to GCC, which then
    vectorized the other three as a pair and a single column again."""
    fours, twos, ones = tables
    pads, pairs, singles = {0: [], 3: []}, [], list(ones)
    for c in twos:
        if c + 2 in singles and (c > 0 or c + 3 <= last):
            pads[0 if c > 0 else 3].append(c - 1 if c > 0 else c)
            singles.remove(c + 2)
        else:
            pairs.append(c)
    return pads, [fours, pairs, singles]


def _column_runs(cols: list, steps: list) -> list:
    """cols (ascending) as runs of adjacent columns, the longest of steps (descending,
    the last 1) first: the runs' first columns, by step."""
    tables, k = [[] for _ in steps], 0
    while k < len(cols):
        i = next(i for i, step in enumerate(steps) if k + step <= len(cols)
                 and cols[k + step - 1] == cols[k] + step - 1)
        tables[i].append(cols[k])
        k += steps[i]
    return tables


#: columns a function over columns (_column_loop) takes side by side, statement by
#: statement: the recursion's passes are a chain of dependent operations per column,
#: latency-bound alone, and independent between columns
COLUMN_LANES = 4


def _lanes(reads: list, body: list, lanes: int, array: str, column=None) -> dict:
    """The loop body over columns c .. c + lanes - 1 ({step, statements, inputs} for
    function.j2): each statement once per column, the column's own names suffixed; B's
    entries read and written in place, E's unit entries compared, M's rows i >= c
    written (guarded: the packed lower triangle holds no others); column(k): B's
    column of lane k (c + k unless given)."""
    column = column or (lambda k: f"c + {k}")
    own = {i["cname"] for i in reads} | {st["lhs"].split()[-1] for st in body if st["temporary"]}

    def renamed(text, k):
        return _IDENTIFIER.sub(lambda m: f"{m.group(0)}_c{k}" if m.group(0) in own
                               else m.group(0), text)

    def read(i, k):
        if array == "B":
            return dict(i, cname=renamed(i["cname"], k), index=f"{i['index']} * w + {column(k)}")
        return dict(i, cname=renamed(i["cname"], k), read=f"({i['index']} == c + {k})")

    def written(st, k):
        if st["temporary"]:
            return dict(st, lhs=renamed(st["lhs"], k), rhs=renamed(st["rhs"], k))
        j = st["index"]
        if array == "B":
            return dict(st, lhs=f"B[{j} * w + {column(k)}]", rhs=renamed(st["rhs"], k))
        return dict(st, lhs=f"M[{j * (j + 1) // 2} + c + {k}]", guard=f"{j} >= c + {k}",
                    rhs=renamed(st["rhs"], k))
    inputs = [read(i, k) for k in range(lanes) for i in reads]
    statements = [written(st, k) for st in body for k in range(lanes)]
    return dict(step=lanes, statements=statements, inputs=inputs)


#: columns the looped mass function takes side by side (see COLUMN_LANES)
MASS_LANES = 1


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _inputs_used(inputs: list, statements: list) -> list:
    """The inputs (function.j2's reads) a part's statements name: a part of a large
    model's function reads a few of its hundreds of inputs."""
    names = set()
    for st in statements:
        names.update(_IDENTIFIER.findall(st["rhs"]))
        for g in st["sincos"]:
            for a in g["args"]:
                names.update(_IDENTIFIER.findall(a))
    return [i for i in inputs if i["cname"] in names]


def _spread_parts(functions: list, name: str) -> dict:
    """Large functions' parts spread over translation units of about TU_STATEMENTS
    statements, compiled side by side (codegen.compiler): {file name: its parts, as
    (function, part)}. Each part records its file; a model whose parts fit in one unit
    keeps them beside their functions.

    The parts are laid out backwards: the last ones first, in the first file (the files
    are linked in the order of their names), so that a call runs through its code from
    the higher addresses to the lower, part by part. Code larger than the instruction
    cache, read forwards part after part, ran much slower here (Talos's inverse dynamics
    in 12 parts, 74 KB, per call alternating in one process: 1.04-1.06 µs forwards,
    0.76-0.82 µs backwards, the same instructions); GCC lays a file's static parts out
    backwards already (those kept beside their functions)."""
    parted = [(f, part) for f in functions for part in f["parts"]][::-1]
    total = sum(len(part["statements"]) for _, part in parted)
    if total <= TU_STATEMENTS:
        return {}
    units = -(-total // TU_STATEMENTS)
    width = len(str(units - 1))     # part02 before part10: name order is link order
    files, size, k = {}, 0, 0
    for f, part in parted:
        fname = f"{name}_part{k:0{width}d}.c"
        files.setdefault(fname, []).append((f, part))
        part["file"] = fname
        size += len(part["statements"])
        if size >= total * (k + 1) / units and k < units - 1:
            k += 1
    return files


def emit(programs: dict, eom: EquationsOfMotion, name: str, rank_rtol: float,
         fused: bool) -> Sources:
    """<name>.c and <name>.h from the programs of plan.build_programs; rank_rtol and
    fused as in codegen.options.Options (fused: the runtime compiled into the model's
    file, see templates/runtime/cg_fused.c)."""
    c = eom.constraints
    layout = "packed lower triangle" if eom.symmetric else "full, row-major"
    # a model's M by its mass function alone, which eval calls (codegen.plan)
    calls_mass = "mass" in programs and "M" not in dict(programs["eval"].outputs)
    functions = [_function("eval", f"{name}_eval", programs["eval"],
                           f"q' into qd, the mass matrix into M ({layout}), F into F"
                           + (", the constraint matrix into A, B' into Bd and Baumgarte's"
                              " term into S (A u' = B' + S)" if c else "")
                           + (f" (M by {name}_mass)" if calls_mass else ": one pass"),
                           [("mass", f"{name}_mass")] if calls_mass else ())]
    # the descriptor's function pointers, in cg_model's order (0: the model has none)
    pointers = dict.fromkeys(FUNCTIONS, "0")
    pointers["eval"] = f"{name}_eval"
    nx = eom.nq + eom.nu
    for kind, key, comment in (
            ("mass", "mass", f"the mass matrix alone into M ({layout}), by the "
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
            overwritten = {"R": _overwritten(programs["columns"], nx)} \
                if kind == "jacobian" and "columns" in programs else None
            functions.append(_function(kind, f"{name}_{kind}", programs[key], comment,
                                       overwritten=overwritten))
            pointers[kind] = f"{name}_{kind}"
    nr = len(eom.specified_names)
    feedback = None
    if nr:                          # the runtime's K law with the sizes compiled in
        feedback = dict(symbol=f"{name}_feedback", signature=FUNCTIONS["feedback"].signature,
                        nr=nr, nx=nx, comment="the feedback law r = c - K x (K: nr x nx, "
                                              "row-major; c = r_ref + K x_ref)")
        pointers["feedback"] = feedback["symbol"]
    tree, solve = "tree" in programs, "solve" in programs
    if calls_mass:                  # defined before its caller
        functions.insert(0, functions.pop(next(i for i, f in enumerate(functions)
                                               if f["kind"] == "mass")))
    # the equations' operations (the solve is counted apart, as the peers do it numerically)
    # (and M's, where eval calls the mass function for it)
    ops = sum(_executed(p, k) for k, p in programs.items()
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
        pointers=list(pointers.values()),
        output_names=outputs, event_names=[e.name for e in eom.events],
        nj=rows, impact_start=impact_start if rows else [],
        # M's factor the Jacobian's program leaves for the columns function (cg_jacobian
        # passes a buffer of nl entries to both)
        nl=len(dict(programs["jacobian"].outputs).get("L", ())) if "jacobian" in programs else 0)
    solve_functions = [f for f in functions if f["kind"] in ("tree", "ldl", "columns")]
    # the files of functions compiled beside the model's own: file -> (functions, what,
    # flags after the build's)
    beside = {}
    if not fused and sum(len(f["statements"]) for f in solve_functions) > SPLIT_STATEMENTS:
        beside[f"{name}_solve.c"] = (solve_functions, "the solve", ())
    looped_mass = [f for f in functions if f["kind"] == "mass" and f["column"]]
    if not fused and looped_mass:      # a large tree's: at LOOP_FLAGS, on the other core
        beside[f"{name}_mass.c"] = (looped_mass, "the mass matrix", LOOP_FLAGS)
    units = {} if fused else _spread_parts(functions, name)
    for fs, _, _ in beside.values():
        for f in fs:
            f["external"] = True
    files = {f"{name}.h": render("model.h.j2", **data), f"{name}.c": render("model.c.j2", **data)}
    c_files = [f"{name}.c"]
    for fname, (fs, what, _) in beside.items():
        files[fname] = render("model_solve.c.j2", **dict(data, functions=fs, what=what,
                                                         file=fname))
        c_files.append(fname)
    for fname, parts in units.items():
        files[fname] = render("model_parts.c.j2", name=name, version=__version__,
                              parts=[dict(function=f, part=part) for f, part in parts])
        c_files.append(fname)
    file_flags = {fname: PART_FLAGS for fname in units}
    file_flags.update({fname: flags for fname, (_, _, flags) in beside.items() if flags})
    mass_failure = ("the mass matrix is not positive definite" if eom.symmetric
                    else "the mass matrix is singular")
    return Sources(name=name, files=files, c_files=c_files, operation_count=ops, solver=solver,
                   mass_failure=mass_failure, nc=data["nc"], nh=data["nh"],
                   jacobian="jacobian" in programs, flags=tuple(flags), file_flags=file_flags)
