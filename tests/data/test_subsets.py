"""Seeded subsets: pinned orders (the same on every machine), nesting, determinism, bad values."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ner.data.subsets import holdout_splits, nested_subset, seeded_order


def test_orders_are_pinned():
    """sha256-based: these exact orders on every machine and Python/NumPy version."""
    assert seeded_order(10, 0, "holdout") == [9, 4, 8, 7, 1, 5, 2, 6, 3, 0]
    assert nested_subset(20, 0.25, seed=0) == [3, 8, 9, 11, 14]
    assert holdout_splits(10, 0.2, 0, ["validation", "test"]) == {
        "validation": [4, 9],
        "test": [7, 8],
        "train": [0, 1, 2, 3, 5, 6],
    }


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
        parts = holdout_splits(count, fraction, seed, ["validation", "test"])
    except ValueError:
        assert count - 2 * max(1, round(count * fraction)) < 1
        return
    indices = [i for part in parts.values() for i in part]
    assert sorted(indices) == list(range(count))
    assert len(parts["validation"]) == len(parts["test"]) == max(1, round(count * fraction))


@pytest.mark.parametrize("fraction", [0, -0.1, 1.5, "a", True, None])
def test_bad_fractions_are_named(fraction):
    with pytest.raises(ValueError, match="train_fraction must be"):
        nested_subset(10, fraction, seed=0)


def test_a_holdout_that_leaves_no_train_data():
    with pytest.raises(ValueError, match=r"holdout=0.5 of 10 sentences leaves no training data"):
        holdout_splits(10, 0.5, 0, ["validation", "test"])
    with pytest.raises(ValueError, match=r"holdout=0.4 of 2 sentences"):
        holdout_splits(2, 0.4, 0, ["validation", "test"])


def test_one_missing_split_may_take_half():
    parts = holdout_splits(10, 0.5, 0, ["test"])
    assert len(parts["test"]) == len(parts["train"]) == 5
