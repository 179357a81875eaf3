"""Command line: ``python -m codegen show <example>``."""
from __future__ import annotations

import argparse
import sys
import time

import sympy as sm

from . import examples
from .appell import GibbsAppellMethod


def _model(spec: str):
    name, _, arg = spec.partition(':')
    if name not in examples.EXAMPLES:
        raise SystemExit(f"unknown example {name!r}; choose from {', '.join(examples.EXAMPLES)}")
    builder = examples.EXAMPLES[name]
    return builder(int(arg)) if arg else builder()


def show(args) -> int:
    """Print S, M and F of a built-in example."""
    model = _model(args.example)
    t0 = time.perf_counter()
    ga = GibbsAppellMethod(**model.kwargs)
    elapsed = time.perf_counter() - t0
    print(f"# {model.name}: {model.doc.strip().splitlines()[0]}")
    print(f"q = {list(ga.q)}\nu = {list(ga.u)}")
    print("kinematics:")
    for qd, e in ga.kindiffdict().items():
        print(f"  {qd} = {e}")
    S = ga.gibbs_appell_function
    print(f"Gibbs-Appell function (u'-free terms dropped):\n  S = {sm.simplify(S) if args.simplify else S}")
    M, F = ga.mass_matrix, ga.forcing
    if args.simplify:
        M, F = sm.simplify(M), sm.simplify(F)
    print("equations of motion M u' = F:")
    for j in range(M.rows):
        print(f"  row {j}: M = {list(M.row(j))}\n         F = {F[j]}")
    print(f"formed in {elapsed:.3f} s")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("show", help="print S and the equations of a built-in example")
    p.add_argument("example", help=f"one of {', '.join(examples.EXAMPLES)}; "
                                   f"'pendulum:5' or 'chain:2' set the size")
    p.add_argument("--no-simplify", dest="simplify", action="store_false",
                   help="print the equations as formed")
    p.set_defaults(func=show)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
