"""Cached files checked against a digest when read, once per process while they stay unchanged.

A shared data folder can hold files that were edited or damaged after they were written: every
cache checks what it reads back against a digest (the one a model or a pin records, or one
written beside the entry when it was built) and builds again what fails. Hashing takes time, so
a process remembers what it checked by each file's size, modification time and inode: a server
that loads the same model again reads it without hashing it again, and a file replaced or
rewritten since is checked anew.
"""

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path

# (digest, then path, size, modification time and inode of each file) of the checked files
_CHECKED: set[tuple] = set()
_CHUNK = 1 << 20
DIGESTS = ".files.sha256.json"  # an entry's record of its files, written when it was built


def checked_once(paths: Sequence[Path], digest: str, check: Callable[[], bool]) -> bool:
    """Whether the files `paths` hold what `digest` names: `check()` the first time in this
    process and after any of them changed; a success is remembered. OSError if one is missing."""
    stats = [(str(path), Path(path).stat()) for path in paths]
    key = (digest, *((name, s.st_size, s.st_mtime_ns, s.st_ino) for name, s in stats))
    if key in _CHECKED:
        return True
    if not check():
        return False
    _CHECKED.add(key)
    return True


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while block := file.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != DIGESTS)


def record_digests(folder: Path) -> None:
    """Write `DIGESTS` into `folder`: the size and sha256 of every file under it."""
    record = {
        str(path.relative_to(folder)): [path.stat().st_size, sha256_file(path)]
        for path in _files(folder)
    }
    (folder / DIGESTS).write_text(json.dumps(record, indent=1, sort_keys=True))


def digests_match(folder: Path) -> bool:
    """Whether the files that `folder`'s `DIGESTS` records are all there, each of its size and
    sha256 (hashed once per process while unchanged); False without a record."""
    try:
        record = json.loads((folder / DIGESTS).read_text())
        files = {folder / name: (size, digest) for name, (size, digest) in record.items()}
        if any(path.stat().st_size != size for path, (size, _) in files.items()):
            return False
        return checked_once(
            list(files),
            sha256_file(folder / DIGESTS),
            lambda: all(sha256_file(path) == digest for path, (_, digest) in files.items()),
        )
    except (OSError, ValueError, TypeError, AttributeError):
        return False
