"""Bringing one's own corpus: one file with carved dev/test, folders by common file names,
``files=`` without a name, byte-order marks, empty tokens and empty sentences."""

import logging

import pytest

from ner.data import load_corpus, prepare_corpus
from ner.data.columns import ColumnFormat, ColumnFormatError, read_column_file


def one_file_corpus(path, sentences: int = 40, separator: str = "\t"):
    """A tab-separated token/POS/tag file with a -DOCSTART- line and whitespace-only separators."""
    lines = ["-DOCSTART-\t-X-\tO", ""]
    for i in range(sentences):
        lines += [f"Anna{i}\tNNP\tB-PER", "visited\tVBD\tO", f"Rome{i}\tNNP\tB-LOC", " \t "]
    path.write_text("\n".join(lines).replace("\t", separator) + "\n")
    return path


def first_tokens(split) -> list[str]:
    return [tokens[0] for tokens in split["tokens"]]


def test_one_file_with_holdout(tmp_path, isolated_data_dir):
    path = one_file_corpus(tmp_path / "mydata.tsv")
    corpus, info = prepare_corpus(path, columns=["tokens", "pos", "tags"], holdout=0.1)
    assert info.name == "mydata"
    assert info.sentences == {"train": 32, "validation": 4, "test": 4}
    assert info.holdout == {"fraction": 0.1, "seed": 0, "splits": ["validation", "test"]}
    assert corpus["train"]["pos"][0] == ["NNP", "VBD", "NNP"]
    every = first_tokens(corpus["train"]) + first_tokens(corpus["validation"])
    every += first_tokens(corpus["test"])
    assert sorted(every) == sorted(f"Anna{i}" for i in range(40))  # a partition of the file
    # Deterministic: rebuilding (a fresh data folder) carves the same sentences.
    (tmp_path / "other").mkdir()
    again, _ = prepare_corpus(path, columns=["tokens", "pos", "tags"], holdout=0.1)
    assert again["test"]["tokens"] == corpus["test"]["tokens"]
    reseeded, info = prepare_corpus(
        path, columns=["tokens", "pos", "tags"], holdout=0.1, holdout_seed=7
    )
    assert reseeded["test"]["tokens"] != corpus["test"]["tokens"] and info.holdout["seed"] == 7


def test_holdout_never_puts_a_repeated_sentence_in_train_and_in_test(tmp_path, isolated_data_dir):
    """News corpora repeat sentences (bylines, "-- Reuters ."): all copies of one sentence go to
    the same side, or the test scores would count sentences the model was trained on."""
    lines = []
    for i in range(60):
        sentence = ["Reuters B-ORG", ". O"] if i % 3 == 0 else [f"Anna{i} B-PER", "left O"]
        lines += [*sentence, ""]
    path = tmp_path / "repeats.txt"
    path.write_text("\n".join(lines))
    for seed in range(5):
        corpus = load_corpus(path, holdout=0.2, holdout_seed=seed)
        texts = {split: {" ".join(s) for s in corpus[split]["tokens"]} for split in corpus}
        assert not texts["train"] & texts["test"], seed
        assert not texts["train"] & texts["validation"], seed
        assert not texts["validation"] & texts["test"], seed
        assert sum(corpus[split].num_rows for split in corpus) == 60


def test_same_carve_in_a_fresh_data_folder(tmp_path, monkeypatch):
    path = one_file_corpus(tmp_path / "mydata.tsv", separator=" ")
    carved = []
    for folder in ("a", "b"):
        monkeypatch.setenv("NER_DATA_DIR", str(tmp_path / folder))
        carved.append(load_corpus(path, holdout=0.2)["validation"]["tokens"])
    assert carved[0] == carved[1] and len(carved[0]) == 8


def test_one_file_without_holdout_says_what_to_pass(tmp_path, isolated_data_dir):
    path = one_file_corpus(tmp_path / "mydata.tsv")
    with pytest.raises(ValueError, match=r"mydata: no validation or test split \(pass holdout=0.1"):
        load_corpus(path)


def test_holdout_fills_only_the_missing_split(tmp_path, isolated_data_dir):
    folder = tmp_path / "corpus"
    folder.mkdir()
    one_file_corpus(folder / "train.conll")
    (folder / "test.conll").write_text("Oslo\tNNP\tB-LOC\n")
    _corpus, info = prepare_corpus(folder, columns=["tokens", "_", "tags"], holdout=0.25)
    assert info.sentences == {"train": 30, "validation": 10, "test": 1}
    assert info.holdout["splits"] == ["validation"]


