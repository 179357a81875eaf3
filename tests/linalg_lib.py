"""The C linear algebra of templates/ compiled alone, for tests against NumPy."""
import ctypes
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from codegen.emit import template

HARNESS = Path(__file__).with_name("c") / "linalg_harness.c"
BUILDER = Path(__import__("codegen").__file__).with_name("_buildext.py")
_P = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")


def build(folder: Path):
    fields = dict(name="cgt", NAME="CGT")
    (folder / "cholesky_rendered.c").write_text(template("cholesky.c").substitute(fields))
    (folder / "svd_rendered.c").write_text(template("svd.c").substitute(fields))
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
    return lib


def svd(lib, A):
    """(US, V, s, sweeps) of the C SVD."""
    m, n = A.shape
    US = np.ascontiguousarray(A, dtype=float).copy()
    V = np.empty((n, n))
    s = np.empty(n)
    sweeps = lib.cgt_svd_public(m, n, US, V, s)
    return US, V, s, sweeps
