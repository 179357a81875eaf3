"""The frame rate of an animation page in headless Chromium, measured as the issue asks
(requestAnimationFrame intervals while playing) and checked against the frames Chromium
presented (a trace):

    python -m codegen.animation.framerate [EXAMPLE] [--rounds 5] [--frames 120] [--seconds 10]

writes the example's page (the 12-body humanoid by default: 10 s at 60 frames per
second), opens it at 800x600 and plays it ``--rounds`` times, composited in software
(the browser helper's flags) and, beside it, on SwiftShader (Chromium's default). Each
round prints the median and mean interval, the frames presented per second, the frames
dropped and the resolution the page played at; then the median of the rounds' medians.
A timing on a shared machine is noisy: compare the two lines of one run, not runs."""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path


def measure(page, rounds: int, frames: int, gpu_compositing: bool) -> list[dict]:
    from .browser import Browser
    with Browser((800, 600), gpu_compositing=gpu_compositing) as browser:
        state = browser.open(page, "t=0")
        if state["errors"]:
            raise SystemExit(f"the page reported {state['errors']}")
        return [browser.frame_times(frames) for _ in range(rounds)]


def main(argv=None) -> int:
    from .. import __main__ as cli

    ap = argparse.ArgumentParser(prog="python -m codegen.animation.framerate")
    ap.add_argument("example", nargs="?", default="humanoid")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    with tempfile.TemporaryDirectory() as build:
        page = Path(build) / f"{args.example}.html"
        cli.main(["animate", args.example, "--seconds", str(args.seconds), "--fps", "60",
                  "--out", str(page), "--build-dir", build])
        print(f"page {page.stat().st_size / 1e6:.2f} MB")
        for label, gpu in (("software compositing", False), ("SwiftShader compositing", True)):
            runs = measure(page, args.rounds, args.frames, gpu)
            for r in runs:
                print(f"{label:24s} median {r['median_ms']:5.1f} ms  mean {r['mean_ms']:5.1f} ms"
                      f"  presented {r['presented_fps']:5.1f}/s  dropped {r['dropped']:3d}"
                      f"  script {r['script_ms']:.1f} ms  pixel ratio {r['pixel_ratio']}")
            print(f"{label:24s} median of medians "
                  f"{statistics.median(r['median_ms'] for r in runs):.1f} ms, presented "
                  f"{statistics.median(r['presented_fps'] for r in runs):.1f}/s (median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
