"""`load_splits`: the configured corpus, a nested training subset (``data.train_fraction``) fixed
by ``data.subset_seed`` alone, and what results.json records about the data."""

import pytest

from ner.training.setup import load_splits


@pytest.fixture
def corpus_file(tmp_path):
    """One tab-separated file of 200 distinct sentences; dev and test are carved by holdout."""
    lines = []
    for i in range(200):
        lines += [f"Anna{i}\tB-PER", f"w{i}\tO", ""]
    path = tmp_path / "people.tsv"
    path.write_text("\n".join(lines))
    return path


def config(path, **data):
    return {"name": str(path), "options": {"holdout": 0.1, "columns": None}, **data}


def first_tokens(corpus, split="train") -> list[str]:
    return [tokens[0] for tokens in corpus.splits[split].tokens]


def test_fractions_are_nested_and_dev_test_whole(corpus_file, isolated_data_dir):
    full = load_splits(config(corpus_file))
    assert full.summary["train_fraction"] == 1.0 and len(full.splits["train"].tokens) == 160
    subsets = {}
    for fraction in (0.05, 0.1, 0.25, 0.5):
        corpus = load_splits(config(corpus_file, train_fraction=fraction, subset_seed=3))
        subsets[fraction] = set(first_tokens(corpus))
        assert len(subsets[fraction]) == round(160 * fraction)
        assert corpus.splits["validation"].tokens == full.splits["validation"].tokens
        assert corpus.splits["test"].tokens == full.splits["test"].tokens
        assert corpus.summary | {"train_fraction": None} == full.summary | {
            "train_fraction": None,
            "subset_seed": 3,
        }
    assert subsets[0.05] < subsets[0.1] < subsets[0.25] < subsets[0.5]
    # Training sentences keep their corpus order.
    half = first_tokens(load_splits(config(corpus_file, train_fraction=0.5, subset_seed=3)))
    assert half == sorted(half, key=lambda t: int(t[4:]))


def test_the_subset_depends_on_subset_seed_only(corpus_file, isolated_data_dir):
    picked = [
        first_tokens(load_splits(config(corpus_file, train_fraction=0.1, subset_seed=seed)))
        for seed in (0, 0, 1)
    ]
    assert picked[0] == picked[1] != picked[2]


def test_the_summary_records_the_holdout(corpus_file, isolated_data_dir):
    summary = load_splits(config(corpus_file, train_fraction=0.25)).summary
    assert summary == {
        "name": "people",
        "source_scheme": "iob2",
        "tag_scheme": "iob2",
        "labels": "spans",
        "holdout": {"fraction": 0.1, "seed": 0, "splits": ["validation", "test"]},
        "dropped_empty": {"train": 0, "validation": 0, "test": 0},
        "train_fraction": 0.25,
        "subset_seed": 0,
        "train_sentences_available": 160,
    }


@pytest.mark.parametrize("fraction", [0, 1.5, -0.2])
def test_a_bad_fraction_fails_before_the_corpus_loads(tmp_path, fraction):
    with pytest.raises(ValueError, match=r"data.train_fraction must be in \(0, 1\]"):
        load_splits({"name": str(tmp_path / "nowhere"), "train_fraction": fraction})
