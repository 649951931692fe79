"""`NerError`, the root of every error a user can fix: a bad file, option, value or corpus.

Each such error's message names what to fix (the file and line, the config key, the option).
The console scripts print it as one line and exit with status 2; any other exception is a bug in
the toolkit or a library and keeps its traceback. The specific classes (`ConfigError`,
`OptionsError`, `ColumnFormatError`, ...) live beside the code that raises them and derive from
`NerError` and the built-in class they always were (`ValueError`, `OSError`), so existing
``except ValueError`` code still catches them.
"""

import sys
from typing import NoReturn

USER_ERROR_STATUS = 2  # the exit status of a console script stopped by a `NerError`


class NerError(Exception):
    """An error the user can fix; the message names the file, key or value at fault."""


class InputError(NerError, ValueError):
    """Input that cannot work and has no more specific class: an option or argument value, a
    corpus layout, a run folder."""


class MissingFileError(NerError, FileNotFoundError):
    """A file or folder the user named does not exist."""


class FileAccessError(NerError, OSError):
    """A file or folder the user named exists but cannot be read or written."""


def file_error(path: object, error: OSError) -> NerError:
    """The user's error behind `error`, raised on the file `path` the user named:
    `MissingFileError` or `FileAccessError`, with a message naming the file and the reason (an
    error that is already the user's, naming its file, is returned as it is)."""
    if isinstance(error, NerError):
        return error
    reason = error.strerror or str(error)
    if isinstance(error, FileNotFoundError):
        return MissingFileError(f"{path}: {reason}")
    return FileAccessError(f"{path}: {reason}")


def report_user_error(program: str, error: NerError) -> int:
    """``<program>: <message>`` on stderr (one line where the message is one line); returns
    `USER_ERROR_STATUS`, the exit status of a console script stopped by a user's error."""
    print(f"{program}: {error}", file=sys.stderr)
    return USER_ERROR_STATUS


def exit_for_user(program: str, error: NerError) -> NoReturn:
    """Stop a console script on a user's error: `report_user_error`, then exit with
    `USER_ERROR_STATUS`, no traceback."""
    sys.exit(report_user_error(program, error))
