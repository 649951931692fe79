"""Files in any text encoding, read line by line (`ner.data.lines.read_text_lines`): UTF-16 and
UTF-32 (with or without a byte-order mark) as well as the byte-oriented ones, through the column
reader and `load_corpus` (ner-predict input is covered in tests/cli/test_predict.py)."""

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ner.data import load_corpus
from ner.data.columns import ColumnFormat, ColumnFormatError, read_column_file
from ner.data.lines import TooLong, Undecodable, read_text_lines

ENCODINGS = ["utf-8", "utf-8-sig", "latin-1", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "cp037"]
LINES = ["Zürich B-LOC", "", "naïve O\r", "東京 B-LOC"]


def lines_of(data: bytes, encoding: str) -> list[str | Undecodable]:
    return [line for _, line in read_text_lines(io.BytesIO(data), encoding)]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_lines_in_every_encoding(encoding: str) -> None:
    lines = [line for line in LINES if encoding not in ("latin-1", "cp037") or "東" not in line]
    data = "\n".join(lines).encode(encoding)
    assert lines_of(data, encoding) == [line.rstrip("\r") for line in lines]
    numbers = [n for n, _ in read_text_lines(io.BytesIO(data), encoding)]
    assert numbers == list(range(1, len(lines) + 1))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(st.characters(codec="utf-8", exclude_characters="\n\r"), max_size=30)),
    st.sampled_from(["utf-8", "utf-16", "utf-16-le", "utf-32", "utf-32-be"]),
)
def test_any_text_reads_back(lines: list[str], encoding: str) -> None:
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]  # a mark at the start is not text
    data = "".join(f"{line}\n" for line in lines).encode(encoding)
    assert lines_of(data, encoding) == lines


def test_utf16_mark_without_bom_codec_is_dropped_on_line_one() -> None:
    data = "\ufeffParis O\nRome O\n".encode("utf-16-le")
    assert lines_of(data, "utf-16-le") == ["Paris O", "Rome O"]


def test_undecodable_utf16_line_is_named_and_the_rest_read() -> None:
    good = "Paris O\n".encode("utf-16-le")
    bad = "Ro".encode("utf-16-le") + b"\x00\xd8" + "me O\n".encode("utf-16-le")  # lone surrogate
    lines = lines_of(good + bad + good, "utf-16-le")
    assert lines == ["Paris O", Undecodable("bytes 0x00 0xd8 at character 3"), "Paris O"]


def test_a_large_file_streams_in_chunks() -> None:
    lines = [f"word{i} O" for i in range(40_000)] + ["x" * 200_000]
    data = "\n".join(lines).encode("utf-16")
    assert lines_of(data, "utf-16") == lines


class CountingReads(io.BytesIO):
    """A stream that records the largest piece any read asked for or returned."""

    largest = 0

    def readline(self, size=-1):
        line = super().readline(size)
        self.largest = max(self.largest, len(line))
        return line


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1", "utf-16", "utf-32"])
def test_a_line_over_the_limit_is_named_and_never_held_whole(encoding: str) -> None:
    lines = ["Paris O", "x" * 25, "y" * 5000, "Rome O\r", "é" * 10]
    stream = CountingReads("\n".join(lines).encode(encoding))
    read = [line for _, line in read_text_lines(stream, encoding, max_chars=10)]
    split_as_bytes = encoding in ("utf-8", "latin-1")  # else decoded in chunks of 64 KiB
    assert read == [
        "Paris O",
        TooLong("25 characters"),  # read whole (at most 8 bytes a character), then measured
        TooLong("more than 80 bytes" if split_as_bytes else "5,000 characters"),
        "Rome O",
        "é" * 10,
    ]
    assert stream.largest <= 81  # a line past the limit is read in pieces, never whole


def test_utf7_lone_surrogate_is_named() -> None:
    data = b"Paris O\n" + "a\ud83d".encode("utf-7", "surrogatepass") + b"\nRome O\n"
    assert lines_of(data, "utf-7") == ["Paris O", Undecodable("U+D83D at character 2"), "Rome O"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_column_files_in_utf16_and_utf32(tmp_path, isolated_data_dir, encoding: str) -> None:
    text = "-DOCSTART- O\n\nZürich B-LOC\nis O\n\n東京 B-LOC\n"
    for name in ("train", "dev", "test"):
        (tmp_path / f"{name}.txt").write_bytes(text.encode(encoding))
    sentences = read_column_file(tmp_path / "train.txt", ColumnFormat(encoding=encoding))
    assert [s.fields["tokens"] for s in sentences] == [["Zürich", "is"], ["東京"]]
    assert [s.lines for s in sentences] == [[3, 4], [6]]
    corpus = load_corpus(tmp_path, encoding=encoding)
    assert corpus["train"]["tokens"] == [["Zürich", "is"], ["東京"]]


def test_column_file_with_bad_utf16_names_the_line(tmp_path) -> None:
    path = tmp_path / "train.txt"
    path.write_bytes("Paris O\nRo".encode("utf-16-le") + b"\x00\xdc" + " O\n".encode("utf-16-le"))
    with pytest.raises(ColumnFormatError, match=r"train.txt:2: bytes 0x00 0xdc at character 3 is"):
        read_column_file(path, ColumnFormat(encoding="utf-16-le"))


def test_column_file_with_no_text_encoding(tmp_path) -> None:
    path = tmp_path / "train.txt"
    path.write_bytes(b"Paris O\n")
    with pytest.raises(ColumnFormatError, match="'rot13' is not a text encoding"):
        read_column_file(path, ColumnFormat(encoding="rot13"))
