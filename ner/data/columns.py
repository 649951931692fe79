"""Reader for CoNLL-style column files: one token per line, blank lines between sentences.

Every malformed line is an error that names the file and line; nothing is skipped silently.
Document markers (``-DOCSTART-`` lines) are dropped but counted into a ``document_id``.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ner.common.errors import NerError
from ner.data.lines import Undecodable, read_text_lines, splits_as_bytes

# Separators by name, for command lines where a tab is hard to type (`data.options.separator=tab`).
SEPARATOR_NAMES = {"tab": "\t", "\\t": "\t", "space": " "}
DOCSTART = "-DOCSTART-"  # the first field of a document-boundary line in CoNLL files


class ColumnFormatError(NerError, ValueError):
    """Malformed corpus input; the message starts with ``<file>:<line>:``."""


@dataclass(frozen=True)
class ColumnFormat:
    """How to read a column file.

    `columns` names every column in order; ``tokens`` and ``tags`` are required and other names
    (``pos``, ``chunk``, ...) are kept as string columns; ``"_"`` drops a column. `separator`
    None splits on any whitespace. `docstart` is the first field of document-boundary lines.
    `max_sentence_tokens` catches files without blank lines between sentences (the longest real
    CoNLL sentence, in CoNLL-2002 Spanish, has 1,238 tokens); None lifts the limit.
    """

    columns: Sequence[str] = ("tokens", "tags")
    separator: str | None = None
    docstart: str | None = DOCSTART
    encoding: str = "utf-8"
    max_sentence_tokens: int | None = 5000

    def __post_init__(self) -> None:
        missing = {"tokens", "tags"} - set(self.columns)
        if missing:
            raise ColumnFormatError(f"columns {list(self.columns)} lack {sorted(missing)}")

    @classmethod
    def from_indices(
        cls, width: int, token_column: int = 0, tag_column: int = -1, **options
    ) -> "ColumnFormat":
        """A format for `width`-column files keeping only the token and tag columns."""
        names = ["_"] * width
        try:
            names[token_column] = "tokens"
            names[tag_column] = "tags"
        except IndexError:
            raise ColumnFormatError(
                f"token_column={token_column} / tag_column={tag_column} outside {width} columns"
            ) from None
        return cls(columns=tuple(names), **options)


@dataclass
class Sentence:
    """One sentence: a list of values per kept column, its document and its tokens' line numbers."""

    fields: dict[str, list[str]]
    document_id: int
    lines: list[int] = field(default_factory=list)


def first_width(
    path: str | Path,
    separator: str | None = None,
    docstart: str | None = DOCSTART,
    encoding: str = "utf-8",
) -> int:
    """The number of columns on the first token line of `path` (for `ColumnFormat.from_indices`)."""
    for _, line in _lines(Path(path), encoding):
        values = _split(line, separator) if line.strip() else []
        if values and values[0] != docstart:
            return len(values)
    raise ColumnFormatError(f"{path}:1: no sentences (the file is empty)")


def _split(line: str, separator: str | None) -> list[str]:
    return line.split() if separator is None else line.rstrip(" ").split(separator)


def _lines(path: Path, encoding: str) -> Iterator[tuple[int, str]]:
    """(line number, text without line break) pairs, with decoding errors located."""
    if not path.is_file():
        raise ColumnFormatError(f"{path}: no such file")
    try:
        splits_as_bytes(encoding)
    except LookupError as error:
        raise ColumnFormatError(f"{path}: {error}") from None
    with open(path, "rb") as file:
        for number, line in read_text_lines(file, encoding):
            if isinstance(line, Undecodable):
                raise ColumnFormatError(
                    f"{path}:{number}: {line.where} is not valid {encoding}; pass the file's "
                    "encoding (e.g. encoding='latin-1')"
                )
            yield number, line


def check_sentence_length(
    path: Path,
    sentence: Sentence,
    limit: int | None,
    missing: str = "are blank lines missing between sentences?",
) -> None:
    """Raise `ColumnFormatError` at the token that takes `sentence` past `limit` tokens (None:
    no limit): a file whose sentence breaks are missing would otherwise become one huge sentence.

    # Parameters
    path: the file, for the message.
    sentence: the sentence read so far; its last line is the token just added.
    limit: `max_sentence_tokens`.
    missing: what the message asks about, the likely cause in this format.
    """
    if limit and len(sentence.lines) > limit:
        raise ColumnFormatError(
            f"{path}:{sentence.lines[-1]}: the sentence starting at line {sentence.lines[0]} "
            f"has over {limit} tokens; {missing} (raise max_sentence_tokens= if it is real)"
        )


def read_column_file(path: str | Path, fmt: ColumnFormat) -> list[Sentence]:
    """All sentences of `path`; raises `ColumnFormatError` (file:line) on malformed input."""
    path = Path(path)
    width = len(fmt.columns)
    kept = [(i, name) for i, name in enumerate(fmt.columns) if name != "_"]
    token_index = list(fmt.columns).index("tokens")
    sentences: list[Sentence] = []
    current = Sentence({name: [] for _, name in kept}, 0)
    document, document_has_sentences = 0, False

    def finish() -> None:
        nonlocal current, document_has_sentences
        if current.lines:
            sentences.append(current)
            document_has_sentences = True
        current = Sentence({name: [] for _, name in kept}, document)

    for number, line in _lines(path, fmt.encoding):
        if not line.strip():
            finish()
            continue
        values = _split(line, fmt.separator)
        if fmt.docstart is not None and values[0] == fmt.docstart:
            finish()
            if document_has_sentences:
                document, document_has_sentences = document + 1, False
                current.document_id = document
            continue
        if len(values) != width:
            raise ColumnFormatError(
                f"{path}:{number}: expected {width} columns ({' '.join(fmt.columns)}), "
                f"found {len(values)}: {line!r}"
            )
        if not values[token_index].strip():
            raise ColumnFormatError(
                f"{path}:{number}: the token column is empty: {line!r} (is the separator right?)"
            )
        for i, name in kept:
            current.fields[name].append(values[i])
        current.lines.append(number)
        check_sentence_length(path, current, fmt.max_sentence_tokens)
    finish()
    if not sentences:
        raise ColumnFormatError(f"{path}:1: no sentences (the file is empty)")
    return sentences
