"""Constrained RHS: SVD elimination in C against the augmented system in NumPy.

    python -m codegen.bench.constraints

Models: the planar four-bar and slider-crank as trees closed by two
configuration constraints. Ours: the generated rhs (SVD null-space
elimination inside C). Peer: M, F, A and B' from the same formulation
through sympy.lambdify(cse=True), then numpy.linalg.solve of
[[M, A^T], [A, 0]] [u'; -lambda] = [F; B'] per call. Both at one
consistent state (from project), accelerations compared first (1e-10).
"""
from __future__ import annotations

import sys
import tempfile
import timeit

import numpy as np
import sympy as sm

from codegen import GibbsAppellMethod, examples, generate


def measure(model):
    ga = GibbsAppellMethod(**model.kwargs)
    mod = generate(ga, model.name, output_dir=tempfile.mkdtemp())
    vals = dict(model.parameter_values, baumgarte_alpha=0.0, baumgarte_beta=0.0)
    p = np.array([vals[c] for c in mod.constants])
    x = mod.project(np.array(model.initial_state, dtype=float), p)
    out = np.empty(mod.nx)
    ours = min(timeit.repeat(lambda: mod.rhs(0.0, x, p, None, out), number=20000, repeat=5)) / 20000

    states = list(ga.state)
    by_name = {str(c): c for c in model.constants}
    args = [states, [by_name.get(c, sm.Symbol(c)) for c in mod.constants]]
    A, _ = ga.constraint_matrices
    f = sm.lambdify(args, [ga.mass_matrix, ga.forcing, A, ga.constraint_rate,
                           sm.Matrix([ga.kindiffdict()[q.diff()] for q in ga.q])], "numpy", cse=True)
    nu, nc = mod.nu, A.rows

    def numpy_rhs():
        M, F, An, Bd, qd = (np.asarray(a, dtype=float) for a in f(x, p))
        K = np.zeros((nu + nc, nu + nc))
        K[:nu, :nu], K[:nu, nu:], K[nu:, :nu] = M, An.T, An
        sol = np.linalg.solve(K, np.concatenate([F.ravel(), Bd.ravel()]))
        return np.concatenate([qd.ravel(), sol[:nu]])

    ref = numpy_rhs()
    assert np.allclose(mod.rhs(0.0, x, p), ref, rtol=1e-10, atol=1e-10), "accelerations disagree"
    peer = min(timeit.repeat(numpy_rhs, number=2000, repeat=5)) / 2000
    return ours, peer


def main(argv=None) -> int:
    print("| model | ours: SVD elimination in C [µs] | NumPy augmented solve [µs] | ratio |")
    print("|---|---|---|---|")
    for model in (examples.four_bar(), examples.slider_crank()):
        ours, peer = measure(model)
        print(f"| {model.name} | {ours * 1e6:.2f} | {peer * 1e6:.1f} | {peer / ours:.0f}x |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
