"""Headless Chromium on an animation page, driven over the DevTools protocol (on a pipe,
no extra packages): screenshots, the page's state and its frame times, as the tests
and the documentation's pictures take them.

The page reports through its DOM: ``#state`` (data-ready, data-time, data-objects,
data-frames), ``#errors`` (every JavaScript error), ``#camera`` (the projection and view
matrices, three.js's column-major order) and ``#frametimes`` (after ``#fps=N``).
WebGL runs on SwiftShader (no GPU needed).

The flags are chosen for the frame rate on a machine without a GPU (measured on the
12-body humanoid's page, 800x600, two cores): SwiftShader is reached through ANGLE
(``--use-angle=swiftshader``, which needs ``--enable-unsafe-swiftshader``), and the
page is composited in software (``--disable-gpu-compositing``). Composited on
SwiftShader instead, headless Chromium draws every frame a second time into its output
surface and reads it back to memory: its GPU process then spends about 14 ms of CPU per
frame with nothing drawn on the page, against about 3.5 ms. The frame rate is left to Chromium's own 60 Hz clock: with
``--disable-frame-rate-limit`` requestAnimationFrame fires every few milliseconds but
Chromium presents almost none of those frames, which is why `frame_times` counts the
frames presented (from a trace) beside the intervals.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

__all__ = ["chromium", "Browser", "screenshot"]

_STATE = """(() => {
  const el = id => document.getElementById(id), st = el("state");
  return st && {ready: st.dataset.ready === "1", time: Number(st.dataset.time),
    objects: Number(st.dataset.objects), frames: Number(st.dataset.frames),
    errors: el("errors").textContent.trim(),
    camera: el("camera").textContent ? JSON.parse(el("camera").textContent) : null,
    frametimes: el("frametimes").textContent ? JSON.parse(el("frametimes").textContent) : null};
})()"""


def chromium():
    """The Chromium (or Chrome) executable, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One headless Chromium with one tab of size (width, height) CSS pixels, device
    scale 1; use as a context manager. ``gpu_compositing=True`` composites on SwiftShader
    too (Chromium's default; for comparison)."""

    def __init__(self, size=(800, 600), timeout_s: float = 120.0, gpu_compositing=False):
        exe = chromium()
        if exe is None:
            raise FileNotFoundError("Chromium is not installed (apt-get install chromium)")
        self.size, self.timeout_s, self._id, self._pending = tuple(size), timeout_s, 0, b""
        self._events = []
        # Chromium's helpers may still write the profile as it is removed
        self._profile = tempfile.TemporaryDirectory(prefix="codegen-chromium-",
                                                    ignore_cleanup_errors=True)
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()

        def fds():                          # DevTools reads fd 3 and writes fd 4
            os.dup2(to_r, 3)
            os.dup2(from_w, 4)
        self._proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--use-angle=swiftshader",
             "--enable-unsafe-swiftshader",
             *([] if gpu_compositing else ["--disable-gpu-compositing"]),
             "--hide-scrollbars", "--mute-audio",
             "--no-first-run", f"--user-data-dir={self._profile.name}",
             f"--window-size={size[0]},{size[1]}", "--remote-debugging-pipe", "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self._w, self._r = os.fdopen(to_w, "wb"), os.fdopen(from_r, "rb")
        target = self._send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._send("Target.attachToTarget",
                                   {"targetId": target, "flatten": True})["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride", {
            "width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False})

    def _send(self, method, params=None, session=None):
        self._id += 1
        message = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._w.write(json.dumps(message).encode() + b"\0")
        self._w.flush()
        while True:
            reply = self._receive()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"DevTools {method}: {reply['error']}")
                return reply["result"]

    def _receive(self) -> dict:
        """The next message from Chromium; a trace's events are kept aside."""
        while b"\0" not in self._pending:
            chunk = self._r.read1(1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._pending += chunk
        text, self._pending = self._pending.split(b"\0", 1)
        message = json.loads(text)
        if message.get("method") == "Tracing.dataCollected":
            self._events += message["params"]["value"]
        return message

    def call(self, method, params=None):
        """A DevTools command in the tab."""
        return self._send(method, params, self._session)

    def evaluate(self, expression: str):
        """A JavaScript expression's value in the page (promises awaited)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"in the page: {result['exceptionDetails']}")
        return result["result"].get("value")

    def _wait(self, ok, what: str):
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            state = self.evaluate(_STATE)
            if state and state["errors"]:
                raise RuntimeError(f"the page reported errors: {state['errors']}")
            if state and ok(state):
                return state
            time.sleep(0.05)
        raise TimeoutError(f"the page did not {what} within {self.timeout_s} s")

    def open(self, page, fragment: str = "") -> dict:
        """Load the page at its address + #fragment (e.g. "t=1.5&hud=0"); its state once
        it has drawn."""
        url = Path(page).resolve().as_uri() + (f"#{fragment}" if fragment else "")
        self.call("Page.navigate", {"url": url})
        self._wait(lambda s: s["ready"] and self.evaluate("location.href") == url, "load")
        return self.show(fragment) if fragment else self.state()

    def show(self, fragment: str) -> dict:
        """Change the address's #fragment (the page follows it without reloading); the state
        once the page has drawn a frame since."""
        self.evaluate(f"location.hash = {json.dumps(fragment)}")
        self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        return self.state()

    def state(self) -> dict:
        """{"ready", "time", "objects", "frames", "errors", "camera", "frametimes"}."""
        return self.evaluate(_STATE)

    def screenshot(self, png) -> Path:
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        png = Path(png)
        png.write_bytes(base64.b64decode(data))
        return png

    def frame_times(self, frames: int = 120, presented: bool = False) -> dict:
        """Play in real time and return the page's statistics of ``frames``
        requestAnimationFrame intervals: {"frames", "mean_ms", "median_ms", "p95_ms",
        "script_ms", "pixel_ratio"}. With ``presented``, also from a trace of the same
        stretch the page's frames Chromium presented with the page's drawing
        ("presented"), dropped ("dropped") and presented per second ("presented_fps"):
        a callback whose frame is never shown still counts as an interval. The trace
        costs CPU (several ms a frame on two cores): time without it."""
        self.evaluate('document.getElementById("frametimes").textContent = ""')
        self.evaluate('location.hash = ""')          # a new #fps=N even if N is the same
        if not presented:
            self.show(f"fps={int(frames)}")
            return self._wait(lambda s: s["frametimes"], "report frame times")["frametimes"]
        self._events = []
        self._send("Tracing.start", {"traceConfig": {"includedCategories": ["benchmark"]},
                                     "transferMode": "ReportEvents"})
        try:
            self.show(f"fps={int(frames)}")
            times = self._wait(lambda s: s["frametimes"], "report frame times")["frametimes"]
        finally:
            self._send("Tracing.end")
            while self._receive().get("method") != "Tracing.tracingComplete":
                pass
        return {**times, **_presented(self._events)}

    def close(self):
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        for f in (self._w, self._r):
            try:
                f.close()
            except OSError:
                pass
        self._profile.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _presented(events) -> dict:
    """The animated frames of a trace (cc's PipelineReporter, one per frame Chromium
    produced for the page while its script animated): how many were presented with the
    page's drawing, how many dropped, and the presented ones per second."""
    reports = [e["args"]["frame_reporter"] | {"ts": e["ts"], "pid": e["pid"]} for e in events
               if e.get("name") == "PipelineReporter" and e.get("ph") == "b"
               and e["args"].get("frame_reporter", {}).get("has_main_animation")]
    if not reports:
        return {"presented": 0, "dropped": 0, "presented_fps": 0.0}
    page = Counter((r["pid"], r["layer_tree_host_id"]) for r in reports).most_common(1)[0][0]
    reports = [r for r in reports if (r["pid"], r["layer_tree_host_id"]) == page]
    shown = sorted(r["ts"] for r in reports if r["state"] == "STATE_PRESENTED_ALL")
    span_s = (shown[-1] - shown[0]) / 1e6 if shown else 0.0
    return {"presented": len(shown),
            "dropped": sum(r["state"] == "STATE_DROPPED" for r in reports),
            "presented_fps": (len(shown) - 1) / span_s if span_s > 0 else 0.0}


def screenshot(page, png, fragment: str = "", size=(800, 600)) -> Path:
    """A PNG of the page at its address + #fragment, e.g. "t=1.5&hud=0"."""
    with Browser(size) as browser:
        browser.open(page, fragment)
        return browser.screenshot(png)
