"""`ner.corpus.inputs`: which files an argument stands for and where each one's output goes."""

import gzip
from pathlib import Path, PurePosixPath

import pytest

from ner.common.errors import InputError
from ner.corpus.inputs import discover, open_decompressed, output_name


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("a.txt", "a.jsonl"),
        ("sub/b.txt.gz", "sub/b.jsonl"),
        ("c.conll.xz", "c.jsonl"),
        ("notes", "notes.jsonl"),
        ("d.bz2", "d.jsonl"),
    ],
)
def test_output_names_drop_compression_and_take_the_format_extension(relative, expected):
    assert output_name(PurePosixPath(relative), "jsonl") == expected


def test_output_name_for_conll_output():
    assert output_name(PurePosixPath("x/y.txt"), "conll") == "x/y.conll"


def make_tree(root: Path) -> None:
    for name in ["a.txt", "sub/b.txt.gz", ".hidden/c.txt", "sub/.d.txt", "out/old.txt"]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")


def test_a_folder_counts_from_itself_skipping_hidden_files_and_the_output_folder(tmp_path):
    make_tree(tmp_path / "in")
    found = discover([str(tmp_path / "in")], tmp_path / "in" / "out", "jsonl")
    assert [(i.path.relative_to(tmp_path).as_posix(), i.output) for i in found] == [
        ("in/a.txt", "a.jsonl"),
        ("in/sub/b.txt.gz", "sub/b.jsonl"),
    ]


def test_a_named_file_or_pattern_match_counts_from_its_own_folder(tmp_path):
    make_tree(tmp_path / "in")
    found = discover(
        [str(tmp_path / "in/sub/b.txt.gz"), str(tmp_path / "in/*.txt")], tmp_path / "o", "jsonl"
    )
    assert [i.output for i in found] == ["b.jsonl", "a.jsonl"]


def test_two_inputs_for_one_output_and_an_empty_pattern_are_errors(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "a.txt").write_text("1\n")
    (tmp_path / "x" / "a.txt.gz").write_bytes(gzip.compress(b"2\n"))
    with pytest.raises(InputError, match="would both be written to"):
        discover([str(tmp_path / "a.txt"), str(tmp_path / "x/a.txt.gz")], tmp_path / "o", "jsonl")
    with pytest.raises(InputError, match="matches no file"):
        discover([str(tmp_path / "*.none")], tmp_path / "o", "jsonl")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no input files in"):
        discover([str(tmp_path / "empty")], tmp_path / "o", "jsonl")
    with pytest.raises(InputError, match="--format html"):
        discover([str(tmp_path / "a.txt")], tmp_path / "o", "html")


def test_a_missing_named_file_is_kept_as_an_input_to_fail_alone(tmp_path):
    found = discover([str(tmp_path / "gone.txt")], tmp_path / "o", "jsonl")
    assert [i.output for i in found] == ["gone.jsonl"]


def test_open_decompressed_reads_gzip(tmp_path):
    path = tmp_path / "a.txt.gz"
    path.write_bytes(gzip.compress(b"hello\n"))
    with open(path, "rb") as raw:
        assert open_decompressed(raw, path).read() == b"hello\n"
