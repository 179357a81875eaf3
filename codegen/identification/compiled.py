"""The regressors compiled: a program each (codegen.identification.program) printed by the
code generator's C printer into templates/export/regressor.c.j2, built as a
shared library by the pipeline's compiler with a small CPython extension beside the kernels
(templates/export/regressor_python.c.j2) for single calls, and ctypes for batches."""
from __future__ import annotations

import ctypes
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


def _function(name: str, comment: str, program) -> dict:
    """One C function's lines from a Program (inputs, temporaries, the Y array)."""
    names = dict(program.names)
    for sym, _ in program.temporaries:
        names.setdefault(sym, str(sym))
    local = [names[s] for s, _ in program.temporaries] + [i.name for i in program.inputs]
    if len(set(local)) != len(local):
        raise ValueError(f"internal error: the {name} program names two values alike "
                         f"(please report it)")
    printer = CPrinter(names)
    inputs = [f"{i.name} = {i.array}[{i.index}]" for i in program.inputs]
    statements = [f"{names[s]} = {printer.expression(e)}" for s, e in program.temporaries]
    (_, exprs), = program.outputs
    outputs = [f"Y[{k}] = {printer.expression(e)}" for k, e in enumerate(exprs)]
    return dict(name=name, comment=comment, inputs=inputs, statements=statements,
                outputs=outputs)


def regressor_source(name: str, model_name: str, n: int, nx: int, programs: dict,
                     tables=None) -> str:
    """The C source of the functions {function name: (comment, program, columns)};
    tables: {"strings": [(name, [str])], "numbers": [(name, [str])]}, the standalone
    export's constant tables (declared in its header), or None."""
    functions = []
    for fname, (comment, program, columns) in programs.items():
        f = _function(fname, comment, program)
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
        self._lib = ctypes.PyDLL(str(library))
        self._fns = {}
        for f in ("regressor", "base_regressor")[:1 if nb is None else 2]:
            batch = getattr(self._lib, f"{name}_{f}_batch")
            batch.restype = None
            batch.argtypes = [ctypes.c_long] + [ctypes.c_void_p] * 3
            self._fns[f + "_batch"] = batch
        loader = importlib.machinery.ExtensionFileLoader(module, str(library))
        spec = importlib.util.spec_from_file_location(module, str(library), loader=loader)
        ext = importlib.util.module_from_spec(spec)
        loader.exec_module(ext)
        # the single calls go straight to the extension, which converts and checks
        self._y, self._yb = ext.regressor, getattr(ext, "base_regressor", None)

    def batch(self, f: str, X, UD) -> np.ndarray:
        """f ("regressor" or "base_regressor") at N samples in one call: X (N x nx),
        UD (N x n) -> (N·n x columns), the samples' rows one after another."""
        X = np.ascontiguousarray(X, dtype=float)
        UD = np.ascontiguousarray(UD, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.nx or UD.shape != (len(X), self.n):
            raise ValueError(f"X must have shape (N, {self.nx}) and UD (N, {self.n}); got "
                             f"{X.shape} and {UD.shape}")
        if f not in ("regressor", "base_regressor"):
            raise ValueError(f"f must be 'regressor' or 'base_regressor', got {f!r}")
        self._has(f)
        cols = self.p if f == "regressor" else self.nb
        Y = np.empty((len(X) * self.n, cols))
        self._fns[f + "_batch"](len(X), X.ctypes.data, UD.ctypes.data, Y.ctypes.data)
        return Y

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
