"""A built model's folder: its key, its manifest, verified loading, and the
payload that carries a model to another process.

Layout of ``<output_dir>/<name>/``::

    <name>.c, <name>.h      the model's C (it needs the runtime's headers,
                            templates/runtime, to compile)
    <name>_<key>.so         that C built as a shared library (the name carries
                            the key, so a changed model loads in the same process)
    manifest.json           names, key, options, and the SHA-256 of every file

The library holds only the model: its functions and its descriptor
(``<name>_model()``). The runtime that solves and integrates it is compiled
once, with the package (codegen.runtime._runtime), so a new model costs one small
compile, a direct call of the C compiler.

The key hashes the emitted sources, the options (codegen.Options), the
runtime's ABI version and the compiler's identity. A cache hit still forms
and emits the model (the key is of what would be compiled), but compiles
nothing. Before a library is loaded its hash is checked against the
manifest: a damaged or truncated file is rebuilt by ``generate`` and named
by ``load``, never handed to the dynamic loader. Every file is written
atomically (codegen.build.files) and each build happens in a private temporary
folder, so two processes building the same model at once both succeed and a
reader never sees half a file; the manifest is written last, so a folder is
a model only once complete.

A CompiledModel pickles as its payload (sources, flags, key, the manifest's
model fields; never the shared library): ``from_payload`` loads it from this
side's cache or compiles it there.
"""
from __future__ import annotations

import copyreg
import hashlib
import json
import os
import shutil
from functools import lru_cache
from pathlib import Path

from ..version import __version__
from ..abi import ABI_VERSION
from .compiler import compile_library, compiler_identity, host_cpu, shared_suffix
from ..abi import RUNTIME_DIR
from ..emit.render import runtime_sources
from ..emit.sources import Sources
from ..equations.equations_of_motion import DEFAULTS
from ..errors import CacheError
from .files import prepare_dir, sha256, write_atomic
from .options import Options
from ..progress import Stages

__all__ = ["sources_key", "model_fields", "install", "load", "cached", "portable_payload",
           "from_payload", "cache_root"]

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


def sources_key(sources: Sources, options: Options) -> str:
    """SHA-256 of the emitted sources, the options, the runtime (its ABI and its files)
    and the compiler."""
    h = hashlib.sha256()
    native = any(f.startswith(("-march=native", "-mtune=native")) for f in options.flags)
    for part in (f"abi {ABI_VERSION}", _runtime_digest(), compiler_identity(), options.key(),
                 host_cpu() if native else ""):
        h.update(part.encode() + b"\0")
    for fname in sorted(sources.files):
        h.update(fname.encode() + b"\0" + sources.files[fname].encode() + b"\0")
    for fname, flags in sorted((sources.file_flags or {}).items()):
        h.update(" ".join([fname, *flags]).encode() + b"\0")
    return h.hexdigest()


def model_fields(eq, sources: Sources, options: Options) -> dict:
    """The manifest's fields that describe the model: its names, sizes, solver and options."""
    return dict(states=eq.state_names, constants=eq.constant_names,
                specifieds=eq.specified_names, nq=eq.nq, nu=eq.nu,
                symmetric=eq.symmetric, operation_count=sources.operation_count,
                solver=sources.solver, mass_failure=sources.mass_failure,
                nc=sources.nc, nh=sources.nh, jacobian=sources.jacobian,
                options=options.key(),
                defaults={n: DEFAULTS[n] for n in eq.constant_names if n in DEFAULTS},
                codegen=__version__, origin=eq.origin)


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


def load(path):
    """Load an already generated model from its folder (no SymPy work).

    The files are checked against the manifest's hashes first; a library built
    for another runtime ABI, or without a descriptor, is refused with a
    message that says so."""
    folder = Path(path)
    if folder.is_file():
        folder = folder.parent
    manifest = _read_manifest(folder)
    _verify(folder, manifest)
    return _compiled_model().from_library(folder / manifest["extension"], manifest, folder)


def cached(target: Path, key: str):
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
    for old in target.glob(f"{name}_*{shared_suffix()}"):
        if old.name != keep:
            try:
                old.unlink()
            except OSError:
                pass


def install(target: Path, name: str, key: str, files: dict, c_files: list, flags,
            fields: dict, stages: Stages, file_flags=None):
    """Compile files into target (the library first, then the sources, the manifest
    last: a folder is a model only once complete) and load it. fields: the
    manifest's model fields (model_fields); the build's are added here. file_flags:
    c file -> flags after flags (Sources.file_flags)."""
    library = f"{name}_{key[:16]}"
    with stages("compiling"):
        built = compile_library(files, c_files, library, flags, target,
                                include_dirs=[RUNTIME_DIR], what=f"model {name!r}",
                                timeout=stages.remaining(), on_timeout=stages.exceeded,
                                file_flags=file_flags)
        try:
            final = target / built.name
            os.replace(built, final)
        finally:
            shutil.rmtree(built.parent, ignore_errors=True)
    for fname, text in files.items():
        write_atomic(target / fname, text)
    digests = {fname: hashlib.sha256(text.encode()).hexdigest()
               for fname, text in files.items()}
    digests[final.name] = sha256(final)
    build = dict(name=name, extension=final.name, key=key, abi=ABI_VERSION,
                 c_files=list(c_files), flags=list(flags),
                 file_flags={f: list(v) for f, v in (file_flags or {}).items()}, files=digests,
                 seconds={k: round(v, 3) for k, v in stages.times.items()})
    write_atomic(target / "manifest.json", json.dumps(dict(fields, **build), indent=1) + "\n")
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
