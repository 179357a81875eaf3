"""Sources -> built extension: atomic writes, content-hash cache, compile, import.

Layout of ``<output_dir>/<name>/``::

    <name>.c, <name>.h      the standalone C (only <math.h>, <stddef.h> needed)
    <name>_<key>.<suffix>   that C built as a shared library (the name carries
                            the key, so a changed model loads in the same process)
    manifest.json           names, sizes, key, operation count: what load() needs

The shared library is driven by codegen._runtime (Cython, compiled once with
the package) through C function pointers: a new model costs one C compile.

The key hashes the equations (names, q', M, F), the build flags and the tool
versions (Python, Cython, the C compiler, codegen). ``generate`` with a key
already built imports the extension without any further symbolic work.
Every file is written to a temporary name and moved into place with
os.replace, and each build happens in a private temporary folder, so two
processes building the same model at once both succeed and a reader never
sees half a file.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from functools import lru_cache
from pathlib import Path

import sympy as sm

from . import __version__
from .emit import TEMPLATE_DIR, Sources, emit
from .eom import EquationsOfMotion, equations_of
from .errors import BuildError
from .kernel import build_programs, c_identifier_error
from .runtime import CompiledModel

__all__ = ["generate", "load", "PORTABLE_FLAGS", "host_flags", "equations_key",
           "neutral_equations", "compile_library"]

#: -O2: see the README for the flag measurements. -fno-math-errno lets sqrt
#: compile to one instruction, -g0 drops the debug info Python's own CFLAGS ask
#: for (it doubles compile time); no -ffast-math, which would break the
#: isfinite checks of the generated code. These are the flags of code meant
#: for other machines (an FMU's binary).
PORTABLE_FLAGS = ("-O2", "-g0", "-fno-math-errno")


@lru_cache(maxsize=None)
def _compiler() -> str:
    return (sysconfig.get_config_var("CC") or "cc").split()[0]


@lru_cache(maxsize=None)
def host_flags() -> tuple:
    """PORTABLE_FLAGS plus -march=native where the compiler takes it, for a
    module built for, and loaded on, this machine: FMA and the vector units of
    this CPU take 15-20 % off the pendulum's RHS (see the README). Opt-in
    (``generate(..., flags=host_flags())``): contracted multiply-adds change
    the last bits, which decides the branch a mechanism takes through a
    singular configuration (tests/test_constraints.py shows one that then
    fails under solve_ivp). The cache key carries this CPU's identity."""
    try:
        out = subprocess.run([_compiler(), "-march=native", "-x", "c", "-c", "-o", os.devnull, "-"],
                             input="int codegen_probe;\n", capture_output=True, text=True,
                             timeout=60)
        native = out.returncode == 0
    except (OSError, subprocess.SubprocessError):
        native = False
    return PORTABLE_FLAGS + (("-march=native",) if native else ())


@lru_cache(maxsize=None)
def _host_cpu() -> str:
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
def _toolchain() -> str:
    import Cython
    cc = _compiler()
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
        cc_version = out.stdout.splitlines()[0] if out.stdout else cc
    except (OSError, subprocess.SubprocessError):
        cc_version = f"{cc} (not runnable)"
    # the templates and the modules that write C are part of the generated code:
    # a change to either is a new key
    here = Path(__file__).resolve().parent
    writers = [here / m for m in ("appell.py", "eom.py", "kernel.py", "recursive.py", "solve.py",
                                  "emit.py")]
    templates = hashlib.sha256()
    for path in sorted(TEMPLATE_DIR.iterdir()) + writers:
        if path.suffix in (".c", ".h", ".py"):
            templates.update(path.name.encode() + b"\0" + path.read_bytes())
    return (f"python {sys.version.split()[0]}; cython {Cython.__version__}; {cc_version}; "
            f"codegen {__version__}; templates {templates.hexdigest()[:16]}")


def _digest(expr, memo: dict) -> bytes:
    """A content digest of an expression tree, each distinct subtree hashed once."""
    d = memo.get(expr)
    if d is None:
        if expr.args:
            token = type(expr).__name__.encode() + b"(" + b",".join(
                _digest(a, memo) for a in expr.args) + b")"
        else:
            token = f"{type(expr).__name__}:{expr}".encode()
        d = memo[expr] = hashlib.blake2b(token, digest_size=16).digest()
    return d


