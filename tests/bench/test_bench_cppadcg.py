"""The CppADCodeGen peer of the in-C benchmark (codegen.bench.cppadcg), without its host.

The host (Pinocchio's CodeGen* taped on CppAD, about six CPU-minutes to compile) is never
built here: run ``pip install cmeel-cppad cmeel-cppadcodegen`` and ``python -m
codegen.bench.cppadcg --robots ur5`` by hand. What is tested: the sources render, the
peer's C wrapper compiles against peer.h and maps CppADCodeGen's outputs onto the driver's
layout (run on stand-in generated functions), the tables' format, and the message where
CppAD is missing."""
import shutil
import subprocess
from contextlib import redirect_stdout
from io import StringIO

import pytest

from codegen.bench import cppadcg, in_c


def test_the_host_source_names_each_codegen_class():
    source = in_c.render_bench("cppadcg_host.cpp.j2")
    for cls in ("CodeGenABA", "CodeGenRNEA", "CodeGenCRBA", "CodeGenABADerivatives"):
        assert f"pinocchio::{cls}<double>" in source
    assert "Convention::LOCAL" in source


def test_the_wrapper_maps_the_generated_outputs(tmp_path):
    """peer.h's functions over stand-ins: ddq = x's last block, M unpacked symmetric from
    the upper triangle, [ddq_dq | ddq_dv] interleaved by rows."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    generated = {k: {"nq": 2, "nv": 2, "function": f"{k}_fz", "files": []}
                 for k in ("fd", "id", "mass", "jacobian")}
    wrapper = cppadcg.peer_sources(generated, tmp_path, "local")[0]
    assert "LOCAL convention" in wrapper.read_text()
    (tmp_path / "main.c").write_text(r"""
#include <stdio.h>
#include "peer.h"
struct LangCAtomicFun { void *libModel; void (*forward)(void); void (*reverse)(void); };
#define FN(n) void n(double const *const *in, double *const *out, struct LangCAtomicFun f)
FN(fd_fz) { int i; for (i = 0; i < 2; i++) out[0][i] = in[0][4 + i]; (void)f; }
FN(id_fz) { int i; for (i = 0; i < 2; i++) out[0][i] = in[0][2 + i]; (void)f; }
FN(mass_fz) { out[0][0] = in[0][0], out[0][1] = 7, out[0][2] = in[0][1]; (void)f; }
FN(jacobian_fz) { int i; for (i = 0; i < 12; i++) out[0][i] = i; (void)f; }
int main(void)
{
    char err[64];
    peer *w = peer_load("", 0, 1, err, sizeof err);
    double q[2] = {1, 2}, v[2] = {3, 4}, tau[2] = {5, 6}, o[8];
    int i;
    peer_aba(w, q, v, tau), peer_ddq(w, o), printf("%g %g\n", o[0], o[1]);
    peer_rnea(w, q, v, tau), peer_tau(w, o), printf("%g %g\n", o[0], o[1]);
    peer_crba(w, q), peer_mass(w, o), printf("%g %g %g %g\n", o[0], o[1], o[2], o[3]);
    peer_aba_derivatives(w, q, v, tau), peer_derivatives(w, o);
    for (i = 0; i < 8; i++) printf("%g ", o[i]);
    printf("\n%d %d\n", peer_nq(w), peer_nv(w));
    peer_free(w);
    return 0;
}
""")
    exe = tmp_path / "t"
    subprocess.run([cc, "-std=c99", "-Wall", "-Werror", "-I", str(tmp_path), str(wrapper),
                    str(tmp_path / "main.c"), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    assert out.split("\n") == ["5 6", "3 4", "1 7 7 2", "0 1 4 5 2 3 6 7 ", "2 2", ""]


def test_the_table_gives_each_pair_its_lead_or_why_not():
    run = {"times": {"fd": 1e-7, "fd_pin": 3e-7, "id": 1e-7, "id_pin": 1.5e-7},
           "error": {"fd": 1e-15, "id": 1e-15, "mass": 0.1, "jacobian": float("nan")},
           "load": 1.0}
    counted = dict(run, instructions={"fd": 1000.0, "fd_pin": 1500.0})
    results = {"ur5": {"nv": 6, "rows": {"base": counted, "native": run},
                       "plain": {"times": {"fd": 1e-7, "fd_pin": 1.4e-6}, "error": {}},
                       "build": {"ours": 3.0, "ours_compile": {"base": 1.0},
                                 "ours_runtime": {"base": 2.5},
                                 "peer_tape": {"fd": 0.2}, "peer_generate": {"fd": 0.1},
                                 "peer_compile": {"base": 0.7}}},
               "talos": {"failed": "the peer: taping aba failed"}}
    text = cppadcg.table(results)
    base = next(line for line in text.splitlines() if line.startswith("| ur5 (6) | base"))
    assert "| 1.4 | 0.3 | 0.1 | 3.00× | – | – | not built | 0.15 | 0.1 | 1.50× |" in base
    assert "differ 1.0e-01" in base and "not built" in base
    assert "| talos | | the peer: taping aba failed |" in text
    # the runtime's compile (2.5 s) is given and left out of the totals
    assert "| ur5 | 3.0 | – | 1.0 | 2.5 | 0.2 | 0.1 | 0.7 | 4.0 | 1.0 | 4.0 |" in text
    assert "| ur5 | 1,500 / 1,000 (1.50×) | – | – | – | – | – |" in text


def test_missing_cppad_is_named(tmp_path, monkeypatch):
    (tmp_path / "lib").mkdir()
    tc = in_c.Toolchain("cc", "c++", (), (), str(tmp_path / "lib"), "none")
    with pytest.raises(in_c.Unavailable, match="pip install cmeel-cppad cmeel-cppadcodegen"):
        cppadcg.host_program(tc)

    def unavailable(tc):
        raise in_c.Unavailable("CppAD's headers are not installed")
    monkeypatch.setattr(cppadcg, "host_program", unavailable)
    monkeypatch.setattr(in_c, "toolchain", lambda: tc)
    buf = StringIO()
    with redirect_stdout(buf):
        assert cppadcg.main(["--robots", "ur5"]) == 0
    assert "not measured" in buf.getvalue() and "python -m codegen.bench.cppadcg" in \
        buf.getvalue()
