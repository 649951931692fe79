"""The study's SQLite file, checked before a search opens it again.

A search folder can be handed over (copied, unpacked), and resuming opens its ``optuna.db`` for
writing: a symbolic link there would make the study write wherever it points, and an SQLite file
runs the triggers stored in it on every write. So a search resumes only from a plain file whose
schema is the one Optuna itself creates (its tables and indexes, nothing else): anything more, a
trigger or a view, is a file this search did not create.
"""

import sqlite3
import tempfile
from functools import cache
from pathlib import Path

import optuna
from sqlalchemy.engine import make_url

from ner.common.errors import NerError

# What SQLite keeps beside a database while it writes (rollback journal, WAL and its index).
SIDE_FILES = ("-journal", "-wal", "-shm")

Schema = frozenset[tuple[str, str, str, str]]  # (type, name, table, SQL) rows of sqlite_master


class StudyFileError(NerError, RuntimeError):
    """A study file that the search will not open; the message names the file and why."""


def sqlite_path(storage: object) -> Path | None:
    """The database file of an SQLite storage URL; None for any other storage."""
    if not isinstance(storage, str):
        return None
    url = make_url(storage)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database)


def check_study_file(storage: object) -> None:
    """Refuse an SQLite study file that the search did not create: a link or other non-plain
    file (the database or a journal beside it), or one whose schema is not Optuna's.

    # Parameters
    storage: the sweeper's ``storage`` (a database URL); storages other than SQLite files and
        a file that does not exist yet pass unchecked.
    """
    path = sqlite_path(storage)
    if path is None:
        return
    for candidate in (path, *(path.with_name(path.name + suffix) for suffix in SIDE_FILES)):
        if candidate.is_symlink() or (candidate.exists() and not candidate.is_file()):
            raise StudyFileError(
                f"{candidate}: a link or not a plain file; a search opens only the study "
                "database it created (start a new search with hydra.sweep.dir=DIR)"
            )
    if not path.exists():
        return
    foreign = sorted(schema_of(path) - optuna_schema())
    if foreign:
        found = ", ".join(f"{kind} {name!r}" for kind, name, _, _ in foreign)
        raise StudyFileError(
            f"{path}: not a study database that a search created (it has {found}, which "
            "Optuna does not create); start a new search with hydra.sweep.dir=DIR"
        )


def schema_of(path: Path) -> Schema:
    """The schema rows of the SQLite file `path` (after SQLite has rolled back a journal left
    by a killed writer, as it does before any read); reading the schema runs no trigger."""
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)
        try:
            rows = connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")
            return frozenset(rows.fetchall())
        finally:
            connection.close()
    except sqlite3.Error as error:
        raise StudyFileError(f"{path}: not a study database ({error})") from None


@cache
def optuna_schema() -> Schema:
    """The schema that the installed Optuna gives a new study database."""
    with tempfile.TemporaryDirectory() as folder:
        reference = Path(folder) / "reference.db"
        optuna.storages.RDBStorage(f"sqlite:///{reference}").engine.dispose()
        return schema_of(reference)