@pytest.mark.parametrize(
    "names",
    [
        ("train.txt", "dev.txt", "test.txt"),
        ("train.txt", "valid.txt", "test.txt"),
        ("eng.train", "eng.testa", "eng.testb"),
        ("wnut17-train.conll", "wnut17-dev.conll", "wnut17-test.conll"),
        ("my_corpus_train.tsv", "my_corpus_validation.tsv", "my_corpus_test.tsv"),
        ("train.iob", "devel.iob", "test.iob"),
    ],
)
def test_folders_by_common_names(tmp_path, isolated_data_dir, names):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "README.md").write_text("not a split\n")
    for name, token in zip(names, ("a", "b", "c"), strict=True):
        (folder / name).write_text(f"{token}\tB-X\n")
    corpus = load_corpus(folder)
    assert [corpus[s]["tokens"] for s in corpus] == [[["a"]], [["b"]], [["c"]]]


def test_a_file_name_naming_two_splits_is_an_error(tmp_path, isolated_data_dir):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "train_dev.txt").write_text("a O\n")
    with pytest.raises(ValueError, match=r"train_dev.txt could be the train or the validation"):
        load_corpus(folder)


def test_files_without_a_name(tmp_path, isolated_data_dir):
    folder = tmp_path / "mine"
    folder.mkdir()
    for split in ("a", "b", "c"):
        (folder / f"{split}.txt").write_text(f"{split} O\n")
    corpus, info = prepare_corpus(
        files={
            s: folder / f"{f}.txt"
            for s, f in zip(("train", "validation", "test"), "abc", strict=True)
        }
    )
    assert info.name == "mine" and corpus["test"]["tokens"] == [["c"]]
    with pytest.raises(ValueError, match="needs a corpus name, a folder, a file or files="):
        load_corpus()


def test_holdout_on_a_named_corpus_is_an_error(isolated_data_dir):
    with pytest.raises(ValueError, match="holdout: conll2003 has its own validation and test"):
        load_corpus("conll2003", holdout=0.1)


def test_byte_order_mark_is_not_part_of_the_first_token(tmp_path, isolated_data_dir):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "train.txt").write_bytes("\ufeffParis B-LOC\nis O\n".encode())
    (folder / "dev.txt").write_bytes("\ufeff-DOCSTART- O\n\nRome B-LOC\n".encode())
    (folder / "test.txt").write_bytes(b"\xef\xbb\xbfOslo B-LOC\n")
    corpus = load_corpus(folder)
    assert [corpus[s]["tokens"][0][0] for s in corpus] == ["Paris", "Rome", "Oslo"]
    assert corpus["validation"].num_rows == 1  # the -DOCSTART- line was recognised


def test_a_mark_inside_the_file_is_kept(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text("a O\n\n\ufeffb O\n")
    sentences = read_column_file(path, ColumnFormat())
    assert [s.fields["tokens"] for s in sentences] == [["a"], ["\ufeffb"]]


def test_an_empty_token_names_file_and_line(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text("a\tO\n\tO\n")
    with pytest.raises(ColumnFormatError, match=r"train.tsv:2: the token column is empty"):
        read_column_file(path, ColumnFormat(separator="\t"))


def test_empty_sentences_are_dropped_and_counted(tmp_path, isolated_data_dir, caplog):
    """A hub dataset row with no tokens: the CRF cannot score it, so it is dropped and logged."""
    import datasets

    features = datasets.Features(
        {
            "tokens": datasets.Sequence(datasets.Value("string")),
            "ner_tags": datasets.Sequence(datasets.ClassLabel(names=["O", "B-PER"])),
        }
    )
    folder = tmp_path / "hub"
    folder.mkdir()
    rows = {
        "train": {"tokens": [["Ann"], [], ["runs"], []], "ner_tags": [[1], [], [0], []]},
        "validation": {"tokens": [["Bob"]], "ner_tags": [[1]]},
        "test": {"tokens": [["Cy"], []], "ner_tags": [[1], []]},
    }
    for split, columns in rows.items():
        datasets.Dataset.from_dict(columns, features=features).to_parquet(
            folder / f"{split}.parquet"
        )
    with caplog.at_level(logging.WARNING):
        corpus = load_corpus(f"hub:{folder}")
    assert corpus["train"]["tokens"] == [["Ann"], ["runs"]] and corpus["test"].num_rows == 1
    assert "dropped 2 empty sentences (no tokens) from hub:" in caplog.text
    _, info = prepare_corpus(f"hub:{folder}")
    assert info.dropped_empty == {"train": 2, "validation": 0, "test": 1}


@pytest.mark.parametrize("separator", ["tab", "\\t", "\t"])
def test_a_tab_separator_by_name(tmp_path, isolated_data_dir, separator):
    """Hydra passes `separator=\\t` as a backslash and a t: names work on any command line."""
    path = tmp_path / "spaced.tsv"
    path.write_text("New York\tB-LOC\nis\tO\n\nRome\tB-LOC\n\nOslo\tB-LOC\n")
    corpus = load_corpus(path, separator=separator, holdout=0.3)
    tokens = [t for split in corpus.values() for sentence in split["tokens"] for t in sentence]
    assert "New York" in tokens
