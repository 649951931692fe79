"""User column files through `load_corpus`: formats, options, the cache and every bad input."""

import logging
import re

import pytest

from ner.common.downloads import ChecksumError
from ner.data import load_corpus, prepare_corpus
from ner.data.columns import ColumnFormatError

# Original CoNLL-2003 style: IOB1 tags, 4 columns, -DOCSTART- lines between documents.
IOB1_TRAIN = """-DOCSTART- -X- -X- O

EU NNP I-NP I-ORG
rejects VBZ I-VP O
German JJ I-NP I-MISC
call NN I-NP O

Peter NNP I-NP I-PER
Blackburn NNP I-NP I-PER

-DOCSTART- -X- -X- O

Ajax NNP I-NP I-ORG
PSV NNP I-NP B-ORG
"""
IOB1_DEV = "-DOCSTART- -X- -X- O\n\nBonn NNP I-NP I-LOC\n"
IOB1_TEST = "Paris NNP I-NP I-LOC\nwins VBZ I-VP O\n"
COLUMNS = ["tokens", "pos", "chunk", "tags"]


def write(folder, files: dict[str, str | bytes]):
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = folder / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return folder


@pytest.fixture
def iob1_folder(tmp_path):
    return write(
        tmp_path / "corpus",
        {"eng.train": IOB1_TRAIN, "eng.testa": IOB1_DEV, "eng.testb": IOB1_TEST},
    )


def test_folder_of_column_files(iob1_folder, isolated_data_dir):
    corpus, info = prepare_corpus(iob1_folder, columns=COLUMNS)
    assert info.source_scheme == info.tag_scheme == "iob1"
    assert info.sentences == {"train": 3, "validation": 1, "test": 1}
    assert info.tokens == {"train": 8, "validation": 1, "test": 2}
    train = corpus["train"]
    names = train.features["tags"].feature
    assert train["tokens"][2] == ["Ajax", "PSV"]
    assert names.int2str(train["tags"][2]) == ["I-ORG", "B-ORG"]
    assert train["pos"][0] == ["NNP", "VBZ", "JJ", "NN"] and train["chunk"][1] == ["I-NP"] * 2
    assert train["document_id"] == [0, 0, 1]
    assert corpus["test"].features == train.features  # one ClassLabel for all splits
    assert names.names == ["O", "I-LOC", "I-MISC", "B-ORG", "I-ORG", "I-PER"]


def test_conversion_on_load(iob1_folder, isolated_data_dir):
    corpus = load_corpus(iob1_folder, columns=COLUMNS, tag_scheme="bioes")
    tags = corpus["train"].features["tags"].feature
    assert tags.int2str(corpus["train"]["tags"][2]) == ["S-ORG", "S-ORG"]
    assert tags.int2str(corpus["train"]["tags"][1]) == ["B-PER", "E-PER"]


def test_files_separator_picked_columns_and_carved_validation(tmp_path, isolated_data_dir):
    rows = "".join(f"w{i}\tX\t{'B-A' if i % 2 else 'O'}\n\n" for i in range(10))
    folder = write(tmp_path, {"a.tsv": rows, "b.tsv": "z\tX\tO\n"})
    corpus = load_corpus(
        "mine",
        files={"train": folder / "a.tsv", "test": folder / "b.tsv"},
        separator="\t",
        tag_column=2,
        validation_fraction=0.2,
    )
    assert corpus["train"].column_names == ["tokens", "tags", "document_id"]
    assert corpus["train"]["tokens"] == [[f"w{i}"] for i in range(8)]
    assert corpus["validation"]["tokens"] == [["w8"], ["w9"]]  # the last 20% of train
    with pytest.raises(ValueError, match=r"no validation split .*holdout=0.1"):
        load_corpus(
            "mine", files={"train": folder / "a.tsv", "test": folder / "b.tsv"}, separator="\t"
        )


def prepared(data_dir) -> list:
    """The prepared corpus folders (not the hidden lock files beside them)."""
    return [p for p in (data_dir / "corpora").iterdir() if not p.name.startswith(".")]


def test_cache_is_reused_and_invalidated(iob1_folder, isolated_data_dir):
    first = load_corpus(iob1_folder, columns=COLUMNS)
    cached = prepared(isolated_data_dir)
    assert len(cached) == 1
    again = load_corpus(iob1_folder, columns=COLUMNS)
    assert {f["filename"] for f in again["train"].cache_files} == {
        f["filename"] for f in first["train"].cache_files
    }
    assert str(cached[0]) in again["train"].cache_files[0]["filename"]
    (iob1_folder / "eng.testb").write_text(IOB1_TEST.replace("Paris", "Lyon"))
    changed = load_corpus(iob1_folder, columns=COLUMNS)
    assert changed["test"]["tokens"] == [["Lyon", "wins"]]
    assert len(prepared(isolated_data_dir)) == 2


