"""Seeded subsets: pinned orders (the same on every machine), nesting, determinism, bad values."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ner.data.subsets import holdout_splits, nested_subset, seeded_order

# holdout_splits(distinct(10), 0.2, seed 0): placed by sha256 of the tokens.
PINNED = {"validation": [0, 7], "test": [4, 5], "train": [1, 2, 3, 6, 8, 9]}


def distinct(count: int) -> list[list[str]]:
    """`count` different sentences."""
    return [[f"s{i}", "."] for i in range(count)]


def test_orders_are_pinned():
    """sha256-based: these exact orders on every machine and Python/NumPy version."""
    assert seeded_order(10, 0, "holdout") == [9, 4, 8, 7, 1, 5, 2, 6, 3, 0]
    assert nested_subset(20, 0.25, seed=0) == [3, 8, 9, 11, 14]
    assert holdout_splits(distinct(10), 0.2, 0, ["validation", "test"]) == PINNED


def test_seed_and_purpose_change_the_order():
    assert seeded_order(50, 0, "holdout") != seeded_order(50, 1, "holdout")
    assert seeded_order(50, 0, "holdout") != seeded_order(50, 0, "train_fraction")


@settings(deadline=None)  # sha256 orders of thousands of indices, on a busy machine
@given(
    count=st.integers(1, 3000),
    fractions=st.lists(st.floats(0.001, 1.0), min_size=2, max_size=6),
    seed=st.integers(0, 2**31),
)
def test_fractions_nest_and_repeat(count, fractions, seed):
    subsets = [nested_subset(count, f, seed) for f in sorted(fractions)]
    for smaller, larger in itertools.pairwise(subsets):
        assert set(smaller) <= set(larger)
    for fraction, subset in zip(sorted(fractions), subsets, strict=True):
        assert subset == sorted(subset) and len(set(subset)) == len(subset)
        assert len(subset) == max(1, round(count * fraction))
        assert nested_subset(count, fraction, seed) == subset


def test_learning_curve_fractions_nest():
    fractions = [0.02, 0.05, 0.1, 0.25, 0.5, 1.0]
    subsets = [set(nested_subset(14041, f, seed=0)) for f in fractions]
    assert [len(s) for s in subsets] == [281, 702, 1404, 3510, 7020, 14041]
    assert all(a < b for a, b in itertools.pairwise(subsets))


@settings(deadline=None)
@given(count=st.integers(3, 2000), fraction=st.floats(0.001, 0.3), seed=st.integers(0, 99))
def test_holdout_partitions_train(count, fraction, seed):
    try:
        parts = holdout_splits(distinct(count), fraction, seed, ["validation", "test"])
    except ValueError:
        assert count - 2 * max(1, round(count * fraction)) < 1
        return
    indices = [i for part in parts.values() for i in part]
    assert sorted(indices) == list(range(count))
    assert len(parts["validation"]) == len(parts["test"]) == max(1, round(count * fraction))


@settings(deadline=None)
@given(
    sentences=st.lists(st.sampled_from(["a", "b .", "c d", "e", "f g h", "i", "j k"]), min_size=6),
    seed=st.integers(0, 99),
)
def test_holdout_keeps_every_copy_of_a_sentence_on_one_side(sentences, seed):
    """A sentence repeated in a corpus (a headline, "Reuters ." ...) must not be in train and in
    test at once: the tokens, not the position, decide the side."""
    tokens = [text.split() for text in sentences]
    try:
        parts = holdout_splits(tokens, 0.2, seed, ["validation", "test"])
    except ValueError as error:
        assert "leaves no training data" in str(error)
        return
    sides = {}
    for split, indices in parts.items():
        for i in indices:
            assert sides.setdefault(sentences[i], split) == split, sentences[i]
    assert sorted(i for part in parts.values() for i in part) == list(range(len(sentences)))
    assert all(parts[split] for split in ("validation", "test", "train"))
    assert parts == holdout_splits(tokens, 0.2, seed, ["validation", "test"])


def test_repeated_sentences_go_to_one_side_and_sizes_stay_close():
    corpus = distinct(60) + [["Reuters", "."]] * 20 + [["--", "."]] * 3
    parts = holdout_splits(corpus, 0.1, 0, ["validation", "test"])
    texts = {split: {tuple(corpus[i]) for i in indices} for split, indices in parts.items()}
    assert not texts["train"] & texts["test"] and not texts["train"] & texts["validation"]
    assert not texts["validation"] & texts["test"]
    assert len(parts["validation"]) == len(parts["test"]) == 8  # 10% of 83: groups that fit


@pytest.mark.parametrize("fraction", [0, -0.1, 1.5, "a", True, None])
def test_bad_fractions_are_named(fraction):
    with pytest.raises(ValueError, match="train_fraction must be"):
        nested_subset(10, fraction, seed=0)


def test_a_holdout_that_leaves_no_train_data():
    with pytest.raises(ValueError, match=r"holdout=0.5 of 10 sentences leaves no training data"):
        holdout_splits(distinct(10), 0.5, 0, ["validation", "test"])
    with pytest.raises(ValueError, match=r"holdout=0.4 of 2 sentences"):
        holdout_splits(distinct(2), 0.4, 0, ["validation", "test"])
    with pytest.raises(ValueError, match=r"holdout=0.2 of 6 sentences \(2 distinct; copies stay"):
        holdout_splits([["same"]] * 5 + [["a"]], 0.2, 0, ["validation", "test"])


def test_one_missing_split_may_take_half():
    parts = holdout_splits(distinct(10), 0.5, 0, ["test"])
    assert len(parts["test"]) == len(parts["train"]) == 5
