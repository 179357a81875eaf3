"""docs/performance.md from the benchmark scripts' own output: nothing edited by hand.

    python -m codegen.bench.report [--out docs/performance.md] [--skip-suite]
                                   [--only "3-D rigid-body trees" ...]

Runs each benchmark below in a fresh interpreter, one after another, and
writes its Markdown output under a heading with the command that made it
and the date. The full suite (``python -m codegen.bench``) writes
codegen/bench/latest/results.md; its tables are included as they are, with
the date of that run (``--skip-suite`` keeps the last run instead of
running it again, which takes about 8 minutes). ``--only`` runs the named
sections alone and keeps every other section of the existing file as it is.
"""
from __future__ import annotations

import argparse
import datetime
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: (title, what it shows, module and arguments)
SECTIONS = [
    ("Deriving the equations", "GibbsAppellMethod against KanesMethod on the same model, in "
     "the same run (a peer over the time cap is reported as \"> cap\"); `linearize` rows time "
     "the symbolic linearization of each method.",
     ["codegen.bench.derivation", "--models", "pendulum:5", "pendulum:10", "pendulum:20",
      "bicycle", "bicycle-linearize", "--repeat", "1", "--cap", "300"]),
    ("The drop-in on the documentation's examples", "SymPy's documentation examples for "
     "physics.mechanics and physics.biomechanics and PyDy's examples (codegen.bench."
     "doc_examples), formed by KanesMethod and by GibbsAppellMethod through the documented "
     "call, each tool in its own interpreter: formulate time (the call and the first read of "
     "mass_matrix_full and forcing_full), operation counts of those two written out as "
     "expressions, and the documentation's step `sympy.lambdify(..., cse=True)` of both; "
     "ratios ours/Kane; times are medians of three runs (below 0.1 s they are mostly "
     "noise). The lambdified matrices are compared at two states (1e-9) and PyDy's System "
     "integrates each tool's object before the times count.",
     ["codegen.bench.dropin", "--repeat", "3", "--cap", "600"]),
    ("Compiler flags", "Compile time and RHS per call under each flag set.",
     ["codegen.bench.flags", "--n", "8", "20"]),
    ("Whole simulations", "RK4 in C against MuJoCo's rollout, DOPRI5 in C against solve_ivp.",
     ["codegen.bench.simulate", "--n", "1", "4", "8", "12", "--rounds", "3"]),
    ("Events and feedback", "Events located in C on the dense output against the run without "
     "them, and controller=K against the open loop; both against solve_ivp with the event or "
     "the controller in Python on the same compiled RHS. Medians of runs in alternation, and "
     "the best times (on a shared machine the least disturbed runs).",
     ["codegen.bench.hybrid", "--n", "4", "--rounds", "25"]),
    ("Batches", "Many runs and many RHS evaluations in one call, over both cores.",
     ["codegen.bench.batch", "--n", "4"]),
    ("Stiff models", "Time against precision: our implicit methods, SciPy's and numbalsoda's "
     "LSODA (from C through rhs_address).",
     ["codegen.bench.stiff"]),
    ("Run-time constraints", "The SVD elimination in C against the augmented "
     "Lagrange-multiplier system in NumPy.",
     ["codegen.bench.constraints"]),
    ("3-D rigid-body trees", "spatial_chain(n) and the humanoid against pinocchio.aba on "
     "the equal model of revolute joints (accelerations checked first), and KanesMethod's "
     "forming time under a cap.",
     ["codegen.bench.spatial", "--models", "chain:2", "chain:4", "chain:8", "chain:12",
      "humanoid", "--cap", "600", "--kane-cap", "120"]),
    ("Large models", "The n-link pendulum on a cart as SymPy writes it (absolute angles): build "
     "time by stage, RHS per call against pinocchio.aba and the Jacobian against "
     "computeABADerivatives on the same chain (results checked equal first), KanesMethod "
     "and PyDy under a cap.",
     ["codegen.bench.scale", "--n", "20", "50", "100", "200", "--jacobian-n", "20", "100"]),
    ("Real robots from their URDF", "codegen.robots.from_urdf on the rigid-body dynamics "
     "benchmark's robots and example-robot-data's, against Pinocchio's aba, rnea, crba and "
     "computeABADerivatives on the same files (each result compared, 1e-9, before its times "
     "count), per call from Python and in C (our standalone export and Pinocchio's C++ in one "
     "program), with the build times; GRiD's published figures of Pinocchio with CppADCodeGen "
     "beside, from another machine.",
     ["codegen.bench.robots", "--symbolic"]),
    ("Against Pinocchio's generated code", "Pinocchio + CppADCodeGen (CodeGenABA, "
     "CodeGenRNEA, CodeGenCRBA, CodeGenABADerivatives: the algorithms taped on CppAD and "
     "written out as C) against our standalone export, both sides' C compiled with the same "
     "flags and called from one C driver (codegen.bench.in_c's), each pair checked on "
     "random states (1e-9) before it is timed; our forward and inverse dynamics both as "
     "the checked API (cg_rhs, cg_inverse_dynamics) and without the checks, as the peer's "
     "functions are (cg_rhs_unchecked, cg_inverse_dynamics_unchecked: the like-for-like "
     "pair); plain Pinocchio's `aba` beside; the build times of both sides. The peer's "
     "generator takes about six CPU-minutes to compile the first time (cached).",
     ["codegen.bench.cppadcg", "--flags", "base", "native", "fast"]),
    ("The Jacobian", "The analytic Jacobian per call against Pinocchio's ABA derivatives and "
     "finite differences of our own RHS.",
     ["codegen.bench.jacobian", "--n", "1", "4", "12", "20"]),
    ("Optimal control with CasADi", "The same multiple-shooting NLPs (RK4, IPOPT from "
     "CasADi's wheel, the same options and initial guess) with the dynamics as our CasADi "
     "external (one call a node, and batched: one call for all nodes), as CasADi SX of "
     "KanesMethod's equations (called in the MX graph, expanded, and CasADi's own C of it) "
     "and, for the iiwa, as adam-robotics' SX model of the same URDF; each with IPOPT's "
     "exact Hessian and with limited-memory. Each optimum is compared with the SX route's.",
     ["codegen.bench.ocp", "--repeats", "3", "--cap", "300"]),
    ("Identification: the regressor", "The inertial parameters' regressor Y (tau = Y pi, "
     "Pinocchio's 10 parameters a body) per call against pinocchio.computeJointTorqueRegressor, "
     "from Python and from one C driver, each state checked equal (1e-10; Pinocchio reads the URDF with the quarter turns the exact model takes) before it is timed; "
     "the exact base parameters' count and time.",
     ["codegen.bench.identification", "--in-c"]),
    ("Singular positions: the IFToMM mechanisms", "The N four-bar (A02) through its flat "
     "position and Bricard's mechanism (A04): precision reached and CPU time for 10 s, the SVD "
     "elimination with DOPRI5 against the index-3 augmented Lagrangian (ali3p).",
     ["codegen.bench.iftomm", "--n", "1", "5", "10"]),
    ("Sweeps on Dask", "Runs per second on a LocalCluster against simulate_batch on the same "
     "cores.",
     ["codegen.bench.sweep"]),
    ("Flexible bodies", "The spacecraft and the spin-up against Exudyn's reduced-order "
     "floating frame (ObjectFFRFreducedOrder) on the same node data, results checked equal "
     "first; RHS per call from each tool's own RK4 loop; the 2 x 8-mode spacecraft's build "
     "time.",
     ["codegen.bench.flexible", "--rounds", "5"]),
    ("The animation page's frame rate", "The 12-body humanoid's page (10 s at 60 frames "
     "per second) playing in headless Chromium on software WebGL (SwiftShader; no GPU): "
     "requestAnimationFrame intervals, frames Chromium presented and dropped (from a "
     "trace), and Chromium's CPU time per frame, composited in software (the project's "
     "browser flags) and on SwiftShader (Chromium's default) side by side.",
     ["codegen.animation.framerate", "--rounds", "3"]),
]


