"""A built model's folder: its key, its manifest, verified loading, and the
payload that carries a model to another process.

Layout of ``<output_dir>/<name>/``::

    <name>.c, <name>.h      the model's C (it needs the runtime's headers,
                            templates/runtime, to compile)
    <name>_<key>.so         that C built as a shared library (the name carries
                            the key, so a changed model loads in the same process)
    manifest.json           names, key, options, and the SHA-256 of every file
    .lock                   the folder's lock (below)

The library holds only the model: its functions and its descriptor
(``<name>_model()``). The runtime that solves and integrates it is compiled
once, with the package (codegen.runtime._runtime), so a new model costs one small
compile, a direct call of the C compiler.

The key (``equations_key``) is taken on the formed, checked neutral equations
(codegen.pipeline.fingerprint), before the common-subexpression elimination and the
emission, which are most of a warm build's time: a cache hit forms the model and
nothing after. It hashes, besides the equations with their outputs, events, impacts
and control laws, the model's name, the options (codegen.Options), the runtime's ABI
version and files, the compiler's identity and everything else the sources are made
from: the code generator's own Python files and model templates and the versions of
SymPy, NumPy, Jinja2 and Python. Before a library is loaded its hash is checked
against the manifest: a damaged or truncated file is rebuilt by ``generate`` and
named by ``load``, never handed to the dynamic loader.

Every file is written atomically (codegen.pipeline.files) and each build compiles in a
private temporary folder; putting a build in place and loading a folder's model hold
the folder's lock (exclusive, shared), so a reader never sees half a model and two
processes building into one folder, the same model or two different ones under one
name, each get their own: the last one in keeps the folder, and a model whose folder
another build has since replaced refuses to read its sources from it
(``portable_payload``). The manifest is written last, so a folder is a model only
once complete.

A CompiledModel pickles as its payload (sources, flags, key, the manifest's
model fields; never the shared library): ``from_payload`` loads it from this
side's cache or compiles it there.
"""
from __future__ import annotations

import copyreg
import dataclasses
import hashlib
import json
import os
import platform
import shutil
from functools import lru_cache
from pathlib import Path

from ..version import __version__
from ..abi import ABI_VERSION
from .compiler import compile_library, compiler_identity, host_cpu, shared_suffix
from ..abi import RUNTIME_DIR, TEMPLATE_DIR
from ..emit.render import runtime_sources
from ..emit.sources import Sources
from ..equations.equations_of_motion import DEFAULTS
from ..errors import CacheError
from .files import folder_lock, prepare_dir, sha256, write_atomic
from .fingerprint import fingerprint
from .options import Options
from ..progress import Stages
from ..symbolic.expressions import LazyMatrix

__all__ = ["equations_key", "mass_digest", "sources_key", "model_fields", "install", "load",
           "cached", "portable_payload", "from_payload", "cache_root"]

#: the manifest's fields that describe the build, the ones install adds; the others are the
#: model's (model_fields), which travel in a payload
_BUILD_FIELDS = ("name", "extension", "key", "abi", "c_files", "flags", "file_flags", "files",
                 "seconds")


@lru_cache(maxsize=None)
def _runtime_digest() -> str:
    """SHA-256 of the runtime's files: a model includes its headers (cg_math.h's
    attributes decide the code compiled, its copies for the processor), a fused one its
    sources too, so a changed runtime builds the model again."""
    h = hashlib.sha256()
    for name, text in runtime_sources().items():
        h.update(name.encode() + b"\0" + text.encode() + b"\0")
    return h.hexdigest()


@lru_cache(maxsize=None)
def _generator_digest() -> str:
    """SHA-256 of what turns equations into sources: the package's Python files (the
    CSE, the plan, the emitter and the rest, whichever a change touches), the model
    templates, and the versions of the libraries that print, check and render them."""
    import jinja2
    import numpy
    import sympy
    h = hashlib.sha256()
    for root, pattern in ((Path(__file__).resolve().parents[1], "*.py"),
                          (TEMPLATE_DIR / "model", "*")):
        for path in sorted(root.rglob(pattern)):
            if path.is_file() and "__pycache__" not in path.parts:
                h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes()
                         + b"\0")
    h.update(f"sympy {sympy.__version__}, numpy {numpy.__version__}, jinja2 "
             f"{jinja2.__version__}, python {platform.python_version()}".encode())
    return h.hexdigest()


