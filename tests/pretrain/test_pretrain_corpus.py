"""Corpus reading, bad input, held-out choice and frequency-sorted encoding."""

import io
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from ner.pretrain import sources as pretrain_sources
from ner.pretrain.corpus import (
    CorpusError,
    encode_corpus,
    is_heldout,
    prepare_source,
    read_sentences,
)
from ner.pretrain.sources import SOURCES, reuters_bodies
from ner.pretrain.vocabulary import SPECIAL_TOKENS, softmax_vocabulary, vocabulary_size


def test_read_sentences_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("The cat sat .\n\n  \nA dog  barked !\n", encoding="utf-8")
    assert list(read_sentences(path, 10)) == [
        ["The", "cat", "sat", "."],
        ["A", "dog", "barked", "!"],
    ]


def test_empty_corpus_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_text("\n \n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"empty\.txt: no sentences"):
        list(read_sentences(path, 10))


def test_non_utf8_text_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("fine line\nCaf\xe9 au lait\n".encode("latin-1"))
    with pytest.raises(CorpusError, match=r"latin1\.txt:2: not UTF-8.*iconv"):
        list(read_sentences(path, 10))


def test_binary_data_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "archive.txt"
    path.write_bytes(b"a readable line\nPK\x03\x04\x00\x00 more\n")  # valid UTF-8, not text
    with pytest.raises(CorpusError, match=r"archive\.txt:2: holds NUL bytes"):
        list(read_sentences(path, 50))


def test_a_line_of_10k_tokens_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_text("ok .\n" + " ".join(["word"] * 10_000) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"long\.txt:2: 10000 tokens on one line"):
        list(read_sentences(path, 400))


def test_unknown_source_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="neither a named source"):
        encode_corpus([str(tmp_path / "missing.txt")], 5, 10)


def test_heldout_choice_is_fixed_and_follows_the_text() -> None:
    sentences = [[f"w{i}", "x"] for i in range(2000)]
    chosen = [is_heldout(s, 5) for s in sentences]
    assert chosen == [is_heldout(list(s), 5) for s in sentences]
    assert 2 <= sum(chosen) <= 25  # about 0.5 %