def _run(args: list) -> str:
    proc = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          cwd=ROOT)
    if proc.returncode:
        return f"(failed with exit code {proc.returncode}: {proc.stderr.strip()[-500:]})"
    return proc.stdout.strip()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "performance.md"))
    ap.add_argument("--skip-suite", action="store_true")
    ap.add_argument("--only", nargs="+", metavar="TITLE",
                    help="rerun these sections, keep the others from --out")
    args = ap.parse_args(argv)
    if args.only:
        return _update(Path(args.out), args.only)
    if not args.skip_suite:
        _run(["codegen.bench", "--out", "codegen/bench/latest"])
    suite = (ROOT / "codegen" / "bench" / "latest" / "results.md").read_text().strip()
    parts = [
        "# Performance",
        "",
        "Generated by `python -m codegen.bench.report` from the benchmark scripts' own "
        "output; do not edit by hand. Machine: "
        f"{platform.machine()}, Python {platform.python_version()}, "
        f"2 cores shared with other work (repeated runs vary by up to ±30 %).",
        "",
        "## The benchmark suite",
        "",
        "`python -m codegen.bench --out codegen/bench/latest` (every peer in its own "
        "interpreter; its accelerations are checked against ours before its times count):",
        "",
        suite.replace("# ", "### ", 1) if suite.startswith("# ") else suite,
    ]
    for title, what, command in SECTIONS:
        parts += _section(title, what, command)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(parts) + "\n")
    return 0


def _section(title: str, what: str, command: list) -> list:
    """A section's lines: its heading, what it shows, the command, the date and its output."""
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    output = _run(command)
    print(f"{title}: done", file=sys.stderr, flush=True)
    return ["", f"## {title}", "", what, "", "```", "python -m " + " ".join(command),
            "```", "", f"Run {date}:", "", output]


def _update(out: Path, only: list) -> int:
    """Rerun the sections titled in only; the file's other sections stay, in SECTIONS' order."""
    known = {title for title, _, _ in SECTIONS}
    unknown = [t for t in only if t not in known]
    if unknown:
        raise SystemExit(f"no section titled {unknown}; the sections: {sorted(known)}")
    text = out.read_text()
    head, *chunks = text.split("\n## ")
    kept = {c.split("\n", 1)[0]: "## " + c.rstrip("\n") for c in chunks}
    parts = [head.rstrip("\n"), ""]
    for title, what, command in SECTIONS:
        if title in only:
            parts += _section(title, what, command)[1:]
        elif title in kept:
            parts.append(kept[title])
        parts.append("")
    for title, chunk in kept.items():          # the suite's own section and any others
        if title not in known and chunk not in parts:
            parts.insert(2, chunk + "\n")
    out.write_text("\n".join(parts).rstrip("\n") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
