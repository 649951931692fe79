"""Input to tag (not to train on), read forgivingly: a line that cannot be read is reported and
the rest goes on.

`read_lines` decodes a byte stream line by line; a line that is not valid text in its encoding
or holds NUL bytes (binary data), or is longer than `MAX_LINE_CHARS`, carries an error message
instead of text. `read_json_lines` reads such lines as JSON objects whose text is one field
(``--input-format jsonl``). `read_conll` groups
such lines into CoNLL blocks: one token per line (first column), blank lines between sentences,
``-DOCSTART-`` lines passed through; a block whose every line has a second column carries the
last column as gold tags.
"""

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from ner.data.columns import DOCSTART
from ner.data.lines import TooLong, Undecodable, read_text_lines

# The longest line read, in characters: tagging a line takes about 130 bytes a character at once,
# so a longer line (a file without line breaks, a minified dump) is skipped with an error rather
# than exhausting memory; it is never read whole either (`read_text_lines`).
MAX_LINE_CHARS = 1_000_000


@dataclass
class Line:
    """An input line: its number (1-based) and text, or why it could not be read; fields: the
    other fields of a JSON lines record, carried through to its output record."""

    number: int
    text: str | None
    error: str | None = None
    fields: dict[str, Any] | None = None


@dataclass
class ConllSentence:
    """A CoNLL block: the raw token lines, tokens and gold tags (None when untagged)."""

    first_line: int
    lines: list[str]
    tokens: list[str]
    gold: list[str] | None


def read_lines(stream: IO[bytes], encoding: str) -> Iterator[Line]:
    """Decode `stream` line by line; undecodable or binary lines, and lines longer than
    `MAX_LINE_CHARS`, carry an error instead."""
    for number, text in read_text_lines(stream, encoding, MAX_LINE_CHARS):
        if isinstance(text, TooLong):
            yield Line(
                number,
                None,
                f"line {number} is too long ({text.length}; a line may hold "
                f"{MAX_LINE_CHARS:,} characters); skipped (break it into lines)",
            )
        elif isinstance(text, Undecodable):
            yield Line(
                number,
                None,
                f"line {number}: {text.where} is not valid {encoding}; skipped (pass --encoding "
                "if the file uses another encoding)",
            )
        elif "\x00" in text:
            yield Line(number, None, f"line {number} holds NUL bytes (binary data?); skipped")
        else:
            yield Line(number, text)


def read_json_lines(
    lines: Iterable[Line], text_field: str, reserved: frozenset[str] = frozenset()
) -> Iterator[Line]:
    """JSON lines: each line one object whose `text_field` holds the text to tag; the object's
    other fields ride along in `Line.fields`. A line that is no JSON object, lacks the field,
    holds no string there or has a field named in `reserved` (the output record's own keys)
    carries an error instead; a blank line is an empty text."""
    for line in lines:
        if line.text is None or not line.text.strip():
            yield line
            continue
        where = f"line {line.number}"
        try:
            record = json.loads(line.text)
        except json.JSONDecodeError as error:
            yield Line(line.number, None, f"{where} is not JSON ({error.msg}); skipped")
            continue
        if not isinstance(record, dict):
            yield Line(line.number, None, f"{where} is not a JSON object; skipped")
        elif not isinstance(record.get(text_field), str):
            problem = "has no" if text_field not in record else "has no string in its"
            yield Line(line.number, None, f"{where} {problem} {text_field!r} field; skipped")
        elif clash := sorted(reserved & (record.keys() - {text_field})):
            yield Line(
                line.number,
                None,
                f"{where}: its field {clash[0]!r} is a key of the output record; skipped "
                "(rename it or choose another --text-field)",
            )
        else:
            text = record.pop(text_field)
            yield Line(line.number, text, fields=record)


def read_conll(lines: Iterable[Line]) -> Iterator[ConllSentence | Line]:
    """CoNLL blocks, plus `Line`s for ``-DOCSTART-`` lines (text set) and errors (error set).

    A block with an unreadable line is reported once, on its first bad line, and skipped whole.
    """
    block: list[Line] = []

    def finish() -> Iterator[ConllSentence | Line]:
        bad = next((line for line in block if line.error), None)
        if bad is not None:
            yield Line(
                bad.number, None, f"{bad.error}; its sentence (from line {block[0].number}) too"
            )
        elif block:
            columns = [line.text.split() for line in block]  # type: ignore[union-attr]
            tagged = all(len(c) > 1 for c in columns)
            yield ConllSentence(
                block[0].number,
                [line.text for line in block],  # type: ignore[misc]
                [c[0] for c in columns],
                [c[-1] for c in columns] if tagged else None,
            )
        block.clear()

    for line in lines:
        if line.text is not None and not line.text.strip():
            yield from finish()
        elif line.text is not None and line.text.split()[0] == DOCSTART:
            yield from finish()
            yield line
        else:
            block.append(line)
    yield from finish()
