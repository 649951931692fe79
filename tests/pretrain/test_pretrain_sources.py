"""Pretraining text never holds evaluation text: no dev/test split is read, and no prepared
sentence equals a sentence of a split we evaluate taggers on. These read the real evaluation
corpora, so they run only with a corpus mirror (tests/conftest.py)."""

from pathlib import Path

import pytest

from ner.data import load_corpus
from ner.pretrain import corpus as pretrain_corpus
from ner.pretrain.corpus import prepare_source
from ner.pretrain.sources import SOURCES, evaluation_sentences, normalized

pytestmark = pytest.mark.mirror


@pytest.fixture(scope="module")
def excluded() -> frozenset[tuple[str, ...]]:
    return evaluation_sentences()


def test_evaluation_sentences_cover_every_dev_and_test_split(excluded) -> None:
    for corpus in ("conll2003", "conll2000", "conll2002_nl", "conll2002_es"):
        loaded = load_corpus(corpus)
        for split in ("validation", "test"):
            sentences = [normalized(t) for t in loaded[split]["tokens"] if t]
            assert sentences and all(s in excluded for s in sentences), (corpus, split)


def test_conll2000_source_reads_only_the_training_part_of_train_txt() -> None:
    conll2000 = load_corpus("conll2000")
    read = list(SOURCES["conll2000_train"]())
    assert read == [list(normalized(t)) for t in conll2000["train"]["tokens"] if t]
    # train.txt holds 8,936 sentences; its last 10% are the validation split.
    assert len(read) + len(conll2000["validation"]) == 8936


def test_prepared_text_leaves_out_sentences_equal_to_evaluation_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    test_sentence = load_corpus("conll2003")["test"]["tokens"][5]
    source = [["An", "ordinary", "sentence", "."], list(test_sentence), ["He", "said", "."]]
    monkeypatch.setitem(SOURCES, "with_test_text", lambda: iter(source))
    monkeypatch.setattr(pretrain_corpus, "cache_path", lambda name: tmp_path / f"{name}.txt")
    lines = prepare_source("with_test_text", 400).read_text(encoding="utf-8").splitlines()
    assert lines == ["An ordinary sentence .", "He said ."]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_no_prepared_pretraining_sentence_is_an_evaluation_sentence(name, excluded) -> None:
    lines = prepare_source(name, 400).read_text(encoding="utf-8").splitlines()
    found = [line for line in lines if normalized(line.split()) in excluded]
    assert len(lines) > 1000 and not found, found[:5]