def equations_key(eom: EquationsOfMotion, name: str, flags) -> str:
    """Content hash of the equations, the options and the tool versions.

    The equations are hashed structurally (str() of a large model costs
    seconds, this walk a fraction of that).
    """
    h = hashlib.sha256()
    host = _host_cpu() if any(f.startswith(("-march=native", "-mtune=native")) for f in flags) else ""
    for part in (name, _toolchain(), " ".join(flags), host, repr(eom.state_names),
                 repr(eom.constant_names), repr(eom.specified_names), str(eom.symmetric)):
        h.update(part.encode())
        h.update(b"\0")
    memo = {}
    c = eom.constraints
    extra = [] if c is None else [list(c.A), list(c.B), list(c.Bdot), list(c.S), c.f, list(c.fq)]
    for group in [eom.q, eom.u, eom.constants, eom.specifieds, eom.qdot, list(eom.M),
                  list(eom.F)] + extra:
        for e in group:
            h.update(_digest(sm.sympify(e), memo))
        h.update(b"\0")
    for item in eom.intermediates:
        h.update(_digest(item.symbol, memo) + _digest(item.expr, memo) + item.name.encode())
    return h.hexdigest()


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)          # mkstemp makes 0600; these are ordinary sources
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _check_name(name: str) -> None:
    why = c_identifier_error(name)
    if why:
        raise ValueError(f"model name: {why}")


def _prepare_dir(output_dir, name: str) -> Path:
    target = Path(output_dir).resolve() / name
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OSError(f"cannot create the output folder {target}: {exc}") from exc
    if not os.access(target, os.W_OK | os.X_OK):
        raise PermissionError(f"the output folder {target} is not writable")
    return target


def checked_flags(flags) -> tuple:
    """flags as a tuple of strings (PORTABLE_FLAGS for None); a single string
    is refused, since it would be taken letter by letter."""
    if flags is None:
        return tuple(PORTABLE_FLAGS)
    if isinstance(flags, (str, bytes)) or not all(isinstance(f, str) for f in flags):
        raise TypeError(f"flags must be a sequence of strings (one flag each), got {flags!r}")
    return tuple(flags)


def compile_library(files: dict, c_sources: list, module: str, flags, target: Path,
                    include_dirs=(), what: str = "model") -> Path:
    """Build C sources as a shared library in a private folder under target.

    files: name -> text written into the folder first. Returns the library's
    path inside that folder (the caller moves it and removes the folder with
    ``shutil.rmtree(path.parent)``). A failed build raises BuildError with the
    compiler's output and leaves the sources in ``target/failed-build``.
    """
    build = Path(tempfile.mkdtemp(dir=target, prefix=".build-"))
    try:
        for fname, text in files.items():
            (build / fname).write_text(text)
        spec = dict(module=module, sources=list(c_sources),
                    include_dirs=["."] + [str(d) for d in include_dirs],
                    build_dir=".", extra_compile_args=list(flags))
        (build / "spec.json").write_text(json.dumps(spec))
        # run by path, not with -m: importing the codegen package would import SymPy
        proc = subprocess.run([sys.executable, str(Path(__file__).with_name("_buildext.py")),
                               "spec.json"], capture_output=True, text=True, cwd=build)
        if proc.returncode != 0:
            failed = target / "failed-build"
            shutil.rmtree(failed, ignore_errors=True)
            os.replace(build, failed)
            log = (proc.stdout + proc.stderr).strip()
            raise BuildError(f"compiling {what} failed; sources in {failed}\n{log}")
        return build / json.loads(proc.stdout.strip().splitlines()[-1])["outputs"][0]
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise


def _compile(sources: Sources, target: Path, module: str, flags) -> Path:
    """The model's C as a shared library in target."""
    built = compile_library(sources.files, [f"{sources.name}.c"], module, flags, target,
                            what=f"model {sources.name!r}")
    try:
        final = target / built.name
        os.replace(built, final)
        return final
    finally:
        shutil.rmtree(built.parent, ignore_errors=True)


