"""Decoding text files line by line, as every reader of user files does.

A byte-order mark (U+FEFF, which Windows editors write at the start of UTF-8 files) is not text:
left in, it would become part of the first token, which then matches no vocabulary entry.
"""

BYTE_ORDER_MARK = "\ufeff"


def decode_line(raw: bytes, number: int, encoding: str) -> str:
    """Line `number` (1-based) of a file, decoded, without its line break and, on the first
    line, without a byte-order mark. Raises `UnicodeDecodeError` for bytes not in `encoding`."""
    text = raw.decode(encoding).rstrip("\r\n")
    return text.removeprefix(BYTE_ORDER_MARK) if number == 1 else text
