"""A function's layout in C: its statements in order, the parts of a long function and the
files they go to, the scratch array's slots and windows, zero fills, and the kinds compiled
twice (CG_CLONES). ``function_data`` gives function.j2 one function's data."""
from __future__ import annotations

import bisect
import heapq

import sympy as sm

from ..abi import FUNCTIONS
from ..programs.program import Program, dependents
from ..symbolic.counting import operation_count
from ..progress import checkpoint
from .column_loops import COLUMN_ARRAYS, column_loop
from .printer import IDENTIFIER, CPrinter
from .windows import WINDOW, WINDOW_MIN, WINDOWS, part_windows
from .trig import HOIST_TRIG, TRIG_LOOP_PAIRS, trig_loop, trig_numbers, trig_plan

__all__ = ["function_data", "spread_parts", "executed_operations", "ordered_statements", "aliases",
           "scratch_layout", "part_windows", "part_starts", "PART_LIMIT", "LANE_PART_OPERATIONS", "PART_STATEMENTS", "PART_OPERATIONS",
           "OPERATION_PART_STATEMENTS", "TU_STATEMENTS", "PART_FLAGS", "LOOP_FLAGS",
           "SPLIT_STATEMENTS", "CLONED", "SCHEDULED", "ZERO_FILL", "WINDOWS", "WINDOW", "WINDOW_MIN"]


#: a program over pairs (codegen.algorithms.lanes) is parted from this many operations or its
#: kind's, its pairs kept in one part (part_starts). Against CppADCodeGen in C: Solo12's
#: inverse dynamics (1,059) 2.76x whole, 2.40x parted; Atlas's (3,669) 1.74x whole, 2.06x
#: parted; Solo12's recursion (2,620) 3.45x whole, 3.18x parted
LANE_PART_OPERATIONS = 2000

#: a function with more statements than PART_LIMIT is emitted in parts of
#: PART_STATEMENTS (function.j2): the compiler's register allocation grows faster
#: than linearly with a function's size (a 9,000-statement Jacobian: 84 s at -O2
#: in one function, 9 s in parts of 250). A temporary used only in its own part is a
#: local there (scratch_layout), kept in a register; longer parts keep more temporaries
#: local, but spill more
PART_LIMIT, PART_STATEMENTS = 1500, 250


#: the kinds emitted whole up to this many operations (whatever their statements), in parts
#: at PART_FLAGS beyond, where parts run faster (against CppADCodeGen in C: Solo12's
#: recursion, 4,046 operations, 1.86 -> 2.20 times the peer's speed; Atlas's inverse
#: dynamics, 4,107, 1.53 -> 1.81; HyQ's composite eval, 1,508, 1.69 -> 2.13); below, whole
#: runs as fast or faster (the iiwa's inverse dynamics, 572, 2.41 against 2.33 parted; the
#: UR5's eval, 606, 2.57 against 2.05). docs/design.md gives the figures
PART_OPERATIONS = {"tree": 3000, "inverse_dynamics": 1000, "eval": 1000, "jacobian": 4000}


#: the statements of a part of those kinds (PART_OPERATIONS), fewer than PART_STATEMENTS:
#: compiled for size (CG_PART, PART_FLAGS), short parts run faster though their instructions
#: are nearly the same (fewer spills, more values through the scratch array): Talos's
#: inverse dynamics 0.73-0.75 µs a call in parts of 90, 0.87-0.98 in parts of 250
OPERATION_PART_STATEMENTS = 90


#: a model whose large functions' parts have more statements than this spreads them over
#: files of about this many, compiled at the same time (spread_parts)
TU_STATEMENTS = 2500


#: the flags, after the build's own, of the files of a large model's parts, where gcc's -O2
#: only costs: the parts' straight-line code is read once a call, and its size is what
#: costs (the instruction cache). -O1 compiles them in half the CPU time to the same or
#: fewer instructions; -Os runs faster still (Atlas's right-hand side: 2.50 µs a call,
#: 2.64 at -O1), for a longer compile of the largest models (docs/design.md)
PART_FLAGS = ("-Os",)


#: the flags of a large tree's mass matrix, a loop over M's columns (its own file), as measured
#: on the 100-link pendulum: -O1 compiles it in half the CPU time of -O2 to the same instructions
LOOP_FLAGS = ("-O1",)


#: a thin build whose solve (the recursion, the unrolled L D Lᵀ) has more statements
#: than this gets it in a file of its own, compiled on the second core
SPLIT_STATEMENTS = 400


