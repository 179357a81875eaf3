"""The C linear algebra of templates/ compiled alone, for tests against NumPy."""
import ctypes
from pathlib import Path

import numpy as np

from codegen import Options
from codegen.pipeline.compiler import compile_library
from codegen.abi import RUNTIME_DIR
from codegen.emit.layout import function_data
from codegen.emit.render import environment
from codegen.algorithms.ldlt import ldl_program

HERE = Path(__file__).with_name("c")
_P = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")

#: the unrolled solve is tested on a 7 x 7 pattern with structural zeros:
#: (2, 1) is zero but fills in (from (1, 0) and (2, 0)); row 3 couples to
#: nothing before it; (5, 3) and (6, 0) are zero without fill-in
LDL_N = 7
LDL_ZEROS = {(2, 1), (3, 0), (3, 1), (3, 2), (5, 3), (6, 0)}


def ldl_source() -> str:
    """The unrolled solve rendered by the model template's own function macro."""
    import sympy as sm
    mass = [sm.S.Zero if (i, j) in LDL_ZEROS else sm.Symbol(f"m{i}{j}")
            for i in range(LDL_N) for j in range(i + 1)]
    f = function_data("ldl", "cgtl_ldl", ldl_program(mass, LDL_N, Options().unrolled_limit),
                  "unrolled LDL^T")
    return environment(HERE).get_template("ldl_rendered.c.j2").render(n=LDL_N, f=f)


def build(folder: Path):
    """The harness with the runtime's cg_linalg.c, warnings as errors."""
    files = {"ldl_rendered.c": ldl_source(), "linalg_harness.c": (HERE / "linalg_harness.c").read_text(),
             "cg_linalg.c": (RUNTIME_DIR / "cg_linalg.c").read_text()}
    path = compile_library(files, ["linalg_harness.c", "cg_linalg.c"], "cgt_linalg",
                           ["-O2", "-g0", "-Wall", "-Wextra", "-Werror"], folder,
                           include_dirs=[RUNTIME_DIR], what="the linear algebra harness")
    lib = ctypes.CDLL(str(path))
    i, d = ctypes.c_int, ctypes.c_double
    lib.cg_svd.argtypes = [i, i, _P, _P, _P]
    lib.cg_rank.argtypes = [i, _P, d]
    lib.cg_pinv_apply.argtypes = [i, i, i, _P, _P, _P, _P, _P]
    lib.cg_pinv_transpose_apply.argtypes = [i, i, i, _P, _P, _P, _P, _P]
    lib.cg_damped_pinv_add.argtypes = [i, i, i, _P, _P, _P, d, _P, _P]
    lib.cg_cholesky_solve.argtypes = [i, _P, _P, _P]
    lib.cg_packed_matvec.argtypes = [i, _P, _P, _P]
    lib.cg_all_finite.argtypes = [_P, i]
    lib.cgt_ldl_public.argtypes = [_P, _P]
    lib.cgt_sincos_public.argtypes = [i, _P, _P, _P]
    lib.cgt_sincos2_public.argtypes = [i, _P, _P, _P]
    return lib


def svd(lib, A):
    """(US, V, s, sweeps) of the C SVD."""
    m, n = A.shape
    US = np.ascontiguousarray(A, dtype=float).copy()
    V = np.empty((n, n))
    s = np.empty(n)
    sweeps = lib.cg_svd(m, n, US, V, s)
    return US, V, s, sweeps
