"""The benchmark suite: this project against PyDy, SymPy, SymEngine, Pinocchio, MuJoCo.

    python -m codegen.bench [--quick] [--models pendulum rolling_disk chain four_bar]
                            [--n 1 2 4 8 12 20] [--tools ...] [--out DIR]

Each (tool, model) runs in a fresh interpreter (codegen.bench.rhs), measuring
formulation, generation + compilation, RHS per call from Python (median of
7 repeats after a warm-up, with min and max; ratios pair by pair), operation
count after CSE and RK4 steps per second where a tool has them. Before a
tool's times count, its accelerations at the model's state are compared with
ours (relative 1e-8): a tool that disagrees is reported, not timed; a tool
that is not installed or does not apply is reported as such. The four-bar is
compared against the augmented Lagrange-multiplier solve in NumPy
(codegen.bench.constraints). Writes results.json, results.md and
results.png (log scales versus n) into --out. --quick (n = 1, 2, the rolling
disk, no PyDy, whose Cython build alone takes about 5 s per model) finishes
in under a minute and runs in the test suite.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

from .rhs import ALL_TOOLS, disagreement, run

LABELS = {"ours": "codegen", "fused": "codegen, fused runtime", "pydy": "PyDy (Cython)", "lambdify": "SymPy lambdify",
          "symengine": "SymEngine Lambdify (LLVM)", "pinocchio": "Pinocchio aba",
          "mujoco": "MuJoCo (mj_forward; rollout RK4)"}


def _checked(results: dict) -> dict:
    """Mark every peer whose accelerations differ from ours."""
    ref = results.get("ours", {}).get("xdot")
    if ref is None:
        return results
    for tool, res in results.items():
        if tool == "ours" or "xdot" not in res:
            continue
        res["max_difference"] = float(np.abs(np.array(res["xdot"]) - np.array(ref)).max())
        why = disagreement(res["xdot"], ref)
        if why:
            results[tool] = {"error": f"{why}: not timed"}
    return results


def _fmt(v, scale=1.0, spec="{:.3g}"):
    return spec.format(v * scale) if isinstance(v, (int, float)) else "–"


def markdown(all_results: dict, meta: dict) -> str:
    lines = [f"Machine: {meta['machine']}; command: `{meta['command']}`; {meta['date']}.", ""]
    for spec, results in all_results.items():
        lines += [f"### {spec}", "",
                  "| tool | formulate [s] | generate+compile [s] | RHS per call [µs], median "
                  "[min–max] | ratio to codegen | ops after CSE | RK4 steps/s |",
                  "|---|---|---|---|---|---|---|"]
        ours = results.get("ours", {}).get("call")
        for tool, res in results.items():
            if "error" in res:
                lines.append(f"| {LABELS.get(tool, tool)} | {res['error']} | | | | | |")
                continue
            ratio = f"{res['call'] / ours:.1f}x" if ours and "call" in res else "–"
            spread = (f" [{_fmt(res['call_min'], 1e6)}–{_fmt(res['call_max'], 1e6)}]"
                      if "call_min" in res else "")
            lines.append(f"| {LABELS.get(tool, tool)} | {_fmt(res.get('formulate'))} | "
                         f"{_fmt(res.get('generate'))} | {_fmt(res.get('call'), 1e6)}{spread} | {ratio} | "
                         f"{res.get('ops', '–')} | {_fmt(res.get('rk4_steps_per_s'))} |")
        lines.append("")
    return "\n".join(lines)


def plot(all_results: dict, path: Path) -> bool:
    """results.png: the pendulum's figures versus n, log scales. False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    pend = {int(k.split(":")[1]): v for k, v in all_results.items() if k.startswith("pendulum:")}
    if not pend:
        return False
    ns = sorted(pend)
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    panels = [("call", 1e6, "RHS per call from Python [µs]"),
              ("generate", 1.0, "generation + compilation [s]"),
              ("ops", 1.0, "operations after CSE"),
              ("rk4_steps_per_s", 1.0, "RK4 steps per second")]
    for ax, (key, scale, title) in zip(axes.flat, panels):
        for tool in ALL_TOOLS:
            pts = [(n, pend[n][tool][key] * scale) for n in ns
                   if tool in pend[n] and isinstance(pend[n][tool].get(key), (int, float))]
            if pts:
                ax.plot(*zip(*pts), "o-", label=LABELS[tool])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n links")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("n-link pendulum on a cart")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def four_bar_results() -> dict:
    from . import constraints
    from ..examples import four_bar
    ours, peer = constraints.measure(four_bar())
    return {"ours": {"call": ours}, "numpy_augmented": {"call": peer}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m codegen.bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 1, 2 and the rolling disk, no PyDy")
    ap.add_argument("--models", nargs="+", default=None,
                    choices=["pendulum", "rolling_disk", "chain", "four_bar"])
    ap.add_argument("--n", type=int, nargs="+", default=None)
    ap.add_argument("--tools", nargs="+", default=None, choices=ALL_TOOLS)
    ap.add_argument("--out", default="generated/bench")
    args = ap.parse_args(argv)
    models = args.models or (["pendulum", "rolling_disk"] if args.quick
                             else ["pendulum", "rolling_disk", "chain", "four_bar"])
    ns = args.n or ([1, 2] if args.quick else [1, 2, 4, 8, 12, 20])
    tools = args.tools or [t for t in ALL_TOOLS if not (args.quick and t == "pydy")]
    tools = ["ours"] + [t for t in tools if t != "ours"]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    specs = []
    for m in models:
        if m == "pendulum":
            specs += [f"pendulum:{n}" for n in ns]
        elif m == "chain":
            specs.append("chain:2")
        elif m != "four_bar":
            specs.append(m)
    all_results = {}
    for spec in specs:
        results = {t: run(t, spec) for t in tools}
        all_results[spec] = _checked(results)
        print(f"{spec}: " + ", ".join(f"{t} {r['call'] * 1e6:.2f} us" if "call" in r else f"{t} –"
                                      for t, r in results.items()), file=sys.stderr, flush=True)
    if "four_bar" in models:
        all_results["four_bar (run-time constraints)"] = four_bar_results()
    meta = dict(machine=f"{platform.node()} {platform.machine()}, {platform.python_version()}",
                command="python -m codegen.bench " + " ".join(argv if argv is not None else sys.argv[1:]),
                date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    for res in all_results.values():
        for r in res.values():
            r.pop("xdot", None)
    (out / "results.json").write_text(json.dumps(dict(meta=meta, results=all_results), indent=1))
    md = markdown(all_results, meta)
    (out / "results.md").write_text(md)
    plotted = plot(all_results, out / "results.png")
    print(md)
    print(f"written: {out / 'results.json'}, {out / 'results.md'}"
          + (f", {out / 'results.png'}" if plotted else " (no plot: matplotlib is not installed)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