def aliases(program: Program) -> dict:
    """{temporary: the value it names}: each temporary that only names another value (an
    input, a temporary, a sine or cosine) or its negative, that value followed through
    the aliases before it. A parted function gives these no slot and no statement
    (ordered_statements): through the scratch array each was a copy from slot to slot
    (Atlas's mass matrix: 223 of its 1,727 statements)."""
    def named(e):
        return e.is_Symbol or e in program.names or isinstance(e, (sm.sin, sm.cos))

    alias = {}
    for sym, e in program.temporaries:
        if alias and not alias.keys().isdisjoint(e.free_symbols):
            e = e.xreplace(alias)
        if named(e) or (e.is_Mul and len(e.args) == 2 and e.args[0] == -1 and named(e.args[1])):
            alias[sym] = e
    return alias


def ordered_statements(program: Program, outputs_early: bool, alias: dict | None = None) -> list:
    """A function's statements in the order emitted, as (temporary symbol or None, expression,
    output array, index): the temporaries, then the outputs; with outputs_early (a parted
    function, the L D L^T) each output right after the last temporary it reads (constants
    first), so that the temporaries die early and the scratch array holds only those still to
    be read (scratch_layout): the 100-link pendulum's Jacobian reads nearly every temporary
    in its outputs, at the end. alias: the program's aliases (aliases(program), formed here
    where not given)."""
    if not outputs_early:
        return [(sym, e, "", 0) for sym, e in program.temporaries] + \
            [(None, e, array, i) for array, exprs in program.outputs for i, e in enumerate(exprs)]
    # each statement as the layout sees it: with the values of the aliases it reads beside
    # it, unevaluated (a substitution could cancel a read the printed statement still has)
    alias = aliases(program) if alias is None else alias

    def reads(e):
        named = alias.keys() & e.free_symbols
        return sm.Tuple(e, *(alias[a] for a in sorted(named, key=str))) if named else e

    statements = [(sym, reads(e), "", 0) for sym, e in program.temporaries if sym not in alias]
    outputs = [(None, reads(sm.sympify(e)), array, i)
               for array, exprs in program.outputs for i, e in enumerate(exprs)]
    position = {sym: k for k, (sym, _, _, _) in enumerate(statements)}
    after = {}                          # temporary's position (-1: none) -> outputs after it
    for st in outputs:
        after.setdefault(max((position[a] for a in st[1].free_symbols if a in position),
                             default=-1), []).append(st)
    return after.get(-1, []) + [x for k, st in enumerate(statements)
                                for x in [st] + after.get(k, [])]


def part_starts(statements: list, size: int, vectors=frozenset()) -> list:
    """The parts' first statements: one each size statements, but none within the run from
    the first statement over pairs (vectors) to the last that reads one, kept in one part
    (a pair has no slot in the scratch array of doubles)."""
    starts = list(range(0, len(statements), size))
    run = [k for k, (sym, e, _, _) in enumerate(statements)
           if sym in vectors or e.free_symbols & vectors]
    return [b for b in starts if not run or not run[0] < b <= run[-1]]


def scratch_layout(statements: list, plan: dict, last_trig: dict, part: int = None,
                    loop_values: int = 0, starts: list = None) -> tuple:
    """(local, slots, size) of a parted function (ordered_statements's statements in parts of
    part, by default PART_STATEMENTS): local, the temporaries read only in the part that defines them (local
    constants there, in registers, where the others go through the scratch array: a
    store each, and a load at each use the compiler cannot forward); slots, each value
    read in a later part -> its index in the scratch array w: temporaries by symbol,
    sin/cos values by (k, "s" or "c") (trig_numbers; the others are the part's locals);
    size, w's length.

    The slots are reused by a linear scan over the values' live ranges (the defining
    statement to the last that reads the value, sin/cos arguments read where they are
    computed): a value's slot is freed after the statement of its last use, and a new
    value takes the lowest free slot, so that w stays small (the 100-link pendulum's
    Jacobian: 10,901 slots for 22,042 temporaries).
    The first loop_values sin/cos arguments (trig_loop's) get slots wherever they are read.
    starts: the parts' first statements (part_starts), where not every part statements long."""
    part = part or PART_STATEMENTS
    starts = starts or list(range(0, len(statements), part))

    def part_of(k):
        return bisect.bisect_right(starts, k) - 1
    index_of = {st[0]: k for k, st in enumerate(statements) if st[0] is not None}
    last = {}
    for k, (_, e, _, _) in enumerate(statements):
        used = set(e.free_symbols)
        for group in plan.get(k, []):
            for arg in group:
                used |= arg.free_symbols
        last.update((s, k) for s in used if s in index_of)
    numbers = trig_numbers(plan)
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
            if part_of(end) == part_of(k) and not (isinstance(value, tuple)
                                                 and value[0] < loop_values):
                if value in index_of:
                    local.add(value)
                continue
            slots[value] = heapq.heappop(free) if free else size
            size = max(size, slots[value] + 1)
            heapq.heappush(live, (end, slots[value]))
    return local, slots, size


