"""On-disk cache entries named after what they hold, built once even by concurrent runs.

An entry is a folder named by `key_digest` of a JSON key that holds everything its content
depends on, so a different input gets a different folder and a stale one is simply no longer
used. `open_or_build` opens the entry, or builds it under a file lock in a temporary folder that
is renamed into place: readers never see half an entry, and concurrent runs that need the same
entry build it once and share it. An entry that is missing or broken (its opener returns None)
is built again.
"""

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ner.common.files import atomic_directory, file_lock

Entry = TypeVar("Entry")
Built = TypeVar("Built")


def key_digest(key: Any, length: int = 24, separators: tuple[str, str] = (",", ":")) -> str:
    """The first `length` hex digits of the sha256 of `key` as JSON (keys sorted, values that
    JSON cannot hold as their `str`), a short and stable folder name for the key."""
    canonical = json.dumps(key, sort_keys=True, separators=separators, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:length]


def open_or_build(
    directory: Path,
    open_entry: Callable[[Path], Entry | None],
    build: Callable[[Path], Built],
    open_built: Callable[[Path, Built], Entry],
    *,
    unwritable: Callable[[PermissionError], Exception] | None = None,
) -> Entry:
    """The entry in `directory`: `open_entry(directory)`, or when that gives None (missing or
    broken), `build(staging)` fills an empty temporary folder that then replaces `directory`,
    and `open_built(directory, what build returned)` opens the result.

    Building happens under a lock on `directory`, and the entry is opened again once the lock
    is held, so a concurrent run that needs the same entry waits and then reads what the first
    one built. An exception in `build` leaves `directory` as it was. `unwritable` turns a
    `PermissionError` while locking or building (a read-only cache folder) into the error
    raised instead.
    """
    directory = Path(directory)
    if (entry := open_entry(directory)) is not None:
        return entry
    try:
        with file_lock(directory):
            if (entry := open_entry(directory)) is not None:
                return entry  # built by another process while we waited
            with atomic_directory(directory, replace=True) as staging:
                built = build(staging)
    except PermissionError as error:
        if unwritable is None:
            raise
        raise unwritable(error) from None
    return open_built(directory, built)