@pytest.mark.parametrize(
    ("train", "message"),
    [
        ("a X O\nb O\n", r"eng.train:2: expected 3 columns \(tokens pos tags\), found 2: 'b O'"),
        ("a X O\nb X Z-PER\n", r"eng.train:2: unknown tag 'Z-PER'"),
        ("a X O\nb X PER\n", r"eng.train:2: unknown tag 'PER'"),
        ("", r"eng.train:1: no sentences \(the file is empty\)"),
        ("a X O\n" * 5001, r"eng.train:5001: the sentence starting at line 1 has over 5000 tokens"),
        ("\n\n  \n", r"eng.train:1: no sentences"),
        (b"a X O\ncaf\xe9 X O\n", r"eng.train:2: byte 0xe9 at column 4 is not valid utf-8"),
        # B- opens two chunks (so IOB2), then an I- opens one after O: no scheme allows it.
        (
            "a X B-PER\nb X O\nc X B-LOC\n\nd X O\ne X I-LOC\n",
            r"eng.train:6: tag 'I-LOC' after 'O' is not allowed in IOB2.*lenient=True",
        ),
    ],
)
def test_bad_input_names_file_and_line(tmp_path, isolated_data_dir, train, message):
    folder = write(tmp_path, {"eng.train": train, "eng.testa": "x X O\n", "eng.testb": "y X O\n"})
    with pytest.raises(ColumnFormatError, match=message):
        load_corpus(folder, columns=["tokens", "pos", "tags"])


def test_bioes_errors_name_the_line(tmp_path, isolated_data_dir):
    folder = write(
        tmp_path, {"train": "a S-PER\n\nb O\nc I-PER\nd E-PER\n", "dev": "x O\n", "test": "y O\n"}
    )
    with pytest.raises(ColumnFormatError, match=r"train:4: tag 'I-PER' after 'O' .* BIOES"):
        load_corpus(folder)


def test_lenient_repairs_and_reports(tmp_path, isolated_data_dir, caplog):
    train = "a B-PER\nb O\nc B-LOC\n\nd O\ne I-LOC\nf I-LOC\n\ng I-ORG\n"
    folder = write(tmp_path, {"train": train, "dev": "x O\n", "test": "y O\n"})
    with caplog.at_level(logging.WARNING):
        corpus = load_corpus(folder, lenient=True)
    tags = corpus["train"].features["tags"].feature
    assert tags.int2str(corpus["train"]["tags"][1]) == ["O", "B-LOC", "I-LOC"]
    assert tags.int2str(corpus["train"]["tags"][2]) == ["B-ORG"]
    assert re.search(r"repaired 2 tags in .*train", caplog.text)
    _, info = prepare_corpus(folder, lenient=True)  # from the cache: the report is kept
    assert info.repairs == {"train": 2, "validation": 0, "test": 0}


def test_other_encodings(tmp_path, isolated_data_dir):
    folder = write(tmp_path, {"train": b"caf\xe9 O\n", "dev": b"x O\n", "test": b"y O\n"})
    assert load_corpus(folder, encoding="latin-1")["train"]["tokens"] == [["café"]]


def test_named_corpus_checksum_mismatch(tmp_path, isolated_data_dir):
    wrong = write(tmp_path, {"conll2000.zip": b"not the pinned archive"}) / "conll2000.zip"
    with pytest.raises(ChecksumError, match=r"conll2000\.zip: expected sha256 01e65164"):
        load_corpus("conll2000", source=str(wrong))


def test_unknown_names_and_folders(tmp_path, isolated_data_dir):
    with pytest.raises(FileNotFoundError, match=r"not a named corpus .*conll2003"):
        load_corpus("conll2033")
    with pytest.raises(FileNotFoundError, match="no train file"):
        load_corpus(write(tmp_path / "empty", {"notes.md": "x"}))
    with pytest.raises(ValueError, match=r"files must map 'train' .*\['dev', 'train'\]"):
        load_corpus("mine", files={"train": "a.txt", "dev": "b.txt"})
    with pytest.raises(ValueError, match="unknown tag_scheme 'bilou'"):
        load_corpus("conll2003", tag_scheme="bilou")
