"""Sources -> built library: atomic writes, a verified content-hash cache, one compile.

Layout of ``<output_dir>/<name>/``::

    <name>.c, <name>.h      the model's C (it needs the runtime's headers,
                            templates/runtime, to compile)
    <name>_<key>.so         that C built as a shared library (the name carries
                            the key, so a changed model loads in the same process)
    manifest.json           names, key, options, and the SHA-256 of every file

The library holds only the model: its functions and its descriptor
(``<name>_model()``). The runtime that solves and integrates it is compiled
once, with the package (codegen._runtime), so a new model costs one small
compile, a direct call of the C compiler.

The key hashes the emitted sources, the options (codegen.Options), the
runtime's ABI version and the compiler's identity. A cache hit still forms
and emits the model (the key is of what would be compiled), but compiles
nothing. Before a library is loaded its hash is checked against the
manifest: a damaged or truncated file is rebuilt by ``generate`` and named
by ``load``, never handed to the dynamic loader. Every file is written to a
temporary name and moved into place with os.replace, and each build happens
in a private temporary folder, so two processes building the same model at
once both succeed and a reader never sees half a file.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from functools import lru_cache
from pathlib import Path

from . import __version__
from .abi import ABI_VERSION
from .emit import RUNTIME_DIR, Sources, emit
from .eom import DEFAULTS, EquationsOfMotion, equations_of
from .errors import BuildError, CacheError
from .plan import build_programs
from .program import c_identifier_error
from .options import PORTABLE_FLAGS, Options
from .progress import Stages

__all__ = ["generate", "load", "PORTABLE_FLAGS", "host_flags", "neutral_equations",
           "compile_library", "CacheError"]


@lru_cache(maxsize=None)
def _compiler() -> str:
    return (sysconfig.get_config_var("CC") or "cc").split()[0]


def _require_compiler() -> str:
    cc = _compiler()
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
def _compiler_identity() -> str:
    cc = _compiler()
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
        return out.stdout.splitlines()[0] if out.stdout else cc
    except (OSError, subprocess.SubprocessError):
        return f"{cc} (not runnable)"


def sources_key(sources: Sources, options: Options) -> str:
    """SHA-256 of the emitted sources, the options, the runtime ABI and the compiler."""
    h = hashlib.sha256()
    native = any(f.startswith(("-march=native", "-mtune=native")) for f in options.flags)
    for part in (f"abi {ABI_VERSION}", _compiler_identity(), options.key(),
                 _host_cpu() if native else ""):
        h.update(part.encode() + b"\0")
    for fname in sorted(sources.files):
        h.update(fname.encode() + b"\0" + sources.files[fname].encode() + b"\0")
    return h.hexdigest()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _atomic_write(path: Path, data) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
        os.chmod(tmp, 0o644)          # mkstemp makes 0600; these are ordinary files
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


#: files shipped beside a model (the runtime, the FMI headers): a model may not take their names
_SHIPPED = frozenset({p.stem for p in RUNTIME_DIR.iterdir()}
                     | {"fmi2Functions", "fmi2FunctionTypes", "fmi2TypesPlatform"})
_MAX_NAME = 64


def model_name_error(name) -> str | None:
    """Why name cannot name a model (its files, C functions and folder), or None."""
    why = c_identifier_error(name)
    if why:
        return why
    if len(name) > _MAX_NAME:
        return f"{name[:20]!r}... has {len(name)} characters, more than {_MAX_NAME}"
    if name.startswith("cg_") or name in _SHIPPED:
        return (f"{name!r} is taken by the files shipped beside a model (the runtime's cg_*, "
                f"the FMI headers)")
    return None


def _check_name(name: str) -> None:
    why = model_name_error(name)
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


def _shared_suffix() -> str:
    return ".dll" if sys.platform == "win32" else ".so"


def compile_library(files: dict, c_sources: list, library: str, flags, target: Path,
                    include_dirs=(), what: str = "model", failed_dir: Path | None = None) -> Path:
    """Build C sources as a shared library in a private folder under target.

    files: name -> text written into the folder first. Returns the library's
    path inside that folder (the caller moves it and removes the folder with
    ``shutil.rmtree(path.parent)``). A failed build raises BuildError with the
    compiler's output and leaves the sources in failed_dir (default
    ``target/failed-build``), which outlives the call.
    """
    cc = _require_compiler()
    build = Path(tempfile.mkdtemp(dir=target, prefix=".build-"))
    try:
        for fname, text in files.items():
            (build / fname).write_text(text)
        out = library + _shared_suffix()
        include = [f"-I{d}" for d in include_dirs]
        if len(c_sources) == 1:
            cmd = [cc, *flags, "-shared", "-fPIC", *include, "-o", out, *c_sources, "-lm"]
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=build)
        else:               # each file on its own core, then one link
            objects = [f"{Path(c).stem}.o" for c in c_sources]
            jobs = [subprocess.Popen([cc, *flags, "-fPIC", *include, "-c", "-o", o, c], cwd=build,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                    for c, o in zip(c_sources, objects)]
            results = [(job.args, *job.communicate(), job.returncode) for job in jobs]
            failed_jobs = [r for r in results if r[3] != 0]
            if failed_jobs:
                cmd, stdout, stderr, _ = failed_jobs[0]
                proc = subprocess.CompletedProcess(cmd, 1, stdout, stderr)
            else:
                cmd = [cc, *flags, "-shared", "-o", out, *objects, "-lm"]
                proc = subprocess.run(cmd, capture_output=True, text=True, cwd=build)
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


def _read_manifest(folder: Path) -> dict:
    path = folder / "manifest.json"
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"{folder} holds no generated model (no manifest.json)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CacheError(f"the manifest {path} is damaged ({exc}): regenerate the model") from None
    if not isinstance(manifest, dict) or not {"name", "extension", "files"} <= set(manifest):
        raise CacheError(f"the manifest {path} is not one of this codegen version: regenerate "
                         f"the model")
    return manifest


def _verify(folder: Path, manifest: dict) -> None:
    """Every file the manifest lists is there with its recorded SHA-256."""
    for fname, digest in sorted(manifest["files"].items()):
        path = folder / fname
        if not path.is_file():
            raise CacheError(f"{path} of model {manifest['name']!r} is missing")
        if _sha256(path) != digest:
            raise CacheError(f"{path} of model {manifest['name']!r} does not match its manifest "
                             f"(damaged or truncated): regenerate the model")


def load(path):
    """Load an already generated model from its folder (no SymPy work).

    The files are checked against the manifest's hashes first; a library built
    for another runtime ABI, or without a descriptor, is refused with a
    message that says so."""
    from .runtime import CompiledModel
    folder = Path(path)
    if folder.is_file():
        folder = folder.parent
    manifest = _read_manifest(folder)
    _verify(folder, manifest)
    return CompiledModel.from_library(folder / manifest["extension"], manifest, folder)


def _cached(target: Path, key: str):
    """The model in target if it is the one for key and intact, else None (rebuild)."""
    try:
        manifest = _read_manifest(target)
        if manifest.get("key") != key:
            return None
        return load(target)
    except (FileNotFoundError, CacheError, ImportError):
        return None


def _remove_old_libraries(target: Path, name: str, keep: str) -> None:
    """Libraries of earlier builds of this model (a process that loaded one keeps it)."""
    for old in target.glob(f"{name}_*{_shared_suffix()}"):
        if old.name != keep:
            try:
                old.unlink()
            except OSError:
                pass


def neutral_equations(eom, name: str, constants=None, specifieds=None,
                      recursive=None) -> EquationsOfMotion:
    """The checked neutral equations of eom for a model called name (no file is touched)."""
    _check_name(name)
    eq = eom if isinstance(eom, EquationsOfMotion) else equations_of(eom, constants, specifieds,
                                                                      recursive)
    if not eq.u:
        raise ValueError(f"model {name!r} has no speeds: there is nothing to integrate")
    for kind, names in (("state", eq.state_names), ("constant", eq.constant_names),
                        ("specified", eq.specified_names)):
        for n in names:
            if not n.isascii() or not n.isprintable() or any(ch in n for ch in '"\\'):
                raise ValueError(f"{kind} name {n!r} cannot be a C string or an FMI variable "
                                 f"name (printable ASCII without quotes or backslashes)")
    return eq


def model_sources(eom, name: str, constants=None, specifieds=None,
                  options: Options = Options(), stages: Stages = None) -> tuple:
    """(neutral equations, Sources) of a model: everything short of compiling;
    stages (codegen.progress.Stages) reports forming, CSE and emitting."""
    stages = stages or Stages(False)
    with stages("forming"):
        eq = neutral_equations(eom, name, constants, specifieds, options.recursive)
    with stages("CSE"):
        programs = build_programs(eq, options.unrolled_limit, options.jacobian,
                                  options.parameter_jacobian)
    with stages("emitting"):
        sources = emit(programs, eq, name, options.rank_rtol, options.fused)
    return eq, sources


def generate(eom, name: str, constants=None, specifieds=None, output_dir="generated",
             flags=None, force: bool = False, rank_rtol: float = 1e-9, recursive=None,
             unrolled_limit: int = 8000, fused: bool = False, jacobian: bool | None = None,
             parameter_jacobian: bool = False, progress: bool = False):
    """Generate, compile and load the dynamics of a formed model.

    Parameters
    ----------
    eom : GibbsAppellMethod, KanesMethod (formed) or EquationsOfMotion
    name : str
        A C identifier of at most 64 characters; names the files, the C
        functions and the folder.
    constants : list of Symbols, optional
        The order of p. Default: the equations' free symbols sorted by name.
    specifieds : list of functions of time, optional
        The order of r. Default: the functions of time that are not states
        (and their derivatives, named ``<f>_d``), sorted by name.
    output_dir : path
        Parent folder; the model goes to ``output_dir/name/``.
    force : bool
        Rebuild even if the cache has this model.
    flags, rank_rtol, recursive, unrolled_limit, fused, jacobian, parameter_jacobian
        The code-generation options (see :class:`codegen.options.Options`);
        flags default to ``PORTABLE_FLAGS``, ``host_flags()`` adds -march=native.
    progress : bool or codegen.progress.Stages
        Print each stage as it finishes, with its time (forming, CSE, emitting,
        compiling), on stderr (or through the given Stages).

    Returns
    -------
    CompiledModel
        With ``rhs``, ``mass_matrix``, ``forcing``, ``simulate``, ``states``,
        ``constants``, ``specifieds``, ``source_dir`` (see :class:`codegen.runtime.CompiledModel`).
    """
    options = Options(flags=PORTABLE_FLAGS if flags is None else flags, rank_rtol=rank_rtol,
                      recursive=recursive, unrolled_limit=unrolled_limit, fused=fused,
                      jacobian=jacobian, parameter_jacobian=parameter_jacobian)
    stages = progress if isinstance(progress, Stages) else Stages(progress)
    eq, sources = model_sources(eom, name, constants, specifieds, options, stages)
    target = _prepare_dir(output_dir, name)
    key = sources_key(sources, options)
    if not force:
        hit = _cached(target, key)
        if hit is not None:
            stages.line(f"{'cached':<12}{target}")
            return hit
    manifest = dict(states=eq.state_names, constants=eq.constant_names,
                    specifieds=eq.specified_names, nq=eq.nq, nu=eq.nu,
                    symmetric=eq.symmetric, operation_count=sources.operation_count,
                    solver=sources.solver, mass_failure=sources.mass_failure,
                    nc=sources.nc, nh=sources.nh, jacobian=sources.jacobian,
                    options=options.key(),
                    defaults={n: DEFAULTS[n] for n in eq.constant_names if n in DEFAULTS},
                    codegen=__version__, origin=eq.origin)
    return _install(target, name, key, sources.files, sources.c_files, options.flags,
                    manifest, stages)


def _install(target: Path, name: str, key: str, files: dict, c_files: list, flags,
             manifest: dict, stages: Stages):
    """Compile files into target (the library first, then the sources, the manifest
    last: a folder is a model only once complete) and load it. manifest: the
    model's own fields; the build's are added here."""
    library = f"{name}_{key[:16]}"
    with stages("compiling"):
        built = compile_library(files, c_files, library, flags, target,
                                include_dirs=[RUNTIME_DIR], what=f"model {name!r}")
        try:
            final = target / built.name
            os.replace(built, final)
        finally:
            shutil.rmtree(built.parent, ignore_errors=True)
    for fname, text in files.items():
        _atomic_write(target / fname, text)
    digests = {fname: hashlib.sha256(text.encode()).hexdigest()
               for fname, text in files.items()}
    digests[final.name] = _sha256(final)
    manifest = dict(manifest, name=name, extension=final.name, key=key, abi=ABI_VERSION,
                    c_files=list(c_files), flags=list(flags), files=digests,
                    seconds={k: round(v, 3) for k, v in stages.times.items()})
    _atomic_write(target / "manifest.json", json.dumps(manifest, indent=1) + "\n")
    _remove_old_libraries(target, name, final.name)
    return load(target)


def portable_payload(model) -> dict:
    """What rebuilds a compiled model elsewhere: its sources, build flags, key and
    manifest fields, never the shared library (another machine may need another)."""
    manifest = model.manifest
    if "c_files" not in manifest or "flags" not in manifest:
        raise CacheError(f"model {model.name!r} was built by an earlier codegen version and "
                         f"cannot be sent elsewhere: regenerate it")
    files = {fname: (model.source_dir / fname).read_text()
             for fname in manifest["files"] if fname != manifest["extension"]}
    own = {k: v for k, v in manifest.items()
           if k not in ("name", "extension", "key", "abi", "c_files", "flags", "files",
                        "seconds")}
    return dict(name=model.name, key=manifest["key"], files=files,
                c_files=manifest["c_files"], flags=manifest["flags"], manifest=own)


#: models this process has rebuilt or loaded from payloads, by key
_FROM_PAYLOAD = {}


def cache_root() -> Path:
    """Where models received from elsewhere (a pickled CompiledModel) are kept:
    $CODEGEN_CACHE, else ~/.cache/codegen."""
    root = os.environ.get("CODEGEN_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "codegen"


def from_payload(payload: dict):
    """The model of portable_payload(...): from this process, from the cache
    (cache_root()/<key prefix>/<name>), or compiled there from its sources."""
    key, name = payload["key"], payload["name"]
    hit = _FROM_PAYLOAD.get(key)
    if hit is not None:
        return hit
    target = _prepare_dir(cache_root() / key[:16], name)
    model = _cached(target, key)
    if model is None:
        model = _install(target, name, key, payload["files"], payload["c_files"],
                         payload["flags"], payload["manifest"], Stages(False))
    _FROM_PAYLOAD[key] = model
    return model