def _key(parts, options: Options) -> str:
    """SHA-256 of parts after the build's own: the runtime (its ABI and its files), the
    compiler (and this processor, under -march=native) and the options."""
    h = hashlib.sha256()
    native = any(f.startswith(("-march=native", "-mtune=native")) for f in options.flags)
    for part in (f"abi {ABI_VERSION}", _runtime_digest(), compiler_identity(), options.key(),
                 host_cpu() if native else "", *parts):
        h.update(part.encode() + b"\0")
    return h.hexdigest()


def equations_key(eq, name: str, options: Options) -> str:
    """The cache's key of a model: SHA-256 of its formed neutral equations
    (codegen.pipeline.fingerprint), its name, the code generator (_generator_digest) and the
    build's parts (_key), known before the CSE and the emission. A mass matrix formed on
    first use (symbolic.LazyMatrix: a tree's, which the build may never read) enters by
    its shape only, so that taking the key does not form it; where the build read it,
    its digest is in the manifest (mass_digest) and a hit checks it."""
    if isinstance(eq.M, LazyMatrix):
        eq = dataclasses.replace(eq, M=("a matrix formed on first use", eq.M.shape))
    return _key((_generator_digest(), f"model {name}", fingerprint(eq)), options)


def mass_digest(eq, form: bool = False) -> str | None:
    """The fingerprint of eq's mass matrix where it is formed on first use and has been
    formed (by the build that read it), else None: the part of the equations that
    equations_key leaves out. form: form it first (a cache hit's check of a matrix that
    the build read)."""
    M = eq.M
    if isinstance(M, LazyMatrix) and (form or M.formed):
        return fingerprint(M.value)
    return None


def sources_key(sources: Sources, options: Options) -> str:
    """SHA-256 of the emitted sources and the build's parts (_key): what an export's
    binary is made from (an FMU's GUID)."""
    files = [f"{fname}\0{sources.files[fname]}" for fname in sorted(sources.files)]
    flags = [" ".join([fname, *flags])
             for fname, flags in sorted((sources.file_flags or {}).items())]
    return _key(files + flags, options)


def model_fields(eq, sources: Sources, options: Options) -> dict:
    """The manifest's fields that describe the model: its names, sizes, solver and options."""
    return dict(states=eq.state_names, constants=eq.constant_names,
                specifieds=eq.specified_names, nq=eq.nq, nu=eq.nu,
                symmetric=eq.symmetric, operation_count=sources.operation_count,
                solver=sources.solver, mass_failure=sources.mass_failure,
                nc=sources.nc, nh=sources.nh, jacobian=sources.jacobian,
                options=options.key(),
                defaults={n: DEFAULTS[n] for n in eq.constant_names if n in DEFAULTS},
                codegen=__version__, origin=eq.origin,
                # the part of the equations the key leaves out, where the build read it
                mass_matrix=mass_digest(eq))


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
        if sha256(path) != digest:
            raise CacheError(f"{path} of model {manifest['name']!r} does not match its manifest "
                             f"(damaged or truncated): regenerate the model")


def _reduce(model):
    return from_payload, (portable_payload(model),)


@lru_cache(maxsize=None)
def _compiled_model():
    """CompiledModel, with its pickling registered (copyreg): as its payload. Imported
    at the first load, so the stages before it never load the compiled runtime."""
    from ..runtime.compiled_model import CompiledModel
    copyreg.pickle(CompiledModel, _reduce)
    return CompiledModel


def _load(folder: Path, manifest: dict):
    """The model of manifest in folder, its files checked first (the caller holds the
    folder's lock)."""
    _verify(folder, manifest)
    return _compiled_model().from_library(folder / manifest["extension"], manifest, folder)


def load(path):
    """Load an already generated model from its folder (no SymPy work).

    The files are checked against the manifest's hashes first; a library built
    for another runtime ABI, or without a descriptor, is refused with a
    message that says so."""
    folder = Path(path)
    if folder.is_file():
        folder = folder.parent
    with folder_lock(folder, shared=True):
        return _load(folder, _read_manifest(folder))


