"""Per call in C: a robot's generated C against Pinocchio's C++, in one process.

From Python, a call's fixed cost (argument checks, array conversions) hides the
kernel. Here both sides are called from one C program, the same way: the
standalone export of the model (``codegen.export_c``: ``cg_rhs``,
``cg_inverse_dynamics``, ``cg_mass_matrix_packed``, ``cg_jacobian``) and Pinocchio's
``aba``, ``rnea``, ``crba`` and ``computeABADerivatives`` on the same URDF, loaded
by Pinocchio's own C++ parser (``pinocchio::urdf::buildModel``, a
``JointModelFreeFlyer`` root for floating-base robots), each behind one function
call (templates/bench: ``driver.c.j2``, ``peer.h.j2``, ``pinocchio_peer.cpp.j2``).

- Both sides are compiled with the same flags (FLAGS: ``-O3 -DNDEBUG
  -fno-math-errno``, no ``-march=native``): ours by the C compiler, Pinocchio's
  algorithms from its headers by the C++ compiler, not the wheel's prebuilt
  instantiations, whose flags are not ours to state. Pinocchio's part does not
  depend on the robot; it is compiled once per flags and kept in the cache
  (``$CODEGEN_CACHE/bench-in-c``): about two minutes of CPU the first time.
- Python draws the states (``draw_states``, the first one the state
  ``codegen.bench.robots`` times from Python) and writes both sides' inputs: our x,
  Pinocchio's q, v, tau (``RobotModel.to_pinocchio``) and the map from Pinocchio's
  tangent to our coordinates (``tangent``) that the Jacobian's comparison needs.
- The driver compares every sample before it times anything (relative 1e-9, as
  from Python); a pair that differs is reported with its difference, never
  timed. Times: medians of ROUNDS rounds of CALLS calls a side, the sides
  alternating which goes first, the samples in turn.

Needs a C++ compiler, Pinocchio's headers and libraries (the ``pin`` wheel's
cmeel.prefix), Eigen's headers (``pip install cmeel-eigen``, or Debian's
libeigen3-dev) and urdfdom's headers (``pip install cmeel-urdfdom-headers``):
``toolchain()`` raises Unavailable naming what is missing.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["FLAGS", "PINOCCHIO_LIBS", "Unavailable", "Toolchain", "toolchain", "run_step",
           "render_bench", "cached_cxx_object", "peer_object", "draw_states", "tangent", "compile_c",
           "build_program", "export_model", "export_jacobian", "Driver", "build_driver",
           "run_driver", "measure"]

#: the flags of both sides' compiles
FLAGS = ("-O3", "-DNDEBUG", "-fno-math-errno")

#: samples checked and cycled through in the timed calls
SAMPLES = 8


class Unavailable(RuntimeError):
    """The in-C benchmark cannot be built here: the message names what is missing."""


@dataclass(frozen=True)
class Toolchain:
    """The compilers and Pinocchio's build settings the driver is built with."""
    cc: str
    cxx: str
    includes: tuple          # -I folders: Pinocchio, Boost, Eigen, urdfdom's headers
    defines: tuple           # Pinocchio's interface definitions (its CMake targets')
    libdir: str
    version: str             # Pinocchio's, and both compilers' first lines

    def identity(self) -> str:
        return "\n".join((self.cc, self.cxx, *self.includes, *self.defines, self.version))


def _prefix() -> Path | None:
    """The cmeel.prefix folder that holds Pinocchio's headers (the ``pin`` wheel's)."""
    for p in sys.path:
        root = Path(p or ".") / "cmeel.prefix"
        if (root / "include" / "pinocchio").is_dir():
            return root
    return None


def _found(candidates, relative: str) -> Path | None:
    return next((Path(c) for c in candidates if (Path(c) / relative).is_file()), None)