def test_encoding_is_frequency_sorted_with_specials_first(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("b a a\nc a b\n", encoding="utf-8")
    corpus = encode_corpus([str(path)], 0, 10)
    assert corpus.types == [*SPECIAL_TOKENS, "a", "b", "c"]
    assert corpus.train_counts.tolist() == [0, 0, 0, 3, 2, 1]
    assert corpus.train.ids.tolist() == [4, 3, 3, 5, 3, 4]
    assert corpus.train.offsets.tolist() == [0, 3, 6]
    assert corpus.heldout.num_sentences == 0
    assert corpus.source_stats == {str(path): {"train": 6, "heldout": 0}}
    assert vocabulary_size(corpus.train_counts, None, 2) == 5
    assert vocabulary_size(corpus.train_counts, 4, 1) == 4
    softmax_vocabulary(corpus.types, 5).write_lines(tmp_path / "vocab.txt")
    assert (tmp_path / "vocab.txt").read_text() == "<S>\n</S>\n<UNK>\na\nb\n"


def test_split_keeps_every_sentence(tmp_path: Path, zipf_text: Path) -> None:
    corpus = encode_corpus([str(zipf_text)], 100, 50)
    lines = zipf_text.read_text().splitlines()
    assert corpus.train.num_sentences + corpus.heldout.num_sentences == len(lines)
    assert corpus.train.num_tokens + corpus.heldout.num_tokens == sum(len(x.split()) for x in lines)
    assert corpus.heldout.num_sentences > 0
    first = corpus.train.ids[corpus.train.offsets[0] : corpus.train.offsets[1]]
    train_lines = [line for line in lines if not is_heldout(line.split(), 100)]
    assert [corpus.types[i] for i in first] == train_lines[0].split()
    assert np.all(np.diff(corpus.train_counts[3:]) <= 0)


def _sgml_archive(path: Path) -> Path:
    article = (
        '<REUTERS NEWID="1"><TEXT>&#2;\n<TITLE>T</TITLE><BODY>Shares of &lt;ABC Corp&gt; rose\n'
        "3 pct on Monday.\n    The company said it was pleased.\n Reuter\n&#3;</BODY></TEXT>\n"
        "</REUTERS>\n"
        '<REUTERS NEWID="2"><TEXT TYPE="BRIEF">&#2;\n<TITLE>ONLY A TITLE</TITLE></TEXT></REUTERS>\n'
    )
    with tarfile.open(path, "w:gz") as tar:
        data = article.encode("latin-1")
        info = tarfile.TarInfo("reut2-000.sgm")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return path


def test_reuters_bodies_are_unescaped_and_unsigned(tmp_path: Path) -> None:
    bodies = list(reuters_bodies(_sgml_archive(tmp_path / "reuters.tar.gz")))
    assert len(bodies) == 1
    assert bodies[0].startswith("Shares of <ABC Corp> rose\n3 pct")
    assert bodies[0].rstrip().endswith("pleased.")
    assert "Reuter" not in bodies[0]


def evaluation_text(monkeypatch: pytest.MonkeyPatch, *sentences: str) -> None:
    """Stand in small evaluation text for the real corpora's dev/test splits (which the tests
    marked `mirror`, in test_pretrain_sources.py, read)."""
    excluded = frozenset(tuple(sentence.split()) for sentence in sentences)
    monkeypatch.setattr(pretrain_sources, "evaluation_sentences", lambda: excluded)


def test_reuters_source_tokenizes_like_conll(
    tmp_path: Path, isolated_data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NER_REUTERS_URL", str(_sgml_archive(tmp_path / "reuters.tar.gz")))
    evaluation_text(monkeypatch, "Unrelated words .")
    path = prepare_source("reuters", 5)
    assert path.read_text().splitlines() == [
        "Shares of < ABC Corp",
        "> rose 3 pct on",
        "Monday .",
        "The company said it was",
        "pleased .",
    ]


def test_sentences_equal_to_evaluation_text_are_left_out(
    tmp_path: Path, isolated_data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NER_REUTERS_URL", str(_sgml_archive(tmp_path / "reuters.tar.gz")))
    evaluation_text(monkeypatch, "The company said it was pleased .")
    assert prepare_source("reuters", 5).read_text().splitlines() == [
        "Shares of < ABC Corp",
        "> rose 3 pct on",
        "Monday .",
    ]


def nltk_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, members: dict) -> None:
    """packages/corpora/<name>.zip of an nltk_data folder, found through $NER_NLTK_DATA_URL."""
    archive = tmp_path / "nltk_data" / "packages" / "corpora" / f"{name}.zip"
    archive.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive, "w") as out:
        for member, text in members.items():
            out.writestr(member, text)
    monkeypatch.setenv("NER_NLTK_DATA_URL", str(tmp_path / "nltk_data"))


def test_nltk_raw_text_and_brown_read_their_archive_layouts(
    tmp_path: Path, isolated_data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = ".START \n\nPierre Vinken, 61 years old, will join the board.\n"
    nltk_data(tmp_path, monkeypatch, "treebank", {"treebank/raw/wsj_0001": raw, "treebank/x": "no"})
    assert list(SOURCES["treebank"]()) == [
        ["Pierre", "Vinken", ",", "61", "years", "old", ",", "will", "join", "the", "board", "."]
    ]
    tagged = "\n\n\tThe/at Fulton/np-tl County/nn-tl said/vbd ``/`` no/at ''/'' ./.\n"
    nltk_data(tmp_path, monkeypatch, "brown", {"brown/ca01": tagged, "brown/README": "x/y"})
    assert list(SOURCES["brown"]()) == [["The", "Fulton", "County", "said", '"', "no", '"', "."]]


@pytest.mark.mirror
def test_nltk_sources_read_from_the_mirror() -> None:
    treebank = next(SOURCES["treebank"]())
    assert treebank[:4] == ["Pierre", "Vinken", ",", "61"]
    brown = next(SOURCES["brown"]())
    assert brown[:3] == ["The", "Fulton", "County"] and '"' in brown and "``" not in brown