def cached(target: Path, key: str, mass=None):
    """The model in target if it is the one for key and intact, else None (rebuild).
    mass: a callable that gives the equations' mass_digest, called where the manifest
    holds one (the build read the matrix the key leaves out); None where there are no
    equations to check (a payload, which brings the sources the key was taken with)."""
    try:
        with folder_lock(target, shared=True):
            manifest = _read_manifest(target)
            if manifest.get("key") != key:
                return None
            if mass is not None and manifest.get("mass_matrix") is not None \
                    and mass() != manifest["mass_matrix"]:
                return None
            return _load(target, manifest)
    except (FileNotFoundError, CacheError, ImportError):
        return None


def _remove_old_libraries(target: Path, name: str, keep: str) -> None:
    """Libraries of earlier builds of this model (a process that loaded one keeps it)."""
    for old in target.glob(f"{name}_*{shared_suffix()}"):
        if old.name != keep:
            try:
                old.unlink()
            except OSError:
                pass


def install(target: Path, name: str, key: str, files: dict, c_files: list, flags,
            fields: dict, stages: Stages, file_flags=None):
    """Compile files into target and load the result. The compile runs in a private
    folder; putting it in place holds the folder's lock: the library, the sources, the
    manifest last (a folder is a model only once complete), the older libraries removed,
    and the model loaded, so that a build of another model into the same folder, by
    another process, can come before or after but not in between. fields: the
    manifest's model fields (model_fields); the build's are added here. file_flags: c
    file -> flags after flags (Sources.file_flags)."""
    library = f"{name}_{key[:16]}"
    with stages("compiling"):
        built = compile_library(files, c_files, library, flags, target,
                                include_dirs=[RUNTIME_DIR], what=f"model {name!r}",
                                timeout=stages.remaining(), on_timeout=stages.exceeded,
                                file_flags=file_flags)
    try:
        with folder_lock(target):
            final = target / built.name
            os.replace(built, final)
            for fname, text in files.items():
                write_atomic(target / fname, text)
            digests = {fname: hashlib.sha256(text.encode()).hexdigest()
                       for fname, text in files.items()}
            digests[final.name] = sha256(final)
            build = dict(name=name, extension=final.name, key=key, abi=ABI_VERSION,
                         c_files=list(c_files), flags=list(flags),
                         file_flags={f: list(v) for f, v in (file_flags or {}).items()},
                         files=digests, seconds={k: round(v, 3) for k, v in stages.times.items()})
            manifest = dict(fields, **build)
            write_atomic(target / "manifest.json", json.dumps(manifest, indent=1) + "\n")
            _remove_old_libraries(target, name, final.name)
            return _load(target, manifest)
    finally:
        shutil.rmtree(built.parent, ignore_errors=True)


def portable_payload(model) -> dict:
    """What rebuilds a compiled model elsewhere: its sources, build flags, key and
    manifest fields, never the shared library (another machine may need another). The
    sources are read from the model's folder and checked against its own manifest: a
    folder that another build has since taken over is refused, never sent."""
    manifest = model.manifest
    if "c_files" not in manifest or "flags" not in manifest:
        raise CacheError(f"model {model.name!r} was built by an earlier codegen version and "
                         f"cannot be sent elsewhere: regenerate it")
    files = {}
    with folder_lock(model.source_dir, shared=True):
        for fname, digest in manifest["files"].items():
            if fname == manifest["extension"]:
                continue
            path = model.source_dir / fname
            data = path.read_bytes() if path.is_file() else None
            if data is None or hashlib.sha256(data).hexdigest() != digest:
                raise CacheError(f"{path} is no longer the source of this model "
                                 f"{model.name!r}: another build of that name has since been "
                                 f"put in {model.source_dir}. Generate the model again, or "
                                 f"give each model its own name")
            files[fname] = data.decode()
    fields = {k: v for k, v in manifest.items() if k not in _BUILD_FIELDS}
    return dict(name=model.name, key=manifest["key"], files=files,
                c_files=manifest["c_files"], flags=manifest["flags"],
                file_flags=manifest.get("file_flags", {}), manifest=fields)


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
    target = prepare_dir(cache_root() / key[:16], name)
    model = cached(target, key)
    if model is None:
        model = install(target, name, key, payload["files"], payload["c_files"],
                        payload["flags"], payload["manifest"], Stages(False),
                        payload.get("file_flags"))
    _FROM_PAYLOAD[key] = model
    return model