def function_data(kind: str, symbol: str, program: Program, comment: str, calls=(),
              overwritten=None) -> dict:
    """One function's data for function.j2: which arrays it leaves unused, its
    input reads, and its statements (sin/cos pairs first), expressions printed;
    calls: (kind, symbol) of generated functions it calls last, on its own arguments,
    for the arrays they write; overwritten: array -> the entries its caller writes
    before any read (R's, by the columns function: overwritten_entries), whose zeros the
    function leaves unwritten.
    All inputs are read before any output is written, so an array may be both
    (the unrolled solve's F); that solve is never parted, as a part reads the
    inputs again after earlier parts wrote."""
    # constant outputs (a Jacobian's zeros and ones) cost the compiler nothing
    count = len(program.temporaries) + sum(not e.is_number for _, exprs in program.outputs
                                           for e in exprs)
    over = COLUMN_ARRAYS.get(kind)             # the array looped over, if any
    looped = over is not None and any(i.array == over for i in program.inputs)
    # the mass function as a loop over M's columns is not cloned (cg_math.h's copies): a
    # large tree's, rarely on a hot path, whose clone would add much of its compile (the
    # 200-link pendulum's: 3.8 s for 2.3); and it is the one form whose M a right-hand side
    # solves with (eval calls it where no recursion is built), whose bits stay the same on
    # every processor
    cloned = kind in CLONED and not (kind == "mass" and looped)
    large = program.operation_count > (
        max(LANE_PART_OPERATIONS, PART_OPERATIONS[kind]) if program.vectors
        else PART_OPERATIONS[kind]) if kind in PART_OPERATIONS else count > PART_LIMIT
    parted = large and kind != "ldl" and not looped
    size_of_part = OPERATION_PART_STATEMENTS if kind in PART_OPERATIONS else PART_STATEMENTS
    names = program.names
    local, slots, size = set(), {}, 0
    alias = aliases(program) if parted else {}
    # the L D L^T's pivots stored as they come, not held to the end (inlined in eval_ldl,
    # held they cost the UR5's 49 instructions of 1,747)
    ordered = ordered_statements(program, parted or kind == "ldl", alias)
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
    plan, last_trig = trig_plan(ordered, angles)
    trig_pairs = 0                # the pairs of coordinates whose sin/cos loop (trig_loop)
    while trig_pairs < len(plan.get(0, ())) and len(plan[0][trig_pairs]) == 2 \
            and all(a in angles for a in plan[0][trig_pairs]):
        trig_pairs += 1
    if trig_pairs < TRIG_LOOP_PAIRS:
        trig_pairs = 0
        plan, last_trig = trig_plan(ordered, hoist=not parted and kind in HOIST_TRIG)
    numbers = trig_numbers(plan)
    if parted:
        starts = part_starts(ordered, size_of_part, program.vectors)
        local, slots, size = scratch_layout(ordered, plan, last_trig, size_of_part,
                                             2 * trig_pairs, starts)
        assert not program.vectors & set(slots), "a pair read in a later part"
        names = dict(names)
        names.update({sym: f"w[{slots[sym]}]" for sym, _ in program.temporaries
                      if sym in slots})
    printer = CPrinter(names, {v: f"w[{i}]" for v, i in slots.items() if isinstance(v, tuple)})
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
    # printed as the program has them: an alias read as the C of its value, so that each
    # product's factors stay in their order, and the bits those of the function whole
    original = dict(program.temporaries)
    output = dict(program.outputs)
    for sym, value in alias.items():
        negative = value.is_Mul and value.args[0] == -1
        target = value.args[1] if negative else value
        if isinstance(target, (sm.sin, sm.cos)) and target.args[0] not in numbers:
            continue                                 # read by no statement
        c = printer.trig_value(numbers[target.args[0]], "s" if isinstance(target, sm.sin)
                               else "c") if isinstance(target, (sm.sin, sm.cos)) \
            else printer.expression(target)
        names[sym] = f"(-{c})" if negative else c
    statements = []
    for k, (sym, expr, array, i) in enumerate(ordered):
        if k % 1000 == 0:
            checkpoint()
        if parted:
            expr = original[sym] if sym is not None else sm.sympify(output[array][i])
        if sym is None:
            statements.append(dict(sincos=sincos(k), temporary=False, array=array, index=i,
                                   lhs=f"{array}[{i}]", rhs=printer.expression(expr),
                                   **({"guard": array} if array in optional else {})))
        else:
            statements.append(dict(sincos=sincos(k), temporary=True, array="", index=0,
                                   lhs=("" if parted and sym not in local else "const cg_v2 "
                                        if sym in program.vectors else "const double ")
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
        for k, (i, j) in enumerate(zip(starts, starts[1:] + [len(statements)])):
            windows, chunk = part_windows(statements[i:j])
            parts.append(dict(index=k, statements=chunk, file=None, fills=fills if k == 0 else (),
                              windows=windows, inputs=inputs_used(inputs, chunk),
                              trig_loop=None))
        if trig_pairs:
            parts[0]["trig_loop"] = trig_loop(plan[0][:trig_pairs], numbers, slots,
                                               program.names, reads)
    signature = FUNCTIONS[kind]
    column = None
    if looped:
        statements, inputs, column = column_loop(program, statements, inputs, over)
    return dict(kind=kind, symbol=symbol, comment=comment, unused=unused, inputs=inputs,
                clones=cloned, scheduled=kind in SCHEDULED and not parted,
                fills=() if parted else fills,
                # the Jacobian's parts: cg_jacobian passes its arrays disjoint
                restrict=signature.restricted_signature if cloned else "",
                calls=[dict(symbol=s, arguments=FUNCTIONS[k].arguments) for k, s in calls],
                signature=signature.signature, arguments=signature.arguments,
                reads=signature.reads, column=column,
                temporaries=bool(program.temporaries), statements=statements, external=False,
                parts=parts, scratch=max(size, 1), guard="", part_symbol=symbol)


def _fills(exprs: list, overwritten) -> bool:
    """Whether an output array is filled with zeros first (cg_zero) rather than its zeros
    stored one by one: at ZERO_FILL zeros that are at least half its entries, and, where
    its caller overwrites some entries (their zeros then written by neither), at a quarter
    of its entries. The fill writes every entry, a store each zero: a fill of a kilobyte or
    more is a `rep stos`, whose start costs tens of cycles (Solo12's packed M, 54 zeros of
    171: 2,039 instructions a call filled, with the fill's 171 stores)."""
    zeros = sum(e == 0 for k, e in enumerate(exprs) if k not in overwritten)
    if overwritten:
        return zeros >= ZERO_FILL and 4 * zeros >= len(exprs)
    return zeros >= ZERO_FILL and 2 * zeros >= len(exprs)


#: the kinds of function compiled twice, the AVX2 copy taken where the processor has it
#: (cg_math.h's CG_CLONES): the Jacobian's, where the straight-line code's decoding is
#: what costs, and a tree's mass matrix (not as the loop over its columns: function_data),
#: which runs faster cloned for no longer a build (Atlas's in C: 0.98 µs a call against
#: 1.69 uncloned). Not the right-hand side and inverse dynamics: their bits stay the same
#: on every processor, a clone doubles a function's compile, and they are several times
#: Pinocchio's already
CLONED = frozenset({"jacobian", "parameter_jacobian", "columns", "mass"})


#: the kinds whose function, when whole (not in parts), GCC schedules before register
#: allocation (cg_math.h's CG_SCHEDULED), and eval_ldl (codegen.emit.sources). Time lead
#: over CppADCodeGen without and with: RNEA, UR5 1.88 and 2.02, iiwa 2.35 and 2.58, HyQ
#: 2.41 and 2.59, Solo12 2.81 and 3.27; ABA, the UR5's eval_ldl 2.27 and 2.36-2.48. Not
#: the other forms of x': HyQ's eval over pairs ran 12 % slower scheduled, its L D L^T 5 %,
#: the iiwa's and Solo12's recursions within the noise
SCHEDULED = frozenset({"inverse_dynamics", "eval_ldl"})


#: an output with at least this many zeros by structure, none of its entries read by the
#: function, is filled with zeros first (cg_zero, a memset) and only its other entries are
#: stored: each store of a zero is an 11-byte instruction, and zeros are most of a
#: Jacobian's entries (Solo12's: 1,332 of 1,813)
ZERO_FILL = 16


def executed_operations(program: Program, kind: str) -> int:
    """The operations a call runs: a looped mass function's (COLUMN_ARRAYS) once part
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


def inputs_used(inputs: list, statements: list) -> list:
    """The inputs (function.j2's reads) a part's statements name: a part of a large
    model's function reads a few of its hundreds of inputs."""
    names = set()
    for st in statements:
        names.update(IDENTIFIER.findall(st["rhs"]))
        for g in st["sincos"]:
            for a in g["args"]:
                names.update(IDENTIFIER.findall(a))
    return [i for i in inputs if i["cname"] in names]


def spread_parts(functions: list, name: str) -> dict:
    """Large functions' parts spread over translation units of about TU_STATEMENTS
    statements, compiled side by side (codegen.pipeline.compiler): {file name: its parts, as
    (function, part)}. Each part records its file; a model whose parts fit in one unit
    keeps them beside their functions.

    The parts are laid out backwards: the last ones first, in the first file (the files
    are linked in the order of their names), so that a call runs through its code from
    the higher addresses to the lower, part by part: code larger than the instruction
    cache runs slower read forwards, at the same instructions (Talos's inverse dynamics,
    74 KB: a third slower). GCC lays a file's static parts out backwards already
    (those kept beside their functions)."""
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
