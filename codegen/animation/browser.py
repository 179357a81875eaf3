"""Headless Chromium on an animation page, driven over the DevTools protocol (on a pipe,
no extra packages): screenshots, the page's state and its frame times, as the tests
and the documentation's pictures take them.

The page reports through its DOM: ``#state`` (data-ready, data-time, data-objects,
data-frames), ``#errors`` (every JavaScript error), ``#camera`` (the projection and view
matrices, three.js's column-major order) and ``#frametimes`` (after ``#fps=N``).
WebGL runs on SwiftShader (no GPU needed).
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
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
    scale 1; use as a context manager."""

    def __init__(self, size=(800, 600), timeout_s: float = 120.0):
        exe = chromium()
        if exe is None:
            raise FileNotFoundError("Chromium is not installed (apt-get install chromium)")
        self.size, self.timeout_s, self._id, self._pending = tuple(size), timeout_s, 0, b""
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
             "--enable-unsafe-swiftshader", "--hide-scrollbars", "--mute-audio",
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
            while b"\0" not in self._pending:
                chunk = self._r.read1(1 << 16)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self._pending += chunk
            text, self._pending = self._pending.split(b"\0", 1)
            reply = json.loads(text)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"DevTools {method}: {reply['error']}")
                return reply["result"]

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

    def frame_times(self, frames: int = 120) -> dict:
        """Play in real time and return the page's statistics of ``frames``
        requestAnimationFrame intervals: {"frames", "mean_ms", "median_ms", "p95_ms"}."""
        self.evaluate('document.getElementById("frametimes").textContent = ""')
        self.show(f"fps={int(frames)}")
        return self._wait(lambda s: s["frametimes"], "report frame times")["frametimes"]

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


def screenshot(page, png, fragment: str = "", size=(800, 600)) -> Path:
    """A PNG of the page at its address + #fragment, e.g. "t=1.5&hud=0"."""
    with Browser(size) as browser:
        browser.open(page, fragment)
        return browser.screenshot(png)
