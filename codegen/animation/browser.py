"""Headless Chromium on an animation page: screenshots and the page's state, as the
tests and the documentation's pictures take them.

The page reports through its DOM: ``#state`` (data-ready, data-time, data-objects,
data-frames), ``#errors`` (every JavaScript error), ``#camera`` (the projection and view
matrices, three.js's column-major order) and ``#frametimes`` (after ``#fps=N``).
WebGL runs on SwiftShader (no GPU needed).
"""
from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["chromium", "screenshot", "dump_dom", "page_state", "frame_times"]


def chromium():
    """The Chromium (or Chrome) executable, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _run(page, fragment: str, size, budget_ms: int, *action) -> str:
    exe = chromium()
    if exe is None:
        raise FileNotFoundError("Chromium is not installed (apt-get install chromium)")
    url = Path(page).resolve().as_uri() + (f"#{fragment}" if fragment else "")
    with tempfile.TemporaryDirectory(prefix="codegen-chromium-") as profile:
        proc = subprocess.run(
            [exe, "--headless", "--no-sandbox", "--use-angle=swiftshader",
             "--enable-unsafe-swiftshader", "--hide-scrollbars", "--mute-audio",
             "--no-first-run", f"--user-data-dir={profile}",
             f"--window-size={size[0]},{size[1]}", f"--virtual-time-budget={budget_ms}",
             *action, url], capture_output=True, text=True, timeout=180)
    if proc.returncode != 0:
        raise RuntimeError(f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc.stdout


def screenshot(page, png, fragment: str = "", size=(800, 600), budget_ms: int = 3000) -> Path:
    """A PNG of the page at its address + #fragment (e.g. "t=1.5&hud=0")."""
    png = Path(png).resolve()
    _run(page, fragment, size, budget_ms, f"--screenshot={png}")
    if not png.is_file():
        raise RuntimeError(f"chromium wrote no screenshot of {page}")
    return png


def dump_dom(page, fragment: str = "", size=(800, 600), budget_ms: int = 3000) -> str:
    """The page's DOM (as HTML) once it has run for budget_ms of virtual time."""
    return _run(page, fragment, size, budget_ms, "--dump-dom")


def _element(dom: str, tag: str, id_: str):
    m = re.search(rf'<{tag} id="{id_}"([^>]*)>(.*?)</{tag}>', dom, re.S)
    return (m.group(1), html.unescape(m.group(2))) if m else (None, None)


def page_state(dom: str) -> dict:
    """{"ready", "time", "objects", "frames", "errors", "camera", "frametimes"} read from a
    dumped DOM."""
    attrs, _ = _element(dom, "div", "state")
    data = dict(re.findall(r'data-(\w+)="([^"]*)"', attrs or ""))
    _, errors = _element(dom, "pre", "errors")
    _, camera = _element(dom, "pre", "camera")
    _, frametimes = _element(dom, "pre", "frametimes")
    return dict(ready=data.get("ready") == "1", time=float(data.get("time", "nan")),
                objects=int(data.get("objects", -1)), frames=int(data.get("frames", -1)),
                errors=(errors or "").strip(),
                camera=json.loads(camera) if camera else None,
                frametimes=json.loads(frametimes) if frametimes else None)


def _devtools(exe, profile, size):
    """Chromium driven over the DevTools protocol on a pipe (fds 3 and 4): (process,
    send(method, params, session) -> result)."""
    import os
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()

    def fds():                                   # the child's fd 3 reads, fd 4 writes
        os.dup2(to_chrome_r, 3)
        os.dup2(from_chrome_w, 4)
    proc = subprocess.Popen(
        [exe, "--headless", "--no-sandbox", "--use-angle=swiftshader",
         "--enable-unsafe-swiftshader", "--hide-scrollbars", "--mute-audio", "--no-first-run",
         f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
         "--remote-debugging-pipe", "about:blank"],
        preexec_fn=fds, pass_fds=(3, 4), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    os.close(to_chrome_r)
    os.close(from_chrome_w)
    writer, reader = os.fdopen(to_chrome_w, "wb"), os.fdopen(from_chrome_r, "rb")
    counter, pending = [0], b""

    def send(method, params=None, session=None):
        nonlocal pending
        counter[0] += 1
        message = {"id": counter[0], "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        writer.write(json.dumps(message).encode() + b"\0")
        writer.flush()
        while True:
            while b"\0" not in pending:
                chunk = reader.read1(1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                pending += chunk
            text, pending = pending.split(b"\0", 1)
            reply = json.loads(text)
            if reply.get("id") == counter[0]:
                if "error" in reply:
                    raise RuntimeError(f"DevTools {method}: {reply['error']}")
                return reply["result"]
    return proc, send


def frame_times(page, frames: int = 120, size=(800, 600), timeout_s: float = 120.0) -> dict:
    """Play the page in real time (no virtual clock) and return the statistics of
    ``frames`` requestAnimationFrame intervals the page measured itself: {"frames",
    "mean_ms", "median_ms", "p95_ms"}."""
    import time
    exe = chromium()
    if exe is None:
        raise FileNotFoundError("Chromium is not installed (apt-get install chromium)")
    url = Path(page).resolve().as_uri() + f"#fps={int(frames)}"
    with tempfile.TemporaryDirectory(prefix="codegen-chromium-") as profile:
        proc, send = _devtools(exe, profile, size)
        try:
            target = send("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            send("Page.navigate", {"url": url}, session)
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                value = send("Runtime.evaluate", {"expression": "[document.getElementById("
                             "'frametimes')?.textContent || '', document.getElementById("
                             "'errors')?.textContent || '']", "returnByValue": True},
                             session)["result"].get("value") or ["", ""]
                if value[1]:
                    raise RuntimeError(f"the page reported errors: {value[1]}")
                if value[0]:
                    return json.loads(value[0])
                time.sleep(0.2)
            raise TimeoutError(f"no frame times from {page} within {timeout_s} s")
        finally:
            proc.kill()
            proc.wait()
