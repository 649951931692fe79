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
# A line of n characters is read whole only while it has at most this many bytes per character
# (UTF-8 takes at most 4, UTF-7 up to about 8), so a line over the limit is never held whole.
_MAX_BYTES_PER_CHAR = 8
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


@dataclass(frozen=True)
class TooLong:
    """A line longer than the reader allows; `length` says how long, e.g. ``2,000,000
    characters`` (or ``more than 8,000,000 bytes`` for one that was not read whole)."""

    length: str


Read = str | Undecodable | TooLong


def read_text_lines(
    stream: IO[bytes], encoding: str, max_chars: int | None = None
) -> Iterator[tuple[int, Read]]:
    """``(number, line)`` for each line of `stream` (numbered from 1): its text without the line
    break (and, on line 1, without a byte-order mark), or `Undecodable` when it holds bytes that
    are not valid `encoding`, or `TooLong` when it holds more than `max_chars` characters (a
    line that long is never held whole: memory stays bounded); the lines after a bad one are
    read as usual."""
    if not splits_as_bytes(encoding):
        for number, line in enumerate(_decoded_lines(stream, encoding, max_chars), 1):
            if isinstance(line, str):
                line = line.rstrip("\r")
                line = line.removeprefix(BYTE_ORDER_MARK) if number == 1 else line
            yield number, line if isinstance(line, TooLong) else _checked(line, max_chars)
        return
    max_bytes = None if max_chars is None else _MAX_BYTES_PER_CHAR * max_chars
    for number, raw in enumerate(_byte_lines(stream, max_bytes), 1):
        if raw is None:
            yield number, TooLong(f"more than {max_bytes:,} bytes")
            continue
        try:
            line = decode_line(raw, number, encoding)
        except UnicodeDecodeError as error:
            where = f"byte {raw[error.start]:#04x} at column {error.start + 1}"
            yield number, Undecodable(where)
        else:  # UTF-7 decodes a lone surrogate without complaint
            yield number, _checked(line, max_chars)


def _checked(line: str, max_chars: int | None) -> Read:
    """`line`, or `TooLong` or `Undecodable` (`_lone_surrogate`) for what it holds."""
    if max_chars is not None and len(line) > max_chars:
        return TooLong(f"{len(line):,} characters")
    return _lone_surrogate(line) or line


def _byte_lines(stream: IO[bytes], max_bytes: int | None) -> Iterator[bytes | None]:
    """The lines of `stream` as bytes; None for one longer than `max_bytes`, which is read past
    in pieces of that size and never held whole."""
    if max_bytes is None:
        yield from stream
        return
    while raw := stream.readline(max_bytes + 1):
        if len(raw) <= max_bytes or raw.endswith(b"\n"):
            yield raw
            continue
        while raw and not raw.endswith(b"\n"):
            raw = stream.readline(max_bytes)
        yield None


def _lone_surrogate(line: str) -> Undecodable | None:
    """Where `line` holds a lone surrogate, which is no text (no encoder writes it): one decoded
    as such, or the mark of undecodable bytes (named by their values); None if it holds none."""
    bad = _LONE_SURROGATE.search(line)
    if bad is None:
        return None
    marked = _MARKED.match(line, bad.start())
    if marked is None:  # a lone surrogate decoded as such
        where = f"U+{ord(bad.group()):04X}"
    else:
        values = [f"{ord(c) - 0xDC00:#04x}" for c in marked.group()]
        where = f"{'byte' if len(values) == 1 else 'bytes'} {' '.join(values)}"
    return Undecodable(f"{where} at character {bad.start() + 1}")


def _decoded_lines(
    stream: IO[bytes], encoding: str, max_chars: int | None
) -> Iterator[str | TooLong]:
    """The lines of `stream` decoded as one text and split at "\\n" (undecodable bytes marked),
    read in chunks so that a large file or a pipe streams; `TooLong` for a line of more than
    `max_chars` characters, whose pieces are dropped as they come."""
    decoder = codecs.getincrementaldecoder(encoding)(_MARK_UNDECODABLE)
    read = getattr(stream, "read1", stream.read)
    start: list[str] = []  # the pieces of a line begun in earlier chunks
    size, final = 0, False  # how many characters the line has so far
    limit = float("inf") if max_chars is None else max_chars + 1  # + 1: its "\r" is no text
    while not final:
        chunk = read(_CHUNK_BYTES)
        final = not chunk
        *complete, rest = decoder.decode(chunk, final=final).split("\n")
        for line in complete:
            size += len(line)
            yield "".join([*start, line]) if size <= limit else TooLong(f"{size:,} characters")
            start, size = [], 0
        size += len(rest)
        if size <= limit:
            start.append(rest)
        else:
            start = []
    if size or any(start):
        yield "".join(start) if size <= limit else TooLong(f"{size:,} characters")
