"""The C linear algebra of templates/ compiled alone, for tests against NumPy."""
import ctypes
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from codegen.emit import c_function, template
from codegen.solve import ldl_program

HARNESS = Path(__file__).with_name("c") / "linalg_harness.c"
BUILDER = Path(__import__("codegen").__file__).with_name("_buildext.py")
_P = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")

#: the unrolled solve is tested on a 7 x 7 pattern with structural zeros:
#: (2, 1) is zero but fills in (from (1, 0) and (2, 0)); row 3 couples to
#: nothing before it; (5, 3) and (6, 0) are zero without fill-in
LDL_N = 7
LDL_ZEROS = {(2, 1), (3, 0), (3, 1), (3, 2), (5, 3), (6, 0)}


def ldl_source() -> str:
    import sympy as sm
    mass = [sm.S.Zero if (i, j) in LDL_ZEROS else sm.Symbol(f"m{i}{j}")
            for i in range(LDL_N) for j in range(i + 1)]
    fields = dict(name="cgtl", NAME="CGTL")
    return (f"#define CGTL_NU {LDL_N}\n"
            + c_function("cgtl_ldl", ldl_program(mass, LDL_N), "unrolled LDL^T",
                         "const double *M, double *F")
            + template("ldl.c").substitute(fields))


def build(folder: Path):
    fields = dict(name="cgt", NAME="CGT")
    (folder / "cholesky_rendered.c").write_text(template("cholesky.c").substitute(fields)
                                                + template("packed.c").substitute(fields))
    (folder / "svd_rendered.c").write_text(template("svd.c").substitute(fields))
    (folder / "ldl_rendered.c").write_text(ldl_source())
    (folder / "trig_rendered.c").write_text(template("trig.c").template)
    (folder / "linalg_harness.c").write_text(HARNESS.read_text())
    spec = dict(module="cgt_linalg", sources=["linalg_harness.c"], include_dirs=["."],
                build_dir=".", extra_compile_args=["-O2", "-g0", "-Wall", "-Wextra", "-Werror"])
    (folder / "spec.json").write_text(json.dumps(spec))
    out = subprocess.run([sys.executable, str(BUILDER), "spec.json"], cwd=folder,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    lib = ctypes.CDLL(str(folder / json.loads(out.stdout.splitlines()[-1])["outputs"][0]))
    i, d = ctypes.c_int, ctypes.c_double
    lib.cgt_svd_public.argtypes = [i, i, _P, _P, _P]
    lib.cgt_rank_public.argtypes = [i, _P, d]
    lib.cgt_pinv_public.argtypes = [i, i, i, _P, _P, _P, _P, _P]
    lib.cgt_pinvt_public.argtypes = [i, i, i, _P, _P, _P, _P, _P]
    lib.cgt_damped_public.argtypes = [i, i, i, _P, _P, _P, d, _P, _P]
    lib.cgt_cholesky_public.argtypes = [i, _P, _P, _P]
    lib.cgt_matvec_public.argtypes = [i, _P, _P, _P]
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
    sweeps = lib.cgt_svd_public(m, n, US, V, s)
    return US, V, s, sweeps
