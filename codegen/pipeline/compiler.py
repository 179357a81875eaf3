"""The C compiler: which one, its identity for the cache key, host flags, one compile.

The compiler is Python's configured CC, called directly (no build system): a
model is one or a few translation units built into a shared library.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

from ..errors import BuildError
from .options import PORTABLE_FLAGS

__all__ = ["c_compiler", "compiler_identity", "version_line", "host_cpu", "host_flags",
           "shared_suffix", "compile_library"]


@lru_cache(maxsize=None)
def c_compiler() -> str:
    """The command of Python's configured C compiler (CC), without its flags."""
    return (sysconfig.get_config_var("CC") or "cc").split()[0]


def _require_compiler() -> str:
    cc = c_compiler()
    if shutil.which(cc) is None:
        raise BuildError(
            f"no C compiler: looked for {cc!r} (Python's configured CC) on the PATH. Install one "
            f"(Debian/Ubuntu: apt-get install build-essential; Fedora: dnf install gcc; macOS: "
            f"xcode-select --install) or set the CC environment variable of the build to a "
            f"compiler's path")
    return cc


@lru_cache(maxsize=None)
def host_flags() -> tuple:
    """PORTABLE_FLAGS plus -march=native where the compiler takes it, for a
    module built for, and loaded on, this machine: FMA and the vector units of
    this CPU take 15-20 % off the pendulum's RHS. Opt-in
    (``generate(..., flags=host_flags())``): contracted multiply-adds change
    the last bits, which decides the branch a mechanism takes through a
    singular configuration. The cache key carries this CPU's identity."""
    try:
        out = subprocess.run([c_compiler(), "-march=native", "-x", "c", "-c", "-o", os.devnull,
                              "-"], input="int codegen_probe;\n", capture_output=True, text=True,
                             timeout=60)
        native = out.returncode == 0
    except (OSError, subprocess.SubprocessError):
        native = False
    return PORTABLE_FLAGS + (("-march=native",) if native else ())


@lru_cache(maxsize=None)
def host_cpu() -> str:
    """What -march=native compiles for: the CPU's model and feature flags."""
    try:
        text = Path("/proc/cpuinfo").read_text()
        fields = [line.split(":", 1)[1].strip() for line in text.splitlines()
                  if line.startswith(("model name", "flags"))][:2]
        return hashlib.sha256(" ".join(fields).encode()).hexdigest()[:16]
    except OSError:
        import platform
        return f"{platform.machine()} {platform.processor()}"


@lru_cache(maxsize=None)
def compiler_identity() -> str:
    """The first line of ``cc --version``: a compiler upgrade is another build."""
    return version_line(c_compiler())


def version_line(cmd: str) -> str:
    """The first line of ``cmd --version`` (cmd itself where it prints none)."""
    try:
        out = subprocess.run([cmd, "--version"], capture_output=True, text=True, timeout=30)
        return out.stdout.splitlines()[0] if out.stdout else cmd
    except (OSError, subprocess.SubprocessError):
        return f"{cmd} (not runnable)"


def shared_suffix() -> str:
    """The file suffix of a shared library on this platform."""
    return ".dll" if sys.platform == "win32" else ".so"


def compile_library(files: dict, c_sources: list, library: str, flags, target: Path,
                    include_dirs=(), what: str = "model", failed_dir: Path | None = None,
                    timeout: float | None = None, on_timeout=None, file_flags=None) -> Path:
    """Build C sources as a shared library in a private folder under target.

    files: name -> text written into the folder first. Returns the library's
    path inside that folder (the caller moves it and removes the folder with
    ``shutil.rmtree(path.parent)``). A failed build raises BuildError with the
    compiler's output and leaves the sources in failed_dir (default
    ``target/failed-build``), which outlives the call. timeout: seconds the compiles
    may take, after which on_timeout() is called (it raises; codegen.progress.Stages).
    file_flags: c source -> flags after flags for its compile (codegen.emit.layout.PART_FLAGS).
    """
    cc = _require_compiler()
    build = Path(tempfile.mkdtemp(dir=target, prefix=".build-"))
    try:
        for fname, text in files.items():
            (build / fname).write_text(text)
        out = library + shared_suffix()
        include = [f"-I{d}" for d in include_dirs]
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)

        def run(cmd):
            left = None if deadline is None else max(deadline - time.monotonic(), 0.01)
            try:
                return subprocess.run(cmd, capture_output=True, text=True, cwd=build,
                                      timeout=left)
            except subprocess.TimeoutExpired:
                return None
        if len(c_sources) == 1:
            cmd = [cc, *flags, "-shared", "-fPIC", *include, "-o", out, *c_sources, "-lm"]
            proc = run(cmd)
        else:               # the files side by side, one per core, then one link
            objects = [f"{Path(c).stem}.o" for c in c_sources]
            commands = [[cc, *flags, *(file_flags or {}).get(c, ()), "-fPIC", *include, "-c",
                         "-o", o, c] for c, o in zip(c_sources, objects)]
            with ThreadPoolExecutor(max_workers=min(len(commands), os.cpu_count() or 1)) as pool:
                results = list(pool.map(run, commands))
            failed_jobs = [r for r in results if r is None or r.returncode != 0]
            if failed_jobs:
                proc = failed_jobs[0]
                cmd = None if proc is None else proc.args
            else:
                cmd = [cc, *flags, "-shared", "-o", out, *objects, "-lm"]
                proc = run(cmd)
        if proc is None:                                # out of time
            if on_timeout is not None:
                on_timeout()
            raise BuildError(f"compiling {what} took longer than {timeout:.1f} s")
        if proc.returncode != 0:
            failed = failed_dir or target / "failed-build"
            shutil.rmtree(failed, ignore_errors=True)
            failed.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(build), str(failed))
            log = (proc.stdout + proc.stderr).strip()
            raise BuildError(f"compiling {what} failed ({' '.join(cmd)}); sources in {failed}\n"
                             f"{log}")
        return build / out
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise
