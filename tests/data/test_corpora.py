"""The named corpora, on the real data (downloaded once into data/, then cached)."""

import re
from importlib.resources import files

import datasets
import pytest

from ner.data import prepare_corpus
from ner.data.corpora import NAMED_CORPORA

NER_LABELS = ["O", "B-LOC", "I-LOC", "B-MISC", "I-MISC", "B-ORG", "I-ORG", "B-PER", "I-PER"]


@pytest.mark.slow
def test_conll2003_counts():
    corpus, info = prepare_corpus("conll2003")
    assert {s: corpus[s].num_rows for s in corpus} == {
        "train": 14041,
        "validation": 3250,
        "test": 3453,
    }
    assert info.tokens == {"train": 203621, "validation": 51362, "test": 46435}
    assert {s: sum(map(len, corpus[s]["tokens"])) for s in corpus} == info.tokens
    assert info.source_scheme == "iob2" and info.repairs == {"train": 0, "validation": 0, "test": 0}
    tags = corpus["train"].features["tags"]
    assert isinstance(tags.feature, datasets.ClassLabel) and tags.feature.names == NER_LABELS
    first = corpus["train"][0]
    assert first["tokens"][:3] == ["EU", "rejects", "German"]
    assert tags.feature.int2str(first["tags"][:3]) == ["B-ORG", "O", "B-MISC"]
    assert first["pos"][:2] == ["NNP", "VBZ"] and first["chunk"][:2] == ["B-NP", "B-VP"]
    # -DOCSTART- lines become document boundaries: 946 / 216 / 231 articles.
    assert {s: max(corpus[s]["document_id"]) + 1 for s in corpus} == {
        "train": 946,
        "validation": 216,
        "test": 231,
    }


@pytest.mark.slow
def test_conll2003_in_bioes():
    corpus, info = prepare_corpus("conll2003", tag_scheme="bioes")
    assert (info.source_scheme, info.tag_scheme) == ("iob2", "bioes")
    tags = corpus["train"].features["tags"].feature
    assert tags.names[:5] == ["O", "B-LOC", "I-LOC", "E-LOC", "S-LOC"] and len(tags.names) == 17
    assert tags.int2str(corpus["train"][0]["tags"])[:3] == ["S-ORG", "O", "S-MISC"]
    assert tags.int2str(corpus["train"][1]["tags"]) == ["B-PER", "E-PER"]  # Peter Blackburn


@pytest.mark.slow
@pytest.mark.mirror
@pytest.mark.parametrize(
    ("name", "sentences", "tokens", "documents", "repairs", "labels"),
    [
        # The HF hub `conll2002` has the same sentence counts.
        ("conll2002_es", (8323, 1915, 1517), (264715, 52923, 51533), (1, 1, 1), 1, 9),
        ("conll2002_nl", (15806, 2895, 5195), (202644, 37687, 68875), (287, 74, 119), 0, 9),
        # 8,936 train sentences: the last 894 (10%) are the validation split.
        ("conll2000", (8042, 894, 2012), (190717, 21010, 47377), (1, 1, 1), 0, 23),
    ],
)
def test_nltk_corpora(name, sentences, tokens, documents, repairs, labels):
    corpus, info = prepare_corpus(name)
    splits = ("train", "validation", "test")
    assert tuple(corpus[s].num_rows for s in splits) == sentences
    assert tuple(info.tokens[s] for s in splits) == tokens
    assert tuple(max(corpus[s]["document_id"]) + 1 for s in splits) == documents
    assert all(info.repairs[s] == repairs for s in splits)
    assert len(corpus["train"].features["tags"].feature.names) == labels
    assert "pos" in corpus["train"].column_names


@pytest.mark.mirror
def test_wnut17_as_published():
    corpus, info = prepare_corpus("wnut17")
    assert info.sentences == {"train": 3394, "validation": 1009, "test": 1287}
    assert info.tokens == {"train": 62730, "validation": 15733, "test": 23394}
    assert info.source_scheme == "iob2" and info.repairs == {"train": 0, "validation": 0, "test": 0}
    types = ("corporation", "creative-work", "group", "location", "person", "product")
    assert set(corpus["train"].features["tags"].feature.names) == {"O"} | {
        f"{prefix}-{kind}" for kind in types for prefix in "BI"
    }
    assert corpus["train"][0]["tokens"][:3] == ["@paulwalk", "It", "'s"]


def test_data_configs_name_the_scheme_the_loader_detects():
    """Each conf/data/<corpus>.yaml states the scheme of its files; it must be the one in the
    corpus's description, which the slow tests above check against the detected scheme."""
    schemes = re.compile(r"\b(IOB1|IOB2|BIOES)\b")
    configs = sorted((files("ner.conf") / "data").iterdir(), key=lambda p: p.name)
    assert configs
    for config in configs:
        name = config.name.removesuffix(".yaml")
        stated = set(schemes.findall(config.read_text()))
        assert stated == set(schemes.findall(NAMED_CORPORA[name].description)), config.name