def _definitions(targets: Path) -> tuple:
    """The compile definitions of Pinocchio's header and URDF-parser CMake targets, less
    the one that would call the wheel's prebuilt instantiations."""
    text = targets.read_text()
    out = []
    for target in ("pinocchio_headers", "pinocchio_parsers"):
        m = re.search(r"set_target_properties\(pinocchio::%s PROPERTIES(.*?)\n\)" % target,
                      text, re.S)
        d = m and re.search(r'INTERFACE_COMPILE_DEFINITIONS "([^"]*)"', m.group(1))
        if d:
            out += [x for x in d.group(1).split(";")
                    if x and x != "PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION" and "$" not in x]
    return tuple(dict.fromkeys(out))


def toolchain() -> Toolchain:
    """What the driver is built with, or Unavailable naming what is missing."""
    from ..pipeline.compiler import c_compiler, version_line
    cc = c_compiler()
    cxx = (os.environ.get("CXX") or sysconfig.get_config_var("CXX") or "c++").split()[0]
    for what, cmd in (("C", cc), ("C++", cxx)):
        if shutil.which(cmd) is None:
            raise Unavailable(f"no {what} compiler ({cmd!r} is not on the PATH; Debian: "
                              f"apt-get install g++)")
    prefix = _prefix()
    if prefix is None:
        raise Unavailable("Pinocchio's C++ headers are not installed (pip install pin)")
    targets = prefix / "lib" / "cmake" / "pinocchio" / "pinocchioTargets.cmake"
    if not targets.is_file():
        raise Unavailable(f"Pinocchio's CMake targets are not here ({targets})")
    eigen = _found([prefix / "include" / "eigen3", "/usr/include/eigen3"], "Eigen/Core")
    if eigen is None:
        raise Unavailable("Eigen's headers are not installed (pip install cmeel-eigen, or "
                          "apt-get install libeigen3-dev)")
    urdf = _found([prefix / "include" / "urdfdom_headers", prefix / "include", "/usr/include"],
                  "urdf_model/model.h")
    if urdf is None:
        raise Unavailable("urdfdom's headers are not installed (pip install "
                          "cmeel-urdfdom-headers)")
    import pinocchio
    return Toolchain(cc, cxx, tuple(dict.fromkeys(map(str, (prefix / "include", eigen, urdf)))),
                     _definitions(targets), str(prefix / "lib"),
                     f"pinocchio {pinocchio.__version__}; {version_line(cc)}; {version_line(cxx)}")


def run_step(cmd, cwd: Path, what: str, timeout: float = 1800.0) -> None:
    """cmd run in cwd, or RuntimeError naming what failed with the first error line."""
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{what}: over {timeout:.0f} s") from None
    if proc.returncode != 0:
        log = (proc.stdout + proc.stderr).strip().splitlines()
        first = next((line for line in log if "error" in line), log[0] if log else "failed")
        raise RuntimeError(f"{what} failed: {first.strip()[:300]}")


def render_bench(template: str, **data) -> str:
    """templates/bench/<template> rendered with data."""
    from ..emit.render import render
    return render(f"bench/{template}", **data)


def cached_cxx_object(tc: Toolchain, flags, source: str, header: str, header_name: str,
                      stem: str, what: str) -> Path:
    """The C++ source (with its header beside it as header_name) compiled with flags into
    an object in the cache ($CODEGEN_CACHE/bench-in-c/<stem>-<key>.o, keyed by both texts,
    the toolchain and the flags), or the one already there."""
    from ..pipeline.cache import cache_root
    from ..pipeline.files import write_atomic
    key = hashlib.sha256("\n".join((source, header, tc.identity(), *flags)).encode())
    path = cache_root() / "bench-in-c" / f"{stem}-{key.hexdigest()[:16]}.o"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as build:
        build = Path(build)
        (build / header_name).write_text(header)
        (build / f"{stem}.cpp").write_text(source)
        run_step([tc.cxx, "-std=c++17", *flags, "-fPIC", *(f"-I{d}" for d in tc.includes),
                  *(f"-D{d}" for d in tc.defines), "-c", f"{stem}.cpp", "-o", "peer.o"],
                 build, what)
        write_atomic(path, (build / "peer.o").read_bytes())
    return path


