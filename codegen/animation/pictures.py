"""The documentation's pictures, taken from the real pages in headless Chromium:

    python -m codegen.animation.pictures docs/images

writes whipple_bicycle.png and humanoid.png (and their pages beside them, not kept)
from `python -m codegen animate`'s pages: the model compiled with its animation
outputs, simulated in C, drawn by three.js, captured at a moment (#t=)."""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

#: example -> (simulated seconds, the moment pictured)
PICTURES = {"whipple_bicycle": (3.0, 1.2), "humanoid": (3.0, 0.8)}


def main(argv=None) -> int:
    from .browser import Browser

    argv = sys.argv[1:] if argv is None else argv
    folder = Path(argv[0] if argv else "docs/images")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as build, Browser((800, 500)) as browser:
        for name, (seconds, moment) in PICTURES.items():
            page = Path(build) / f"{name}.html"
            subprocess.run([sys.executable, "-m", "codegen", "animate", name, "--seconds",
                            str(seconds), "--out", str(page), "--build-dir", build], check=True)
            state = browser.open(page, f"t={moment}")
            if state["errors"]:
                raise SystemExit(f"{name}: the page reported {state['errors']}")
            print(f"picture      {browser.screenshot(folder / f'{name}.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