def load(path) -> CompiledModel:
    """Load an already generated model from its folder (no SymPy work)."""
    folder = Path(path)
    if folder.is_file():
        folder = folder.parent
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"{folder} holds no generated model (no manifest.json)") from None
    lib_path = folder / manifest["extension"]
    if not lib_path.is_file():
        raise FileNotFoundError(f"the library {lib_path} of model {manifest['name']!r} is missing")
    return CompiledModel(ctypes.CDLL(str(lib_path)), manifest, folder)


def _cached(target: Path, key: str):
    try:
        manifest = json.loads((target / "manifest.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    if manifest.get("key") != key or not (target / manifest["extension"]).is_file():
        return None
    return load(target)


def neutral_equations(eom, name: str, constants=None, specifieds=None) -> EquationsOfMotion:
    """The checked neutral equations of eom for a model called name (no file is touched)."""
    _check_name(name)
    eq = eom if isinstance(eom, EquationsOfMotion) else equations_of(eom, constants, specifieds)
    if not eq.u:
        raise ValueError(f"model {name!r} has no speeds: there is nothing to integrate")
    for kind, names in (("state", eq.state_names), ("constant", eq.constant_names),
                        ("specified", eq.specified_names)):
        for n in names:
            if not n.isascii() or not n.isprintable() or any(ch in n for ch in '"\\'):
                raise ValueError(f"{kind} name {n!r} cannot be a C string or an FMI variable "
                                 f"name (printable ASCII without quotes or backslashes)")
    return eq


def generate(eom, name: str, constants=None, specifieds=None, output_dir="generated",
             flags=None, force: bool = False, rank_rtol: float = 1e-9) -> CompiledModel:
    """Generate, compile and import the dynamics of a formed model.

    Parameters
    ----------
    eom : GibbsAppellMethod, KanesMethod (formed) or EquationsOfMotion
    name : str
        A C identifier; names the files, the C functions and the folder.
    constants : list of Symbols, optional
        The order of p. Default: the equations' free symbols sorted by name.
    specifieds : list of functions of time, optional
        The order of r. Default: the functions of time that are not states
        (and their derivatives, named ``<f>_d``), sorted by name.
    output_dir : path
        Parent folder; the model goes to ``output_dir/name/``.
    flags : sequence of str, optional
        C compiler flags (part of the cache key). Default: ``PORTABLE_FLAGS``;
        ``host_flags()`` adds ``-march=native`` where the compiler takes it.
    force : bool
        Rebuild even if the cache has this model.
    rank_rtol : float
        Run-time constraints only: singular values of A below rank_rtol times
        the largest count as zero (the rank decision of the SVD elimination).

    Returns
    -------
    CompiledModel
        With ``rhs``, ``mass_matrix``, ``forcing``, ``states``, ``constants``,
        ``specifieds``, ``source_dir`` (see :class:`codegen.runtime.CompiledModel`).
    """
    flags = checked_flags(flags)
    t0 = time.perf_counter()
    eq = neutral_equations(eom, name, constants, specifieds)
    target = _prepare_dir(output_dir, name)
    key = equations_key(eq, name, flags + (f"rank_rtol={rank_rtol!r}",))
    if not force:
        hit = _cached(target, key)
        if hit is not None:
            return hit
    sources = emit(build_programs(eq), eq, name, key, rank_rtol=rank_rtol)
    t_gen = time.perf_counter() - t0
    module = f"{name}_{key[:16]}"
    ext_path = _compile(sources, target, module, flags)
    t_build = time.perf_counter() - t0 - t_gen
    for fname, text in sources.files.items():
        _atomic_write(target / fname, text)
    manifest = dict(name=name, module=module, extension=ext_path.name, key=key,
                    states=eq.state_names, constants=eq.constant_names,
                    specifieds=eq.specified_names, nq=eq.nq, nu=eq.nu,
                    symmetric=eq.symmetric, operation_count=sources.operation_count,
                    solver=sources.solver, mass_failure=sources.mass_failure,
                    nc=sources.nc, nh=sources.nh, rank_rtol=rank_rtol,
                    flags=list(flags), toolchain=_toolchain(), origin=eq.origin,
                    seconds_generate=round(t_gen, 3), seconds_compile=round(t_build, 3))
    _atomic_write(target / "manifest.json", json.dumps(manifest, indent=1) + "\n")
    return load(target)