def peer_object(tc: Toolchain, flags=FLAGS) -> Path:
    """Pinocchio's side compiled with flags, from the cache or compiled into it."""
    return cached_cxx_object(tc, flags, render_bench("pinocchio_peer.cpp.j2"),
                             render_bench("peer.h.j2"), "peer.h", "pinocchio_peer",
                             "compiling Pinocchio's side")


def tangent(x, floating: bool, nq: int, nv: int) -> np.ndarray:
    """T (nq x nv): d (our q) / d (Pinocchio's tangent) at x, so that J_q T is d u'/d q
    as Pinocchio's ddq_dq has it. The free-flyer's quaternion (x, y, z, w at q[3:7]) moves
    by q ⊗ exp(δ/2), its position by R δ; the joints' angles are their own tangent."""
    if not floating:
        return np.eye(nq, nv)
    qx, qy, qz, qw = x[3:7]
    skew = np.array([[0, -qz, qy], [qz, 0, -qx], [-qy, qx, 0]])
    vec = np.array([qx, qy, qz])
    T = np.zeros((nq, nv))
    T[:3, :3] = (qw * qw - vec @ vec) * np.eye(3) + 2 * np.outer(vec, vec) + 2 * qw * skew
    T[3:6, 3:6] = 0.5 * (qw * np.eye(3) + skew)
    T[6, 3:6] = -0.5 * vec
    T[7:, 6:] = np.eye(nq - 7)
    return T


def draw_states(model, floating: bool, n: int, seed: int = 7):
    """n random (x, r, u') of the model: angles in ±1.5, a unit quaternion for a floating
    base, speeds, inputs and accelerations in ±1 (the first is the state
    codegen.bench.robots times from Python)."""
    rng = np.random.default_rng(seed)
    nq, nu = len(model.q_ind), len(model.u_ind)
    out = []
    for _ in range(n):
        x = np.array(model.initial_state, dtype=float)
        x[:nq] = rng.uniform(-1.5, 1.5, nq)
        if floating:
            quat = rng.normal(size=4)
            x[3:7] = quat / np.linalg.norm(quat)
        x[nq:] = rng.uniform(-1.0, 1.0, nu)
        r = rng.uniform(-1.0, 1.0, len(model.specifieds))
        out.append((x, r, rng.uniform(-1.0, 1.0, nu)))
    return out


def _samples_text(model, floating: bool, p, n: int, perturb: float) -> str:
    """The driver's SAMPLES file (see driver.c.j2); perturb is added to our coordinates
    only (to check that the comparison catches a difference)."""
    nq, nu = len(model.q_ind), len(model.u_ind)
    rows = []
    for x, r, ud in draw_states(model, floating, n):
        q, v = model.to_pinocchio(x)
        tau = np.concatenate([np.zeros(6) if floating else [], r])
        ours = x.copy()
        ours[:nq] += perturb
        rows.append((ours, r, ud, q, v, tau, tangent(x, floating, nq, nu).ravel()))
    head = [n, nq + nu, len(p), len(model.specifieds), nu, len(rows[0][3])]
    lines = [" ".join(str(int(k)) for k in head), " ".join(repr(float(a)) for a in p)]
    lines += [" ".join(repr(float(a)) for part in row for a in part) for row in rows]
    return "\n".join(lines) + "\n"


#: what the driver links with Pinocchio's side (its URDF parser)
PINOCCHIO_LIBS = ("-lpinocchio_parsers", "-lurdfdom_model")


def compile_c(tc: Toolchain, sources: list, include: list, build: Path, flags) -> list:
    """The objects of C sources, compiled with flags beside them, in parallel."""
    def compile_one(c: Path) -> Path:
        obj = c.with_suffix(".o")
        run_step([tc.cc, *flags, *(f"-I{d}" for d in include), "-c", str(c), "-o", str(obj)],
                 build, f"compiling {c.name}")
        return obj
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return list(pool.map(compile_one, sources))


