"""Writing files and folders so that nothing half-written is ever mistaken for a finished one.

Every write of a result, cache entry, checkpoint or download goes through here:

- `atomic_path`, `atomic_write`, `write_text`, `write_json`: the content goes to a temporary
  sibling ``.<name>.tmp-<host>-<pid>``, is fsynced, and is renamed over the target; a kill, a
  crash or a full disk leaves the previous version (or nothing) in place, never a truncated file.
- `atomic_directory`: the same for a folder (a cache entry, a model archive).
- `remove_stale_temporaries`: a temporary left by a process that no longer runs on this machine
  (or an hour-old ``<name>.partial`` of earlier versions) is deleted the next time the same
  target is written.
- `file_lock`: one process at a time builds or repairs a shared entry; the others wait and then
  use what it built.
- `open_input`, `open_output`: a file the user named, opened for reading or (atomically) for
  writing; one that cannot be opened is the user's error (one line naming it), not a traceback.

Whatever library wrote them (safetensors and mkdtemp make owner-only files), finished files and
folders get the usual permissions from the umask (0o666 / 0o777 minus the umask), so a data
folder shared through a group (umask 002) stays usable by every member.
"""

import contextlib
import json
import os
import shutil
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import filelock

from ner.common.errors import FileAccessError, file_error

TEMPORARY_MARK = ".tmp-"
_HOST = socket.gethostname().replace("-", "_") or "host"


def open_input(path: str | Path, mode: str = "rb") -> IO:
    """Open a file the user named for reading; an `OSError` becomes the user's error naming the
    file (`ner.common.errors.file_error`)."""
    try:
        return open(path, mode)
    except OSError as error:
        raise file_error(path, error) from None


@contextmanager
def open_output(path: str | Path) -> Iterator[IO[str]]:
    """`atomic_write` of a text file (UTF-8) the user named; an `OSError` while opening it (a
    file where a folder should be, no permission) is the user's error naming the file."""
    stack = contextlib.ExitStack()
    try:
        handle = stack.enter_context(atomic_write(path, "w", encoding="utf-8"))
    except OSError as error:
        raise file_error(path, error) from None
    with stack:
        yield handle


def temporary_sibling(path: Path) -> Path:
    """The temporary name this process writes `path` under (same folder, so rename is atomic)."""
    return path.with_name(f".{path.name}{TEMPORARY_MARK}{_HOST}-{os.getpid()}")


def _owner_is_gone(leftover: Path) -> bool:
    """True when `leftover` was written by a process of this machine that no longer runs."""
    host, _, pid = leftover.name.rpartition(TEMPORARY_MARK)[2].rpartition("-")
    if host != _HOST or not pid.isdigit():
        return False  # another machine's (a shared folder) or not ours: leave it alone
    if int(pid) == os.getpid():
        return True  # our own earlier attempt, abandoned by an exception
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _legacy_leftover(leftover: Path, target: Path) -> bool:
    """``<name>.partial`` or ``<name>.partial<pid>`` written by earlier versions, which named no
    machine: stale once untouched for an hour (a live write keeps changing its file)."""
    suffix = leftover.name[len(target.name) + len(".partial") :]
    return (suffix == "" or suffix.isdigit()) and time.time() - leftover.stat().st_mtime > 3600


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Delete the temporaries of `path` left by dead processes; returns what was removed."""
    path = Path(path)
    removed = [
        leftover
        for leftover in path.parent.glob(f".{path.name}{TEMPORARY_MARK}*")
        if _owner_is_gone(leftover)
    ] + [
        leftover
        for leftover in path.parent.glob(f"{path.name}.partial*")
        if _legacy_leftover(leftover, path)
    ]
    for leftover in removed:
        _remove(leftover)
    return removed


def current_umask() -> int:
    """The process's umask (from /proc on Linux; elsewhere it is set and set straight back)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def _fsync_directory(directory: Path) -> None:
    """Make a rename inside `directory` durable (a no-op where folders cannot be opened)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield the temporary name to write `path` under (for writers that want a file name:
    h5py, safetensors, numpy); on a clean exit the file is fsynced and renamed over `path`, on
    an exception it is deleted and `path` is left as it was. A folder at `path` is the user's
    error (`FileAccessError`), found before anything is written, not when the finished file
    would replace it."""
    path = Path(path)
    if path.is_dir():
        raise FileAccessError(f"{path}: Is a directory")
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    temporary = temporary_sibling(path)
    try:
        yield temporary
        _settle(temporary)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


@contextmanager
def atomic_write(path: str | Path, mode: str = "wb", encoding: str | None = None) -> Iterator[IO]:
    """Open a temporary sibling of `path` for writing (see `atomic_path`)."""
    with atomic_path(path) as temporary, open(temporary, mode, encoding=encoding) as handle:
        yield handle


def write_text(path: str | Path, text: str) -> None:
    """Write `text` (UTF-8) to `path` atomically."""
    with atomic_write(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def write_json(path: str | Path, content: Any, indent: int | None = 1) -> None:
    """Write `content` as JSON (UTF-8, non-ASCII kept, trailing newline) to `path` atomically."""
    write_text(path, json.dumps(content, indent=indent, ensure_ascii=False) + "\n")


def _settle(path: Path) -> None:
    """Give `path` the umask's permissions and push its content to disk."""
    path.chmod((0o777 if path.is_dir() else 0o666) & ~current_umask())
    if path.is_dir():
        _fsync_directory(path)
    else:
        with open(path, "rb") as handle:
            os.fsync(handle.fileno())


@contextmanager
def atomic_directory(path: str | Path, *, replace: bool = False) -> Iterator[Path]:
    """Yield an empty temporary folder to fill; on a clean exit it becomes `path`.

    When `path` already exists: with `replace` the old folder is swapped out and deleted,
    otherwise another process finished the same folder first and ours is discarded (callers
    name folders after their content, so both are the same). On an exception nothing changes.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.with_name(path.name + ".old")  # where a replaced folder waits to be deleted
    remove_stale_temporaries(path)
    remove_stale_temporaries(old)
    retired = temporary_sibling(old)
    staging = temporary_sibling(path)
    _remove(staging)
    staging.mkdir()
    try:
        yield staging
        for item in [*staging.rglob("*"), staging]:
            if not item.is_symlink():
                _settle(item)
        if replace and path.exists():
            os.replace(path, retired)
            try:
                os.replace(staging, path)
            except OSError:
                os.replace(retired, path)  # put the finished folder back
                raise
            _remove(retired)
        else:
            try:
                os.replace(staging, path)
            except OSError:
                if not path.is_dir():
                    raise
                _remove(staging)  # another process completed the same folder first
    except BaseException:
        _remove(staging)
        raise
    _fsync_directory(path.parent)


def file_lock(path: str | Path, timeout: float = -1) -> filelock.BaseFileLock:
    """An inter-process lock guarding `path` (held on ``.<name>.lock`` beside it).

    Use as ``with file_lock(entry): ...``; `timeout` seconds (-1: wait for ever) before
    `filelock.Timeout`. The lock file stays, with umask-based permissions, so that every user of
    a shared folder can take it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return filelock.FileLock(str(path.with_name(f".{path.name}.lock")), timeout=timeout)
