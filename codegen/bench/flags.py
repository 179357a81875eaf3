"""Compile time and RHS time of the generated C under -O1, -O2, -O3, -O2 -march=native.

    python -m codegen.bench.flags [--n 8 20]

Model: the n-link pendulum on a cart. Formulation and the straight-line
program are done once per n; each flag set then gets a forced build
(generate(force=True)) and a per-call timing of rhs with out=.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
import timeit

import numpy as np

from codegen import GibbsAppellMethod, equations_of, generate
from codegen.examples import n_pendulum_on_cart

FLAG_SETS = {"-O1": ("-O1", "-g0", "-fno-math-errno"),
             "-O2": ("-O2", "-g0", "-fno-math-errno"),
             "-O3": ("-O3", "-g0", "-fno-math-errno"),
             "-O2 -march=native": ("-O2", "-g0", "-fno-math-errno", "-march=native")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[8, 20])
    args = ap.parse_args(argv)
    print("| n | flags | generate + compile [s] | rhs per call [µs] |")
    print("|---|---|---|---|")
    for n in args.n:
        model = n_pendulum_on_cart(n)
        eq = equations_of(GibbsAppellMethod(**model.kwargs))
        p = np.array([model.parameter_values[c] for c in eq.constant_names])
        x = np.linspace(-0.5, 0.5, 2 * (n + 1))
        r, out = np.array([0.3]), np.empty(2 * (n + 1))
        for label, flags in FLAG_SETS.items():
            t0 = time.perf_counter()
            mod = generate(eq, f"flags{n}", output_dir=tempfile.mkdtemp(), flags=flags, force=True)
            built = time.perf_counter() - t0
            call = min(timeit.repeat(lambda: mod.rhs(0.0, x, p, r, out), number=20000,
                                     repeat=5)) / 20000
            print(f"| {n} | {label} | {built:.2f} | {call * 1e6:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
