"""Functions over columns (the Jacobian's solve M Z = R, a large tree's mass matrix): the
statements shared by all columns run once, the rest in a loop over the columns, in runs of
SIMD lanes, and the entries of R the column solve writes before reading."""
from __future__ import annotations


from ..programs.program import Program, dependents
from .printer import IDENTIFIER

__all__ = ["column_loop", "overwritten_entries", "padded_runs", "column_runs", "COLUMN_ARRAYS",
           "COLUMN_LANES", "MASS_LANES"]


def overwritten_entries(columns: Program, nx: int) -> frozenset:
    """The entries of R (row-major, nx columns) that the columns function, when state
    says B is R, writes before any read (column_loop): in a group's columns, the rows off
    its support (which it does not read) where its solution is not zero by structure
    (those zeros it leaves to R); less the support rows of the columns a group's padded
    runs take beside their own (their extra lane's results are discarded, but it should
    not compute on what the caller's buffer held). The jacobian function need not write
    R's zeros there, so that a large R (Talos's: 23 KB) is not filled at every call: only
    the few zeros still read are stored."""
    groups = columns.column_groups[1:]
    if not groups:
        return frozenset()
    outputs = dict(columns.outputs)
    out, read = set(), set()
    for g, (name, cols) in enumerate(groups, 1):
        rows = {i.index for i in columns.inputs if i.array == "B" and _group_of(i.name) == g}
        out.update(j * nx + c for c in cols for j, e in enumerate(outputs[name])
                   if j not in rows and e != 0)
        pads, _ = _group_runs(columns, cols)
        read.update(j * nx + first + lane for lane, firsts in pads.items() for first in firsts
                    for j in rows)
    return frozenset(out - read)


#: the input array a function over columns loops over, by kind: the block B of the
#: Jacobian's solve (nu x w, row-major), the unit vectors E of a large tree's mass
#: function (codegen.algorithms.crba.mass_columns_program; column c writes M's rows i >= c)
COLUMN_ARRAYS = {"columns": "B", "mass": "E"}


def column_loop(program: Program, statements: list, inputs: list, array: str) -> tuple:
    """(statements, inputs, loop) of a function over the columns of its input array
    (COLUMN_ARRAYS): B's c < w (entry j of column c at B[j * w + c]) or E's c < nu (the
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
    # bodies of their own (codegen.algorithms.jacobian_columns.column_groups), each over its columns' table
    # when state says B is R; the first body over the others then, or over all of B's
    own = {}
    for g, (name, _) in enumerate(program.column_groups[1:], 1):
        seeds = {o for o, n in program.names.items() if _group_of(n) == g and n in read}
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
        ins = [i for i in reads if _group_of(i["cname"]) == g]
        # a zero solved off the rows a group reads is R's zero there already
        rows = {i["index"] for i in ins}
        mine = [st for st, o in zip(body, owner) if o == name and not (
            g and not st["temporary"] and st["rhs"] == "0" and st["index"] not in rows)]
        # runs of four, two and one (a floating base's six speeds as four and a pair),
        # a group's runs of three (a leg's) as fours padded with a column of R put back
        # after (padded_runs): alone, a column's statements do not pair into vector
        # ones and run twice the instructions
        runs = [4, 2, 1] if steps == [4, 1] else steps
        pads, tables = _group_runs(program, cols) if g and steps == [4, 1] \
            else ({}, column_runs(cols, runs))
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


def _group_of(cname: str) -> int:
    """The column group whose body reads an entry of B, by its C name
    (codegen.algorithms.jacobian_columns: cg_b<j>_g<g> for a group g > 0, cg_b<j> for the
    first body)."""
    head, _, tail = cname.rpartition("_g")
    return int(tail) if head and tail.isdigit() else 0


def _group_runs(program: Program, cols: list) -> tuple:
    """A group's columns (ascending) of a column solve's program as column_loop runs them
    over four lanes: padded_runs' ({lane: first columns}, tables over 4, 2, 1)."""
    last = max(c for _, group in program.column_groups for c in group)
    return padded_runs(column_runs(cols, [4, 2, 1]), last)


def padded_runs(tables: list, last: int) -> tuple:
    """({lane: first columns}, tables): a group's runs of three adjacent columns (a
    leg's coordinates, or its speeds), from column_runs' tables over steps 4, 2, 1 as a
    pair and a single column, as runs of four with the column before (lane 0) or, at
    column 0, the one after (lane 3; within the last column a table names): one body
    over four lanes, one instruction a statement, where the pair and the single column
    took two. The extra column is computed beside them, copied aside before and put back
    after (function.j2's keep): left unstored, its lane is dead code to GCC, which then
    vectorizes the other three as a pair and a single column again."""
    fours, twos, ones = tables
    pads, pairs, singles = {0: [], 3: []}, [], list(ones)
    for c in twos:
        if c + 2 in singles and (c > 0 or c + 3 <= last):
            pads[0 if c > 0 else 3].append(c - 1 if c > 0 else c)
            singles.remove(c + 2)
        else:
            pairs.append(c)
    return pads, [fours, pairs, singles]


def column_runs(cols: list, steps: list) -> list:
    """cols (ascending) as runs of adjacent columns, the longest of steps (descending,
    the last 1) first: the runs' first columns, by step."""
    tables, k = [[] for _ in steps], 0
    while k < len(cols):
        i = next(i for i, step in enumerate(steps) if k + step <= len(cols)
                 and cols[k + step - 1] == cols[k] + step - 1)
        tables[i].append(cols[k])
        k += steps[i]
    return tables


#: columns a function over columns (column_loop) takes side by side, statement by
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
        return IDENTIFIER.sub(lambda m: f"{m.group(0)}_c{k}" if m.group(0) in own
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