def build_program(tc: Toolchain, peer: list, exports: list, name: str, jacobian_name: str,
                  build: Path, flags, folder: str = "bench", libs=PINOCCHIO_LIBS,
                  seconds: dict | None = None) -> Path:
    """The driver program in build/folder: the exports' C (one runtime) and the driver at
    flags, linked with the peer's objects (peer.h's functions) and libs. With seconds (a
    dict), the wall times of the two compiles into it: "model" (the models' own C) and
    "runtime" (the runtime's C, the same for every model, and the driver)."""
    bench = build / folder
    bench.mkdir()
    (bench / "peer.h").write_text(render_bench("peer.h.j2"))
    (bench / "driver.c").write_text(render_bench("driver.c.j2", name=name,
                                                 jacobian_name=jacobian_name))
    model, runtime = [], [bench / "driver.c"]
    for k, export in enumerate(exports):
        for c in sorted(export.glob("*.c")):
            if c.name != "cg_fused.c" and (k == 0 or not c.name.startswith("cg_")):
                # objects of their own per program, so that programs of other flags can share
                # the export folder
                target = bench / f"{export.name}-{c.name}"
                shutil.copyfile(c, target)
                (runtime if c.name.startswith("cg_") else model).append(target)
    objects = []
    for part, sources in (("model", model), ("runtime", runtime)):
        t0 = time.perf_counter()
        objects += compile_c(tc, sources, [*exports, bench], build, flags)
        if seconds is not None:
            seconds[part] = time.perf_counter() - t0
    exe = bench / f"{name}_bench"
    run_step([tc.cxx, *flags, *map(str, objects), *map(str, peer), f"-L{tc.libdir}",
              f"-Wl,-rpath,{tc.libdir}", *libs, "-lm", "-o", str(exe)], build,
             "linking the driver")
    return exe


def export_model(model, name: str, folder: Path, separate_jacobian: bool = False) -> list:
    """The standalone exports a driver is built from: model exported with the default
    options and, with separate_jacobian=True, again with jacobian=True (see build_driver)."""
    return [_export(model, name, folder, None)] + (
        [export_jacobian(model, name, folder)] if separate_jacobian else [])


def export_jacobian(model, name: str, folder: Path) -> Path:
    """model exported again with jacobian=True, as {name}_jacobian (for a model whose
    default build leaves its Jacobian out)."""
    return _export(model, f"{name}_jacobian", folder, True)


def _export(model, name: str, folder: Path, jacobian) -> Path:
    from .. import GibbsAppellMethod
    from ..export.standalone import export_c
    return export_c(GibbsAppellMethod(**model.kwargs), name, folder, constants=model.constants,
                    specifieds=model.specifieds, driver=False, jacobian=jacobian)


#: the driver's timed functions, as callgrind names them: (ours, Pinocchio's) per key
_CALLS = re.compile(r"^\s*([\d,]+) .*?:(ours|pin)_(fd|id|mass|jacobian|fd_unchecked|id_unchecked) \[",
                    re.M)


def _instructions(args: list, out: dict, samples: int, calls: int, timeout: float) -> dict:
    """{key: Ir per call, key_pin: ...}: the driver run once under callgrind (calls
    calls a side, one round), each call function's inclusive instructions over its
    calls (the samples' checks, a warm-up and the round), for the pairs that agree."""
    with tempfile.TemporaryDirectory(prefix="cg-callgrind-") as folder:
        data = Path(folder) / "callgrind.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={data}",
                        *args[:-2], str(calls), "1"], capture_output=True, timeout=timeout,
                       check=True)
        text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100",
                               str(data)], capture_output=True, text=True, timeout=timeout,
                              check=True).stdout
    n = samples + 1 + calls
    return {key + ("_pin" if side == "pin" else ""): int(ir.replace(",", "")) / n
            for ir, side, key in _CALLS.findall(text) if key in out["times"]}


