"""The regressors compiled: a program each (codegen.identification.program) printed by the
code generator's C printer into templates/export/regressor.c.j2, built as a
shared library by the pipeline's compiler with a small CPython extension beside the kernels
(templates/export/regressor_python.c.j2) for single calls and batches."""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import shutil
import sysconfig
from pathlib import Path

import numpy as np

from ..emit.printer import CPrinter
from ..emit.render import render
from ..pipeline.compiler import compile_library
from ..pipeline.files import prepare_dir
from ..pipeline.options import PORTABLE_FLAGS

__all__ = ["RegressorModule", "regressor_source", "build_module"]


#: at least this many structural zeros: Y is cleared by one memset first, else a store
#: each. Atlas's 7601 stores were a third of its kernel's instructions (84 KB of code,
#: fetched from L2 at every call) and HyQ's 1248 cost 0.56 µs against 0.33; the UR5's 172
#: cost 0.2 µs against 0.33 (the call and the whole of Y)
ZEROS_BY_MEMSET = 1024
#: the volatile view of Y its entries are stored through (templates/export/regressor.c.j2)
_OUT = "cg_Y"


def _function(name: str, comment: str, program, columns: int) -> dict:
    """One C function's lines from a Program: its inputs and body (the temporaries and Y's
    nonzero entries in _order's order), and how Y's zeros are written: by memset first
    or a store each (zero_stores, ZEROS_BY_MEMSET)."""
    names = dict(program.names)
    for sym, _ in program.temporaries:
        names.setdefault(sym, str(sym))
    local = ([names[s] for s, _ in program.temporaries] + [i.name for i in program.inputs]
             + [_OUT])
    if len(set(local)) != len(local):
        raise ValueError(f"internal error: the {name} program names two values alike "
                         f"(please report it)")
    printer = CPrinter(names)
    inputs = [f"{i.name} = {i.array}[{i.index}]" for i in program.inputs]
    (_, exprs), = program.outputs
    zeros = [k for k, e in enumerate(exprs) if e == 0]
    memset = len(zeros) >= ZEROS_BY_MEMSET
    body = []
    for kind, k in _order(program.temporaries, exprs, columns):
        if kind == "y":
            body.append(f"{_OUT}[{k}] = {printer.expression(exprs[k])}")
        else:
            sym, e = program.temporaries[k]
            body.append(f"const double {names[sym]} = {printer.expression(e)}")
    read = {i.array for i in program.inputs}
    unused = [a for a in ("x", "ud") if a not in read] + ([] if len(zeros) < len(exprs) else ["Y"])
    return dict(name=name, comment=comment, inputs=inputs, body=body, out=_OUT, unused=unused,
                stores=len(zeros) < len(exprs), size=len(exprs), zeros=len(zeros),
                memset=memset, zero_stores=[] if memset else zeros)


