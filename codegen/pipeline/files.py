"""Atomic file writes, the output folders of every writer, and a folder's lock.

Each file is written under a temporary name beside its target and moved into
place with os.replace, so a reader, or a crash mid-write, never leaves half a
file; two processes writing the same file both succeed, the last one wins. Where
several files make one whole (a model's folder), ``folder_lock`` keeps a writer
from coming between another process's files.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from contextlib import ExitStack, contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:                 # Windows: msvcrt's byte-range lock instead
    fcntl = None
    import msvcrt

__all__ = ["atomic_path", "write_atomic", "write_all", "prepare_dir", "sha256", "folder_lock"]


@contextmanager
def atomic_path(path: Path):
    """A temporary path beside path, to write in the with block: moved onto path
    when the block ends, removed if it raises."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)          # mkstemp makes 0600; these are ordinary files
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_atomic(path: Path, data) -> None:
    """path holds data (str or bytes), whole or not at all."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data.encode() if isinstance(data, str) else data)


def write_all(target: Path, files: dict) -> None:
    """Every file of files (name -> text or bytes) into target, or none: a name that
    something other than a file holds is refused before anything is written; all
    are written to temporary names first, then moved in."""
    for fname in files:
        path = target / fname
        if path.exists() and not path.is_file():
            raise IsADirectoryError(f"cannot write {path}: something that is not a file is in "
                                    f"the way (nothing was written)")
    with ExitStack() as stack:
        for fname, data in files.items():
            tmp = stack.enter_context(atomic_path(target / fname))
            tmp.write_bytes(data.encode() if isinstance(data, str) else data)


def prepare_dir(output_dir, name: str) -> Path:
    """output_dir/name, created if need be and checked writable."""
    target = Path(output_dir).resolve() / name
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OSError(f"cannot create the output folder {target}: {exc}") from exc
    if not os.access(target, os.W_OK | os.X_OK):
        raise PermissionError(f"the output folder {target} is not writable")
    return target


def sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@contextmanager
def folder_lock(folder: Path, shared: bool = False):
    """Hold folder's lock, the file ``.lock`` in it, for the with block: exclusive for a
    writer (which creates the file), shared for readers, across processes; the system
    releases it when the block ends or the process dies. A reader of a folder without
    the file goes on unlocked: no writer of this version has been there. Not reentrant:
    a process holding it must not take it again."""
    path = Path(folder) / ".lock"
    try:
        fd = os.open(path, os.O_RDONLY if shared else os.O_RDWR | os.O_CREAT, 0o644)
    except FileNotFoundError:
        if not shared:
            raise
        fd = None
    if fd is None:
        yield
        return
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        else:
            msvcrt.locking(fd, msvcrt.LK_RLCK if shared else msvcrt.LK_LOCK, 1)
        yield
    finally:
        os.close(fd)          # which releases the lock
