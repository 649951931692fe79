"""Decoding text files line by line, as every reader of user files does.

A byte-order mark (U+FEFF, which Windows editors write at the start of UTF-8 files) is not text:
left in, it would become part of the first token, which then matches no vocabulary entry.

Encodings that write a line break as the single byte 0x0A (UTF-8, Latin-1, Windows code pages,
the CJK multi-byte encodings) are split into lines as bytes, so that a bad byte is named by its
column and the next line decodes afresh. Others (UTF-16, UTF-32, EBCDIC) cannot be split before
decoding: their stream is decoded as a whole and split after.
"""

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

BYTE_ORDER_MARK = "\ufeff"
_CHUNK_BYTES = 1 << 16
# An error handler that decodes each undecodable byte b as U+DC00 + b (a lone surrogate, which
# no strict decoder produces), so that decoding goes on and the line that held it is known.
_MARK_UNDECODABLE = "ner.data.lines.mark-undecodable"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_MARKED = re.compile("[\udc00-\udcff]+")


def _mark_undecodable(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    bad = error.object[error.start : error.end]
    return "".join(chr(0xDC00 + byte) for byte in bad), error.end


codecs.register_error(_MARK_UNDECODABLE, _mark_undecodable)


@dataclass(frozen=True)
class Undecodable:
    """A line that is not valid text in its encoding; `where` names the first bad byte, e.g.
    ``byte 0xe9 at column 4``."""

    where: str


def decode_line(raw: bytes, number: int, encoding: str) -> str:
    """Line `number` (1-based) of a file, decoded, without its line break and, on the first
    line, without a byte-order mark. Raises `UnicodeDecodeError` for bytes not in `encoding`."""
    text = raw.decode(encoding).rstrip("\r\n")
    return text.removeprefix(BYTE_ORDER_MARK) if number == 1 else text


def splits_as_bytes(encoding: str) -> bool:
    """Whether `encoding` writes a line break as the byte 0x0A, so that files in it can be split
    into lines before decoding. `LookupError` for a name that is no text encoding."""
    try:
        return "\n".encode(encoding) == b"\n"
    except LookupError:
        raise LookupError(f"{encoding!r} is not a text encoding") from None


def read_text_lines(stream: IO[bytes], encoding: str) -> Iterator[tuple[int, str | Undecodable]]:
    """``(number, line)`` for each line of `stream` (numbered from 1): its text without the line
    break (and, on line 1, without a byte-order mark), or `Undecodable` when it holds bytes that
    are not valid `encoding`; the lines after a bad one are read as usual."""
    if splits_as_bytes(encoding):
        for number, raw in enumerate(stream, 1):
            try:
                yield number, decode_line(raw, number, encoding)
            except UnicodeDecodeError as error:
                where = f"byte {raw[error.start]:#04x} at column {error.start + 1}"
                yield number, Undecodable(where)
        return
    for number, line in enumerate(_decoded_lines(stream, encoding), 1):
        line = line.rstrip("\r")
        bad = _LONE_SURROGATE.search(line)
        if bad is None:
            yield number, line.removeprefix(BYTE_ORDER_MARK) if number == 1 else line
            continue
        marked = _MARKED.match(line, bad.start())
        if marked is None:  # a lone surrogate decoded as such: no text either
            where = f"U+{ord(bad.group()):04X}"
        else:
            values = [f"{ord(c) - 0xDC00:#04x}" for c in marked.group()]
            where = f"{'byte' if len(values) == 1 else 'bytes'} {' '.join(values)}"
        yield number, Undecodable(f"{where} at character {bad.start() + 1}")


def _decoded_lines(stream: IO[bytes], encoding: str) -> Iterator[str]:
    """The lines of `stream` decoded as one text and split at "\\n" (undecodable bytes marked),
    read in chunks so that a large file or a pipe streams."""
    decoder = codecs.getincrementaldecoder(encoding)(_MARK_UNDECODABLE)
    read = getattr(stream, "read1", stream.read)
    start: list[str] = []  # the pieces of a line begun in earlier chunks
    final = False
    while not final:
        chunk = read(_CHUNK_BYTES)
        final = not chunk
        *complete, rest = decoder.decode(chunk, final=final).split("\n")
        for line in complete:
            yield "".join([*start, line])
            start = []
        start.append(rest)
    if any(start):
        yield "".join(start)
