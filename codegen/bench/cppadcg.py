"""Per call in C: a robot's generated C against Pinocchio + CppADCodeGen's generated C.

    python -m codegen.bench.cppadcg [--robots iiwa ur5 ...] [--shared ../shared/robots]
                                    [--flags base native fast] [--convention local|world]
                                    [--calls N] [--rounds 11]

Pinocchio's own code generation is the strongest CPU peer: an algorithm taped with
CppAD on ``CppAD::cg::CG<double>`` and written out as straight-line C by CppADCodeGen.
Here it is Pinocchio's ``CodeGenABA``, ``CodeGenRNEA``, ``CodeGenCRBA`` and
``CodeGenABADerivatives`` on the robot's URDF (templates/bench/cppadcg_host.cpp.j2;
``--convention local``, the default, tapes ``aba`` and ``crba`` in the LOCAL convention,
plain Pinocchio's default and the fewer operations here: HyQ's CRBA 600 against 1,900;
``world`` is CodeGenABA's and CodeGenCRBA's own), each function's forward-zero C compiled
by the C compiler with the same flags as ours and called from the driver of
codegen.bench.in_c (templates/bench/cppadcg_peer.c.j2 behind peer.h). A timed call packs
the inputs into one vector, as CodeGen*'s evalFunction does, and calls the generated
function; evalFunction's copies of the outputs into Eigen matrices are left out (the
peer at its fastest), while ours is the runtime's API: cg_rhs and cg_inverse_dynamics,
which check their inputs and outputs, and again cg_rhs_unchecked and
cg_inverse_dynamics_unchecked, which do not, as the peer's functions do not (the like for
like pair); cg_mass_matrix_packed leaves M's packed triangle, as CodeGenCRBA's
output is. The driver checks every sample (1e-9) before
it times a pair; the states, the samples and the timing protocol are in_c's. At the base
flags the driver also runs under callgrind (instructions per call: figures that other
work on a shared machine does not disturb).

- The generator program (the host) is robot-independent C++: ``g++ -std=c++17 -O3
  -DNDEBUG`` with the wheel's definitions, never ``-march=native`` (the wheel's libraries
  are not built so, and a mismatched Eigen layout crashes in ``ModelTpl::operator=``).
  It takes about six CPU-minutes and is kept in ``$CODEGEN_CACHE/bench-in-c`` keyed by
  its source, the toolchain and CppAD's and CppADCodeGen's versions.
- Flag rows (``--flags``): ``base`` is in_c.FLAGS, ``native`` adds ``-march=native``,
  ``fast`` adds ``-march=native -ffast-math``; both sides get the row's flags. Plain
  Pinocchio (in_c's C++ peer) is timed in the base row only, as in_c builds it. Our mass
  matrix and ABA derivatives carry an AVX2 copy (cg_math.h's CG_CLONES) that runs at any
  flags where the processor has AVX2: their base row is AVX2 against the peer's SSE2,
  their native row the like-for-like one.
- Build times: the peer's tape + generate (the host) + compile of its four functions;
  ours, export_c (from_urdf's model formed, generated, written) + compile of the
  model's C, both in seconds of wall time on this machine. The runtime's C, which every
  model shares and a build compiles once per flags (as the peer's host and Pinocchio's
  libraries are built once), is timed apart with the driver.

Needs what in_c needs and CppAD's and CppADCodeGen's headers (``pip install cmeel-cppad
cmeel-cppadcodegen``): ``host_program`` raises in_c.Unavailable naming what is missing.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import in_c

__all__ = ["HOST_FLAGS", "ALGORITHMS", "FLAG_ROWS", "host_program", "generate_peer",
           "peer_sources", "build_peer_driver", "measure_robot", "table", "main"]

#: the host's flags (never -march=native: see the module's docstring)
HOST_FLAGS = ("-std=c++17", "-O3", "-DNDEBUG")

#: the driver's keys -> the host's algorithm in each convention (RNEA and the ABA
#: derivatives have one: Pinocchio's CodeGenRNEA and CodeGenABADerivatives)
ALGORITHMS = {"local": {"fd": "aba_local", "id": "rnea", "mass": "crba_local",
                        "jacobian": "aba_derivatives"},
              "world": {"fd": "aba", "id": "rnea", "mass": "crba", "jacobian": "aba_derivatives"}}

#: flag row -> flags added to in_c.FLAGS, for both sides' C
FLAG_ROWS = {"base": (), "native": ("-march=native",),
             "fast": ("-march=native", "-ffast-math")}

#: the host's libraries: Pinocchio's URDF parser and what it needs
HOST_LIBS = ("-lpinocchio_parsers", "-lpinocchio_default", "-lurdfdom_model",
             "-lboost_filesystem", "-lboost_serialization", "-ldl")


def _version(header: Path, macro: str) -> str:
    m = header.is_file() and re.search(rf"#\s*define\s+{macro}\s+\"?([^\s\"]+)",
                                       header.read_text(errors="replace"))
    return m.group(1) if m else "?"


def host_program(tc: in_c.Toolchain) -> tuple:
    """(path, versions) of the compiled host, from the cache or built into it (about six
    CPU-minutes); in_c.Unavailable where CppAD or CppADCodeGen is not installed."""
    from ..pipeline.cache import cache_root
    from ..pipeline.files import write_atomic
    include = Path(tc.libdir).parent / "include"
    if not (include / "cppad" / "cg.hpp").is_file() or not (include / "cppad" /
                                                               "cppad.hpp").is_file():
        raise in_c.Unavailable("CppAD's and CppADCodeGen's headers are not installed (pip "
                               "install cmeel-cppad cmeel-cppadcodegen)")
    versions = (f"{_version(include / 'cppad' / 'configure.hpp', 'CPPAD_PACKAGE_STRING')}"
                f", {_version(include / 'cppad' / 'cg' / 'configure.hpp', 'CPPAD_CG_VERSION')}")
    source = in_c.render_bench("cppadcg_host.cpp.j2")
    key = hashlib.sha256("\n".join((source, tc.identity(), versions, *HOST_FLAGS,
                                    *HOST_LIBS)).encode()).hexdigest()[:16]
    path = cache_root() / "bench-in-c" / f"cppadcg_host-{key}"
    if path.is_file():
        return path, versions
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as build:
        build = Path(build)
        (build / "host.cpp").write_text(source)
        includes = [*tc.includes, str(include / "urdfdom")]
        in_c.run_step(["nice", tc.cxx, *HOST_FLAGS, *(f"-I{d}" for d in includes),
                       *(f"-D{d}" for d in tc.defines), "host.cpp", "-o", "host",
                       f"-L{tc.libdir}", f"-Wl,-rpath,{tc.libdir}", *HOST_LIBS], build,
                      "compiling the CppADCodeGen host", timeout=3600.0)
        write_atomic(path, (build / "host").read_bytes())
    path.chmod(0o755)
    return path, versions


def generate_peer(host: Path, urdf: str, floating: bool, mimic: bool, algorithm: str,
                  folder: Path, timeout: float = 3600.0) -> dict:
    """The host's C for one algorithm written into folder: its JSON line (nq, nv, inputs,
    outputs, files, tape and generate seconds) with "function" (the forward zero's name)
    and "wall" (the host's wall time); RuntimeError where it fails."""
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([str(host), urdf, str(int(floating)), str(int(mimic)), algorithm,
                               str(folder)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"taping {algorithm}: over {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise RuntimeError(f"taping {algorithm} failed: "
                           f"{(proc.stderr.strip().splitlines() or ['?'])[-1][:300]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    function = algorithm.replace("_local", "").replace("aba_derivatives", "partial_aba")
    out.update(function=f"{function}_forward_zero", wall=time.perf_counter() - t0)
    return out


def peer_sources(generated: dict, folder: Path, convention: str) -> list:
    """The peer's C in folder: the wrapper (cppadcg_peer.c, peer.h's functions over the
    generated ones) and the generated files; generated: {driver key: generate_peer's
    answer, its files in folder/<key>}."""
    first = next(iter(generated.values()))
    wrapper = folder / "cppadcg_peer.c"
    wrapper.write_text(in_c.render_bench(
        "cppadcg_peer.c.j2", nq=first["nq"], nv=first["nv"], convention=convention,
        functions={k: g["function"] for k, g in generated.items()}))
    (folder / "peer.h").write_text(in_c.render_bench("peer.h.j2"))
    return [wrapper] + [folder / k / f for k, g in generated.items() for f in g["files"]
                        if f.endswith(".c")]


def build_peer_driver(tc: in_c.Toolchain, model, urdf: str, floating: bool, mimic: bool,
                      exports: list, peer_c: list, build: Path, row: str) -> tuple:
    """(driver, our compile seconds {"model", "runtime"}, the peer's compile seconds) for
    one flag row: the peer's C and ours compiled with in_c.FLAGS + FLAG_ROWS[row], linked
    with in_c's driver."""
    flags = (*in_c.FLAGS, *FLAG_ROWS[row])
    objects = build / f"peer-{row}"
    objects.mkdir()
    t0 = time.perf_counter()
    peer = in_c.compile_c(tc, [objects / f"{k}-{c.name}" for k, c in _copies(peer_c, objects)],
                          [peer_c[0].parent], build, flags)
    t_peer = time.perf_counter() - t0
    t_ours = {}
    exe = in_c.build_program(tc, peer, exports, exports[0].name, exports[-1].name, build, flags,
                             folder=f"ours-{row}", libs=(), seconds=t_ours)
    return in_c.Driver(exe, model, urdf, floating, mimic, flags), t_ours, t_peer


def _copies(sources: list, folder: Path) -> list:
    """(index, source) of each source copied into folder as <index>-<name>, so that each
    flag row's objects are its own."""
    out = []
    for k, c in enumerate(sources):
        (folder / f"{k}-{c.name}").write_bytes(c.read_bytes())
        out.append((k, c))
    return out


def _has_jacobian(export: Path) -> bool:
    """Whether an export's model carries the analytic Jacobian (its descriptor names one)."""
    return (export / f"{export.name}_jacobian.c").is_file() or \
        f"{export.name}_jacobian" in (export / f"{export.name}.c").read_text()


def measure_robot(name: str, shared: Path, rows=("base", "native"), convention: str = "local",
                  calls: int | None = None, rounds: int = 11, jacobian_build: bool = True,
                  tc: in_c.Toolchain | None = None, host: Path | None = None) -> dict:
    """One robot: {"nq", "nv", "build": {ours, ours_jacobian, ours_compile, peer_tape,
    peer_generate, peer_compile} (seconds; the compiles of the base row), "rows": {row:
    run_driver's figures against CppADCodeGen}, "plain": run_driver's figures against plain
    Pinocchio (base row)}, or {"failed": why}. Our export is built with an empty cache."""
    import os
    from ..robots import from_urdf
    from .robots import robot_path
    tc = tc or in_c.toolchain()
    host = host or host_program(tc)[0]
    try:
        urdf, floating, options = robot_path(name, shared)
    except FileNotFoundError as exc:
        return {"failed": str(exc)}
    mimic = options.get("mimic", True)
    out = {"rows": {}, "build": {}}
    with tempfile.TemporaryDirectory(prefix=f"cg-cppadcg-{name}-") as folder:
        folder = Path(folder)
        kept = os.environ.get("CODEGEN_CACHE")
        os.environ["CODEGEN_CACHE"] = str(folder / "cache")   # our build from nothing
        try:
            t0 = time.perf_counter()
            model = from_urdf(urdf, floating_base=floating, **options)
            exports = in_c.export_model(model, f"robot_{name}", folder / "ours")
            out["build"]["ours"] = time.perf_counter() - t0
            if not _has_jacobian(exports[0]) and jacobian_build:
                t0 = time.perf_counter()
                # the Jacobian's export alone: the model's own is timed above
                exports.append(in_c.export_jacobian(model, f"robot_{name}", folder / "ours"))
                out["build"]["ours_jacobian"] = time.perf_counter() - t0
        except RuntimeError as exc:
            return {"failed": f"our build: {exc}"}
        finally:
            if kept is None:
                os.environ.pop("CODEGEN_CACHE")
            else:
                os.environ["CODEGEN_CACHE"] = kept
        algorithms = ALGORITHMS[convention]
        try:
            generated = {k: generate_peer(host, urdf, floating, mimic, a, folder / "peer" / k)
                         for k, a in algorithms.items()}
        except RuntimeError as exc:
            return {"failed": f"the peer: {exc}"}
        out.update(nq=generated["fd"]["nq"], nv=generated["fd"]["nv"], aba=algorithms["fd"])
        out["build"].update(peer_tape={k: g["tape"] for k, g in generated.items()},
                            peer_generate={k: g["generate"] for k, g in generated.items()},
                            peer_host={k: g["wall"] for k, g in generated.items()})
        peer_c = peer_sources(generated, folder / "peer", convention)
        for row in rows:
            try:
                driver, t_ours, t_peer = build_peer_driver(tc, model, urdf, floating, mimic,
                                                           exports, peer_c, folder, row)
            except RuntimeError as exc:
                out["rows"][row] = {"failed": str(exc)}
                continue
            out["build"].setdefault("ours_compile", {})[row] = t_ours["model"]
            out["build"].setdefault("ours_runtime", {})[row] = t_ours["runtime"]
            out["build"].setdefault("peer_compile", {})[row] = t_peer
            # instructions under callgrind at the base flags only: valgrind does not run
            # AVX-512, which -march=native may emit here
            out["rows"][row] = in_c.run_driver(driver, calls=calls, rounds=rounds,
                                               callgrind=row == "base")
        try:
            plain = in_c.build_program(tc, [in_c.peer_object(tc)], exports, exports[0].name,
                                       exports[-1].name, folder, in_c.FLAGS, folder="plain")
            out["plain"] = in_c.run_driver(in_c.Driver(plain, model, urdf, floating, mimic,
                                                       in_c.FLAGS), calls=calls,
                                           rounds=rounds, callgrind=False)
        except RuntimeError as exc:
            out["plain"] = {"failed": str(exc)}
    return out


#: the table's algorithms: (driver key, CppADCodeGen's function, ours)
_PAIRS = (("fd", "ABA", "cg_rhs"), ("fd_unchecked", "ABA", "cg_rhs_unchecked"),
          ("id", "RNEA", "cg_inverse_dynamics"),
          ("id_unchecked", "RNEA", "cg_inverse_dynamics_unchecked"),
          ("mass", "CRBA", "cg_mass_matrix_packed"), ("jacobian", "ABA derivatives", "cg_jacobian"))


def _us(t) -> str:
    return "–" if t is None else f"{t * 1e6:.3g}"


def _pair(run: dict, key: str) -> tuple:
    """(ours, theirs, why not) of one pair of a run."""
    if "failed" in run:
        return None, None, run["failed"][:60]
    times, error = run.get("times", {}), run.get("error", {}).get(key)
    if key in times:
        return times[key], times[key + "_pin"], ""
    if error is None or error != error:
        return None, None, "not built"
    return None, None, f"differ {error:.1e}"


def table(results: dict, rows=("base", "native")) -> str:
    """The Markdown tables of measure_robot's results: per call per flag row, then the
    build times."""
    lines = ["| robot (nv) | flags | plain `aba` | " + " | ".join(
        f"CppADCodeGen {c} | ours (`{o}`) | lead" for _, c, o in _PAIRS) + " |",
        "|---|---|---:|" + "---:|---:|---:|" * len(_PAIRS)]
    notes = []
    for name, r in results.items():
        if "failed" in r:
            lines.append(f"| {name} | | {r['failed'][:120]} |" + " |" * (3 * len(_PAIRS)))
            continue
        for row in rows:
            run = r["rows"].get(row, {"failed": "not run"})
            plain = _pair(r.get("plain", {}), "fd")[1] if row == "base" else None
            cells = [f"{name} ({r['nv']})", row, _us(plain) if row == "base" else "–"]
            for key, _, _ in _PAIRS:
                ours, theirs, why = _pair(run, key)
                lead = f"{theirs / ours:.2f}×" if ours and theirs else why
                cells += [_us(theirs), _us(ours), lead]
            lines.append("| " + " | ".join(cells) + " |")
            if run.get("load") is not None:
                notes.append(f"{name}/{row} {run['load']:.1f}")
    lines += ["", "Build [s]: ours = from_urdf + export_c from an empty cache (+ the "
              "separate Jacobian export where the default leaves it out), then the model's "
              "C compiled; the peer = tape + generate (host, four functions) then its C "
              "compiled; compiles at the first flag row's flags. The runtime's C (the same "
              "for every model, compiled once per flags as the peer's host and Pinocchio's "
              "libraries are built once) is given apart, with the driver, and is not in "
              "the totals.", "",
              "| robot | ours: form + generate | ours: Jacobian export | ours: compile "
              "| ours: runtime + driver | peer: tape | peer: generate | peer: compile "
              "| ours total | peer total | ours / peer |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        if "failed" in r:
            continue
        b = r["build"]
        row = next(iter(b.get("ours_compile", {})), None)
        ours = [b["ours"], b.get("ours_jacobian", 0.0), b.get("ours_compile", {}).get(row, 0.0)]
        peer = [sum(b["peer_tape"].values()), sum(b["peer_generate"].values()),
                b.get("peer_compile", {}).get(row, 0.0)]
        jac = f"{b['ours_jacobian']:.1f}" if "ours_jacobian" in b else "–"
        runtime = b.get("ours_runtime", {}).get(row)
        lines.append(f"| {name} | {ours[0]:.1f} | {jac} | {ours[2]:.1f} | "
                     f"{'–' if runtime is None else f'{runtime:.1f}'} | {peer[0]:.2g} | "
                     f"{peer[1]:.2g} | {peer[2]:.1f} | {sum(ours):.1f} | {sum(peer):.1f} | "
                     f"{sum(ours) / sum(peer):.1f} |")
    lines += _instruction_table(results)
    if notes:
        lines += ["", "1-minute load average as each driver started: " + ", ".join(notes)]
    return "\n".join(lines)


def _instruction_table(results: dict) -> list:
    """Lines of the base row's instructions per call (callgrind; not disturbed by other
    work on the machine, unlike the times), where valgrind ran."""
    counted = {n: r["rows"]["base"]["instructions"] for n, r in results.items()
               if "instructions" in r.get("rows", {}).get("base", {})}
    if not counted:
        return []
    lines = ["", "Instructions per call at the base flags (callgrind, each call function's "
             "inclusive count; ratio = CppADCodeGen / ours):", "",
             "| robot | " + " | ".join(f"{c}: CppADCodeGen / ours (`{o}`) (ratio)"
                                      for _, c, o in _PAIRS) + " |",
             "|---|" + "---:|" * len(_PAIRS)]
    for name, ir in counted.items():
        cells = []
        for key, _, _ in _PAIRS:
            ours, theirs = ir.get(key), ir.get(key + "_pin")
            cells.append(f"{theirs:,.0f} / {ours:,.0f} ({theirs / ours:.2f}×)"
                         if ours and theirs else "–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _avx2() -> str:
    """Whether this processor runs the clones' AVX2 copy, as the run's text says it."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return "this one's flags unknown"
    return "this one does" if "avx2" in flags and "fma" in flags else "this one does not"


def main(argv=None) -> int:
    """Measure the robots and print the tables (Markdown)."""
    from ..robots.catalog import BENCHMARK_ROBOTS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="+", default=["iiwa", "ur5", "hyq", "atlas", "solo12",
                                                    "talos"], choices=list(BENCHMARK_ROBOTS))
    ap.add_argument("--shared", default=str(Path(__file__).resolve().parents[3] / "shared"
                                            / "robots"))
    ap.add_argument("--flags", nargs="+", default=["base", "native"], choices=list(FLAG_ROWS))
    ap.add_argument("--convention", choices=list(ALGORITHMS), default="local")
    ap.add_argument("--calls", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--no-jacobian-build", action="store_true")
    ap.add_argument("--json", help="also write the results here, after each robot")
    args = ap.parse_args(argv)
    try:
        tc = in_c.toolchain()
        host, versions = host_program(tc)
    except (in_c.Unavailable, RuntimeError) as exc:
        print(f"Pinocchio + CppADCodeGen in C: not measured: {exc}. Run by hand: "
              f"pip install cmeel-cppad cmeel-cppadcodegen; python -m codegen.bench.cppadcg")
        return 0
    results = {}
    for name in args.robots:
        results[name] = measure_robot(name, Path(args.shared), args.flags, args.convention,
                                      args.calls, args.rounds, not args.no_jacobian_build,
                                      tc, host)
        print(f"{name}: done", file=sys.stderr, flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1))
    print(f"Per call in C [µs]; lead = CppADCodeGen / ours. {tc.version}; {versions}. "
          f"Flags of both sides' C: base = {' '.join(in_c.FLAGS)}, native = base "
          f"-march=native, fast = native -ffast-math; the host (taping) is built with "
          f"{' '.join(HOST_FLAGS)} and the wheel's definitions. ABA and CRBA are taped in the "
          f"{args.convention.upper()} convention (CodeGenABA and CodeGenCRBA tape WORLD; LOCAL "
          f"is plain Pinocchio's default and the faster). Each pair checked "
          f"on {in_c.SAMPLES} random states (relative 1e-9) before it is timed; medians of "
          f"{args.rounds} rounds, the sides alternating. Plain `aba` is Pinocchio's C++ "
          f"compiled from its headers at the base flags (codegen.bench.in_c). Our mass "
          f"matrix and ABA derivatives are compiled twice (cg_math.h's CG_CLONES, GCC's "
          f"target_clones) and run their AVX2 copy where the processor has it ({_avx2()}): "
          f"in the base row those two then run AVX2 with fused multiply-adds against the "
          f"peer's SSE2, and the native row is their like-for-like instruction set (our "
          f"right-hand side and inverse dynamics are not cloned).\n")
    print(table(results, tuple(args.flags)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
