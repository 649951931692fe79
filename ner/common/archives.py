"""Safe, atomic extraction of zip (wheels, nltk_data) and tar archives.

An entry that would land outside the target folder (an absolute path, ``..``, or a tar link)
is refused before anything is written, and the target appears only once complete, so an
interrupted extraction is never mistaken for a finished one; a finished one whose files were
changed or damaged since is extracted again.
"""

import logging
import tarfile
import zipfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from ner.common.errors import NerError
from ner.common.files import atomic_directory
from ner.common.verified import digests_match, record_digests

logger = logging.getLogger(__name__)


class ArchiveError(NerError, ValueError):
    """An archive that cannot be used: a malformed or unsafe zip/tar file or a missing entry, or a
    model folder that is missing, incomplete, corrupt, edited or of another format version. The
    message names the file (and the entry or field)."""


def _entries(archive: Path) -> dict[str, zipfile.ZipInfo | tarfile.TarInfo]:
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            return {info.filename: info for info in zf.infolist()}
    try:
        with tarfile.open(archive) as tf:
            return {info.name: info for info in tf.getmembers()}
    except tarfile.TarError as error:
        raise ArchiveError(f"{archive}: not a zip or tar archive ({error})") from error


def _check_entry(archive: Path, name: str, info: zipfile.ZipInfo | tarfile.TarInfo) -> None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise ArchiveError(
            f"{archive}: entry {name!r} escapes the target folder; refusing to extract"
        )
    if isinstance(info, tarfile.TarInfo) and not (info.isfile() or info.isdir()):
        raise ArchiveError(
            f"{archive}: entry {name!r} is a link or special file; refusing to extract"
        )


def extract(archive: str | Path, target: str | Path, members: Sequence[str] | None = None) -> Path:
    """Extract `members` (default: all) of `archive` into `target`, once; returns `target`.

    If `target` already exists it is returned as is (callers name it after the archive's digest)
    while its files are those extracted: the size and sha256 of each, recorded at extraction, are
    checked when first used in a process; a folder with a file changed or missing since (or with
    no such record) is extracted again.
    """
    archive, target = Path(archive), Path(target)
    if target.is_dir():
        if digests_match(target):
            return target
        logger.warning(
            "extracting %s again: %s has no record of its files, or they were changed or damaged",
            archive,
            target,
        )
    entries = _entries(archive)
    wanted = list(entries) if members is None else list(members)
    for name in wanted:
        if name not in entries:
            raise ArchiveError(f"{archive}: no entry {name!r} (it has {len(entries)} entries)")
        _check_entry(archive, name, entries[name])
    with atomic_directory(target, replace=True) as staging:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(staging, members=wanted)
        else:
            with tarfile.open(archive) as tf:
                tf.extractall(staging, members=[entries[n] for n in wanted], filter="data")
        record_digests(staging)
    return target