@dataclass(frozen=True)
class Driver:
    """A robot's driver program, built (build_driver) and ready to run (run_driver)."""
    exe: Path
    model: object            # the codegen.robots.RobotModel it was built from
    urdf: str
    floating: bool
    mimic: bool
    flags: tuple


def build_driver(model, urdf: str, floating: bool, mimic: bool, name: str, folder: Path,
                 separate_jacobian: bool = False, flags=FLAGS, tc: Toolchain | None = None,
                 peer: Path | None = None) -> Driver:
    """The driver of a robot in folder: model (a codegen.robots.RobotModel of urdf)
    exported with the default options and, with separate_jacobian=True, again with
    jacobian=True for ``cg_jacobian`` (as codegen.bench.robots rebuilds a model the
    default options left without its Jacobian; else the Jacobian is timed where the
    default build has it), linked with Pinocchio's side. Raises Unavailable where the
    toolchain is missing, RuntimeError (BuildError among them) where it does not build."""
    tc = tc or toolchain()
    peer = peer or peer_object(tc, flags)
    exports = export_model(model, name, Path(folder), separate_jacobian)
    exe = build_program(tc, [peer], exports, name, exports[-1].name, Path(folder), flags)
    return Driver(exe, model, urdf, floating, mimic, tuple(flags))


def run_driver(driver: Driver, calls: int | None = None, rounds: int = 11,
               samples: int = SAMPLES, perturb: float = 0.0, timeout: float = 600.0,
               callgrind: bool = True) -> dict:
    """The driver's figures: {"nq", "nv", "samples", "error": {fd, id, mass, jacobian},
    "times": {fd, fd_pin, ...} (seconds per call, only for the pairs that agree),
    "flags", "load" (the 1-minute load average as the driver started), and with
    callgrind=True, where valgrind is installed, "instructions": {fd, fd_pin, ...} per
    call}, or {"failed": why}. A difference is Infinity where a result is NaN, and the
    Jacobian's is NaN where it was not built. calls: per round and side (default 5000,
    1000 past 20 speeds); perturb: added to our coordinates only (every pair must then
    differ)."""
    model, floating = driver.model, driver.floating
    calls = calls or (1000 if len(model.u_ind) > 20 else 5000)
    with tempfile.TemporaryDirectory(prefix="cg-in-c-") as folder:
        data = Path(folder) / "samples.txt"
        p = [model.parameter_values[c] for c in model.constants]
        data.write_text(_samples_text(model, floating, p, samples, perturb))
        load = os.getloadavg()[0]
        args = [str(driver.exe), driver.urdf, str(int(floating)), str(int(driver.mimic)),
                str(data), str(calls), str(rounds)]
        try:
            proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"failed": f"the driver ran over {timeout:.0f} s"}
        if proc.returncode != 0:
            return {"failed": (proc.stderr.strip().splitlines() or ["the driver failed"])[-1]}
        out = json.loads(proc.stdout)
        if callgrind and shutil.which("valgrind") and shutil.which("callgrind_annotate"):
            try:
                out["instructions"] = _instructions(args, out, samples, 200, timeout)
            except (subprocess.SubprocessError, OSError) as exc:
                out["instructions_failed"] = str(exc)[:200]
    out["error"].setdefault("jacobian", float("nan"))      # NaN: not built, as from Python
    out.update(flags=" ".join(driver.flags), load=load)
    return out


def measure(model, urdf: str, floating: bool, mimic: bool = True, name: str = "robot",
            separate_jacobian: bool = False, peer: Path | None = None, **run) -> dict:
    """One robot in C: build_driver in a temporary folder, then run_driver(**run); a
    driver that does not build is {"failed": why}. Raises Unavailable where the toolchain
    is missing."""
    with tempfile.TemporaryDirectory(prefix="cg-in-c-") as folder:
        try:
            driver = build_driver(model, urdf, floating, mimic, name, Path(folder),
                                  separate_jacobian, peer=peer)
        except Unavailable:
            raise
        except RuntimeError as exc:
            return {"failed": str(exc)}
        return run_driver(driver, **run)
