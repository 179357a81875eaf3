"""The regressors compiled: a program each (codegen.identification.program) printed by the
code generator's C printer into templates/export/regressor.c.j2, built as a
shared library by the pipeline's compiler, and called through ctypes."""
from __future__ import annotations

import ctypes
import hashlib
import shutil
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
    ``base_regressor(x, udot)`` (n x len(base)), x in the model's state order."""

    def __init__(self, library: Path, name: str, n: int, nx: int, p: int, nb: int):
        self.library, self.name, self.n, self.nx, self.p, self.nb = library, name, n, nx, p, nb
        # PyDLL keeps the GIL through a call, so the buffers below are never shared by
        # two calls at once
        self._lib = ctypes.PyDLL(str(library))
        self._fns = {}
        for f in ("regressor", "base_regressor"):
            fn = getattr(self._lib, f"{name}_{f}")
            fn.restype = None
            fn.argtypes = [ctypes.c_void_p] * 3
            self._fns[f] = fn
            batch = getattr(self._lib, f"{name}_{f}_batch")
            batch.restype = None
            batch.argtypes = [ctypes.c_long] + [ctypes.c_void_p] * 3
            self._fns[f + "_batch"] = batch
        # a single call's inputs and outputs go through buffers whose addresses are read
        # once: reading an array's address costs more than the kernel
        self._x, self._ud = np.empty(nx), np.empty(n)
        self._out = {"regressor": np.empty((n, p)), "base_regressor": np.empty((n, nb))}
        self._args = {f: (self._x.ctypes.data, self._ud.ctypes.data, Y.ctypes.data)
                      for f, Y in self._out.items()}

    def _call(self, f: str, x, udot) -> np.ndarray:
        try:
            self._x[:] = x
            self._ud[:] = udot
        except (ValueError, TypeError):
            raise ValueError(f"x must have shape ({self.nx},) and udot ({self.n},); got "
                             f"{np.shape(x)} and {np.shape(udot)}") from None
        if np.ndim(x) != 1 or np.ndim(udot) != 1:
            raise ValueError(f"x must have shape ({self.nx},) and udot ({self.n},); got "
                             f"{np.shape(x)} and {np.shape(udot)}")
        self._fns[f](*self._args[f])
        return self._out[f].copy()

    def batch(self, f: str, X, UD) -> np.ndarray:
        """f ("regressor" or "base_regressor") at N samples in one call: X (N x nx),
        UD (N x n) -> (N·n x columns), the samples' rows one after another."""
        X = np.ascontiguousarray(X, dtype=float)
        UD = np.ascontiguousarray(UD, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.nx or UD.shape != (len(X), self.n):
            raise ValueError(f"X must have shape (N, {self.nx}) and UD (N, {self.n}); got "
                             f"{X.shape} and {UD.shape}")
        cols = self.p if f == "regressor" else self.nb
        Y = np.empty((len(X) * self.n, cols))
        self._fns[f + "_batch"](len(X), X.ctypes.data, UD.ctypes.data, Y.ctypes.data)
        return Y

    def regressor(self, x, udot) -> np.ndarray:
        """Y at the state x and accelerations udot: τ = Y π."""
        return self._call("regressor", x, udot)

    def base_regressor(self, x, udot) -> np.ndarray:
        """Y_b, the base parameters' columns: τ = Y_b β."""
        return self._call("base_regressor", x, udot)


def build_module(name: str, source: str, output_dir, dims: tuple, flags=PORTABLE_FLAGS):
    """Compile source into output_dir/name/ (the source beside the library) and load it;
    dims (n, nx, p, nb)."""
    target = prepare_dir(output_dir, name)
    (target / f"{name}_regressor.c").write_text(source)
    # the library's name carries its source's digest: a process that loaded an older
    # build keeps it (dlopen caches by path), and a new source gets a new file
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    built = compile_library({f"{name}_regressor.c": source}, [f"{name}_regressor.c"],
                            f"{name}_regressor_{digest}", flags, target,
                            what=f"regressor {name!r}")
    final = target / built.name
    shutil.move(str(built), str(final))
    shutil.rmtree(built.parent, ignore_errors=True)
    return RegressorModule(final, name, *dims)