def _order(temporaries: list, exprs: list, columns: int) -> list:
    """[("t", a temporary's index) or ("y", an entry's index)]: Y's nonzero entries column
    by column (a column is one parameter: its rows read the same few temporaries of its
    body), each right after the temporaries it reads that are not yet written, depth
    first. In the CSE's order (every temporary, then Y row by row) about 1500 of Atlas's
    values are live at once, most spilled to the stack long before their use: its kernel
    was 32,600 instructions in 250 KB, 22,000 in 140 KB in this order with the zeros by
    memset (the kernel does not fit the instruction cache: its time follows its bytes)."""
    index = {s: i for i, (s, _) in enumerate(temporaries)}
    reads = [sorted(index[s] for s in e.free_symbols if s in index) for _, e in temporaries]
    done = [False] * len(temporaries)
    out = []
    for k in sorted((k for k, e in enumerate(exprs) if e != 0),
                    key=lambda k: (k % columns, k // columns)):
        for root in sorted(index[s] for s in exprs[k].free_symbols if s in index):
            if done[root]:
                continue
            done[root] = True
            stack = [(root, iter(reads[root]))]
            while stack:                    # depth first, each after what it reads
                i, pending = stack[-1]
                for j in pending:
                    if not done[j]:
                        done[j] = True
                        stack.append((j, iter(reads[j])))
                        break
                else:
                    stack.pop()
                    out.append(("t", i))
        out.append(("y", k))
    return out


def regressor_source(name: str, model_name: str, n: int, nx: int, programs: dict,
                     tables=None) -> str:
    """The C source of the functions {function name: (comment, program, columns)};
    tables: {"strings": [(name, [str])], "numbers": [(name, [str])]}, the standalone
    export's constant tables (declared in its header), or None."""
    functions = []
    for fname, (comment, program, columns) in programs.items():
        f = _function(fname, comment, program, columns)
        f["columns"] = columns
        functions.append(f)
    return render("export/regressor.c.j2", name=name, model=model_name, n=n, nx=nx,
                  functions=functions, tables=tables)


class RegressorModule:
    """A compiled regressor: ``regressor(x, udot)`` (n x len(π)) and
    ``base_regressor(x, udot)`` (n x len(base)), x in the model's state order; module: the
    name of the CPython extension the library holds (build_module)."""

    def __init__(self, library: Path, name: str, n: int, nx: int, p: int, nb: int,
                 module: str):
        self.library, self.name, self.n, self.nx, self.p, self.nb = library, name, n, nx, p, nb
        loader = importlib.machinery.ExtensionFileLoader(module, str(library))
        spec = importlib.util.spec_from_file_location(module, str(library), loader=loader)
        ext = importlib.util.module_from_spec(spec)
        loader.exec_module(ext)
        # the calls go straight to the extension, which converts and checks
        self._y, self._yb = ext.regressor, getattr(ext, "base_regressor", None)
        self._batch = {f: getattr(ext, f + "_batch")
                       for f in ("regressor", "base_regressor")[:1 if nb is None else 2]}

    def batch(self, f: str, X, UD) -> np.ndarray:
        """f ("regressor" or "base_regressor") at N samples in one call: X (N x nx),
        UD (N x n) -> (N·n x columns), the samples' rows one after another (the extension
        converts and checks X and UD)."""
        if f not in ("regressor", "base_regressor"):
            raise ValueError(f"f must be 'regressor' or 'base_regressor', got {f!r}")
        self._has(f)
        return self._batch[f](X, UD)

    def regressor(self, x, udot, out=None) -> np.ndarray:
        """Y at the state x and accelerations udot: τ = Y π; out: a float64 C-contiguous
        (n x len(π)) array to write Y into and return (default: a new one)."""
        return self._y(x, udot, out)

    def base_regressor(self, x, udot, out=None) -> np.ndarray:
        """Y_b, the base parameters' columns: τ = Y_b β; out as for regressor."""
        self._has("base_regressor")
        return self._yb(x, udot, out)

    def _has(self, f: str):
        if f == "base_regressor" and self.nb is None:
            raise ValueError(f"{self.name} was generated with base=False: it has Y alone, "
                             f"no base regressor")


def build_module(name: str, source: str, output_dir, dims: tuple, flags=PORTABLE_FLAGS):
    """Compile source into output_dir/name/ (the source beside the library) with its
    CPython extension (templates/export/regressor_python.c.j2) and load it; dims
    (n, nx, p, nb), nb None for Y alone."""
    n, nx, p, nb = dims
    target = prepare_dir(output_dir, name)
    (target / f"{name}_regressor.c").write_text(source)
    # the library's name carries its source's digest: a process that loaded an older
    # build keeps it (dlopen caches by path), and a new source gets a new file
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    module = f"{name}_regressor_{digest}"
    functions = [{"name": "regressor", "columns": p}] + (
        [] if nb is None else [{"name": "base_regressor", "columns": nb}])
    wrapper = render("export/regressor_python.c.j2", name=name, module=module, n=n, nx=nx,
                     functions=functions)
    files = {f"{name}_regressor.c": source, f"{name}_python.c": wrapper}
    built = compile_library(files, list(files), module, flags, target,
                            include_dirs=[sysconfig.get_paths()["include"], np.get_include()],
                            what=f"regressor {name!r}")
    final = target / built.name
    shutil.move(str(built), str(final))
    shutil.rmtree(built.parent, ignore_errors=True)
    return RegressorModule(final, name, n, nx, p, nb, module)
