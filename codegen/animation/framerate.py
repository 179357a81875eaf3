"""The frame rate of an animation page in headless Chromium, measured as the issue asks
(requestAnimationFrame intervals while playing) and checked against the frames Chromium
presented (a trace):

    python -m codegen.animation.framerate [EXAMPLE] [--rounds 5] [--frames 120] [--seconds 10]

writes the example's page (the 12-body humanoid by default: 10 s at 60 frames per
second), opens it at 800x600 and plays it ``--rounds`` times, composited in software
(the browser helper's flags) and, beside it, on SwiftShader (Chromium's default). Each
round prints the median and mean interval, the resolution the page played at and the
CPU time Chromium spent per frame (all its processes, Linux), then, from a second,
traced stretch, the frames presented per second and dropped; then the medians over
the rounds. A timing on a shared
machine is noisy: compare the two lines of one run, not runs, and the CPU per frame."""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def cpu_ms(root: int) -> float | None:
    """The CPU time (user + system, ms) used so far by a process and its descendants
    (Chromium's renderer, GPU and helper processes), from /proc; None without it.
    Unlike an interval, CPU per frame hardly changes with the machine's other load."""
    proc = Path("/proc")
    if not (proc / str(root) / "stat").exists():
        return None
    stats = {}
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue                        # not a process, or one that just ended
        stats[int(d.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    ticks, todo, seen = 0, [root], set()
    while todo:
        pid = todo.pop()
        seen.add(pid)
        ticks += stats.get(pid, (0, 0))[1]
        todo += [p for p, (parent, _) in stats.items() if parent == pid and p not in seen]
    return 1000.0 * ticks / os.sysconf("SC_CLK_TCK")


def measure(page, rounds: int, frames: int, gpu_compositing: bool) -> list[dict]:
    from .browser import Browser
    with Browser((800, 600), gpu_compositing=gpu_compositing) as browser:
        state = browser.open(page, "t=0")
        if state["errors"]:
            raise SystemExit(f"the page reported {state['errors']}")
        runs = []
        for _ in range(rounds):                # timed untraced, then counted traced
            before = cpu_ms(browser._proc.pid)
            times = browser.frame_times(frames)
            after = cpu_ms(browser._proc.pid)
            times["cpu_ms"] = None if before is None else (after - before) / frames
            shown = browser.frame_times(frames, presented=True)
            runs.append(times | {k: shown[k] for k in ("presented_fps", "dropped")})
        return runs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m codegen.animation.framerate")
    ap.add_argument("example", nargs="?", default="humanoid")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    with tempfile.TemporaryDirectory() as build:
        page = Path(build) / f"{args.example}.html"
        # the command line's animate, as a user runs it; stdout holds the tables alone
        subprocess.run([sys.executable, "-m", "codegen", "animate", args.example, "--seconds",
                        str(args.seconds), "--fps", "60", "--out", str(page), "--build-dir", build],
                       check=True, stdout=sys.stderr)
        print(f"The {args.example} page: {page.stat().st_size / 1e6:.2f} MB, {args.seconds:g} s "
              f"at 60 frames per second, played at 800x600; {args.rounds} rounds of "
              f"{args.frames} frames each way.")
        print()
        print("| compositing | round | median interval [ms] | mean interval [ms] "
              "| presented [1/s] | dropped | script [ms] | pixel ratio | CPU per frame [ms] |")
        print("|---|---|---|---|---|---|---|---|---|")
        summary = []
        for label, gpu in (("software", False), ("SwiftShader", True)):
            runs = measure(page, args.rounds, args.frames, gpu)
            for k, r in enumerate(runs, 1):
                cpu = "" if r["cpu_ms"] is None else f"{r['cpu_ms']:.1f}"
                print(f"| {label} | {k} | {r['median_ms']:.1f} | {r['mean_ms']:.1f} "
                      f"| {r['presented_fps']:.1f} | {r['dropped']} | {r['script_ms']:.1f} "
                      f"| {r['pixel_ratio']} | {cpu} |")
            cpu = ("" if runs[0]["cpu_ms"] is None
                   else f"{statistics.median(r['cpu_ms'] for r in runs):.1f}")
            summary.append(f"| {label} | {statistics.median(r['median_ms'] for r in runs):.1f} "
                           f"| {statistics.median(r['mean_ms'] for r in runs):.1f} "
                           f"| {statistics.median(r['presented_fps'] for r in runs):.1f} "
                           f"| {cpu} |")
        print()
        print("Medians over the rounds:")
        print()
        print("| compositing | median interval [ms] | mean interval [ms] "
              "| presented [1/s] | CPU per frame [ms] |")
        print("|---|---|---|---|---|")
        print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
