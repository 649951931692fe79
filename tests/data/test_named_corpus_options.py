"""Options given with a named corpus are applied (validation_fraction, max_sentence_tokens) or
refused by name; none is silently dropped. The archive is written here in CoNLL-2000's layout
(the nltk_data zip) and pinned by its own sha256."""

import dataclasses
import hashlib
import zipfile
from pathlib import Path

import pytest

from ner.data import prepare_corpus
from ner.data.columns import ColumnFormatError
from ner.data.corpora import NAMED_CORPORA


def sentence(index: int, length: int = 3) -> str:
    words = [f"w{index}x{k}" for k in range(length - 1)] + ["."]
    tags = ["B-NP"] + ["I-NP"] * (length - 2) + ["O"]
    return "".join(f"{w} NN {t}\n" for w, t in zip(words, tags, strict=True))


@pytest.fixture
def conll2000(tmp_path: Path, isolated_data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A conll2000.zip with 20 train and 4 test sentences (one of 6 tokens), pinned in place of
    the real one; returns its path (the `source=` of the named corpus)."""
    archive = tmp_path / "conll2000.zip"
    train = "\n".join(sentence(i, 6 if i == 7 else 3) for i in range(20))
    test = "\n".join(sentence(100 + i) for i in range(4))
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("conll2000/train.txt", train)
        bundle.writestr("conll2000/test.txt", test)
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    pinned = dataclasses.replace(NAMED_CORPORA["conll2000"], sha256=digest)
    monkeypatch.setitem(NAMED_CORPORA, "conll2000", pinned)
    return str(archive)


def sizes(source: str, **options) -> dict[str, int]:
    corpus, _ = prepare_corpus("conll2000", source=source, **options)
    return {split: corpus[split].num_rows for split in corpus}


def test_validation_fraction_replaces_the_corpus_default(conll2000):
    assert sizes(conll2000) == {"train": 18, "validation": 2, "test": 4}  # the last 10%
    assert sizes(conll2000, validation_fraction=0.3) == {"train": 14, "validation": 6, "test": 4}
    assert sizes(conll2000) == {"train": 18, "validation": 2, "test": 4}  # a cache per fraction


def test_max_sentence_tokens_applies(conll2000):
    assert sizes(conll2000, max_sentence_tokens=6)["train"] == 18
    with pytest.raises(ColumnFormatError, match=r"train\.txt:\d+: .* has over 5 tokens"):
        sizes(conll2000, max_sentence_tokens=5)


@pytest.mark.parametrize(
    "option",
    [
        {"encoding": "latin-1"},
        {"columns": ["tokens", "tags"]},
        {"token_column": 1},
        {"tag_column": 1},
        {"separator": "tab"},
        {"docstart": "#"},
        {"holdout_seed": 3},
        {"revision": "main"},
        {"hub_config": "x"},
    ],
)
def test_options_a_named_corpus_cannot_use_are_refused_by_name(conll2000, option):
    (key,) = option
    with pytest.raises(ValueError, match=rf"^{key}=.*: conll2000 .*does not take it"):
        prepare_corpus("conll2000", source=conll2000, **option)


def test_validation_fraction_on_a_corpus_with_its_own_validation_split(tmp_path, conll2000):
    with pytest.raises(ValueError, match=r"^holdout: conll2000 .* set validation_fraction instead"):
        prepare_corpus("conll2000", source=conll2000, holdout=0.2)
    with pytest.raises(ValueError, match=r"^validation_fraction=0\.3: conll2003 has its own"):
        prepare_corpus("conll2003", source=str(tmp_path / "unused.zip"), validation_fraction=0.3)


@pytest.mark.parametrize("name", ["conll2003", "wnut17"])
def test_nltk_data_url_is_refused_where_nltk_data_is_not_read(name, isolated_data_dir):
    with pytest.raises(ValueError, match=rf"^nltk_data_url='x': {name} does not come from nltk"):
        prepare_corpus(name, nltk_data_url="x")


def test_user_files_refuse_the_options_of_named_and_hub_corpora(tmp_path, isolated_data_dir):
    (tmp_path / "train.txt").write_text("".join(f"w{i} B-X\n\n" for i in range(10)))
    for option in ({"source": "x.zip"}, {"nltk_data_url": "x"}, {"revision": "v1"}):
        (key,) = option
        with pytest.raises(ValueError, match=rf"^{key}=.*: .*train\.txt.* does not take it"):
            prepare_corpus(tmp_path / "train.txt", holdout=0.3, **option)


def test_hub_datasets_refuse_column_file_options(isolated_data_dir):
    with pytest.raises(ValueError, match=r"^encoding='latin-1': hub:x/y is a hub dataset"):
        prepare_corpus("hub:x/y", revision="v1", encoding="latin-1")
    with pytest.raises(ValueError, match=r"^tag_column=2: hub:x/y is a hub dataset; name the"):
        prepare_corpus("hub:x/y", revision="v1", tag_column=2)
