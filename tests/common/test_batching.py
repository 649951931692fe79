"""The one batching rule: order by length, cut by a sentence count and a padded-token budget."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ner.common.batching import cut, length_batches, length_order

lengths_lists = st.lists(st.integers(min_value=0, max_value=60), max_size=40)
limits = st.none() | st.integers(min_value=1, max_value=12)
budgets = st.none() | st.integers(min_value=1, max_value=200)


def padded(batch: list[int], lengths: list[int]) -> int:
    return len(batch) * max(max(lengths[i] for i in batch), 1)


@given(lengths_lists, limits, budgets, st.booleans())
def test_every_sentence_lands_in_exactly_one_batch(lengths, batch_size, max_tokens, skip_empty):
    batches = length_batches(
        lengths, batch_size=batch_size, max_tokens=max_tokens, skip_empty=skip_empty
    )
    flat = [i for batch in batches for i in batch]
    expected = [i for i, n in enumerate(lengths) if n > 0 or not skip_empty]
    assert sorted(flat) == expected
    assert all(batches)


@given(lengths_lists, limits, budgets)
def test_batches_respect_the_limits_and_are_as_full_as_they_allow(lengths, batch_size, max_tokens):
    batches = length_batches(lengths, batch_size=batch_size, max_tokens=max_tokens)
    for batch, following in zip(batches, [*batches[1:], None], strict=False):
        assert batch_size is None or len(batch) <= batch_size
        assert max_tokens is None or len(batch) == 1 or padded(batch, lengths) <= max_tokens
        if following is not None:  # the next sentence did not fit
            grown = [*batch, following[0]]
            assert (batch_size is not None and len(grown) > batch_size) or (
                max_tokens is not None and padded(grown, lengths) > max_tokens
            )


@given(lengths_lists, limits, budgets)
def test_longest_first_keeps_ties_in_input_order(lengths, batch_size, max_tokens):
    batches = length_batches(lengths, batch_size=batch_size, max_tokens=max_tokens)
    flat = [i for batch in batches for i in batch]
    assert flat == sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))


@given(lengths_lists, st.integers(min_value=1, max_value=200))
def test_a_budget_alone_fits_as_many_rows_as_the_longest_allows(lengths, max_tokens):
    """Longest first, each batch holds max(budget // its longest length, 1) rows."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    expected, start = [], 0
    while start < len(order):
        rows = max(max_tokens // max(lengths[order[start]], 1), 1)
        expected.append(order[start : start + rows])
        start += rows
    assert length_batches(lengths, max_tokens=max_tokens) == expected


@given(lengths_lists, st.integers(min_value=1, max_value=12))
def test_given_order_cuts_consecutive_sentences(lengths, batch_size):
    batches = length_batches(lengths, batch_size=batch_size, order="given")
    indices = list(range(len(lengths)))
    assert batches == [indices[i : i + batch_size] for i in range(0, len(indices), batch_size)]


@given(lengths_lists)
def test_shortest_first_is_ascending_with_ties_in_input_order(lengths):
    assert length_order(lengths, "shortest") == sorted(
        range(len(lengths)), key=lambda i: (lengths[i], i)
    )


@given(lengths_lists, st.integers(min_value=1, max_value=12), st.integers(0, 2**32 - 1))
def test_shuffled_batches_depend_only_on_the_seed(lengths, batch_size, seed):
    def draw() -> list[list[int]]:
        generator = np.random.default_rng([seed, 3])
        return length_batches(lengths, batch_size=batch_size, generator=generator)

    first = draw()
    assert first == draw()
    assert sorted(i for batch in first for i in batch) == list(range(len(lengths)))
    assert all(len(batch) <= batch_size for batch in first)


def test_training_batches_are_the_ones_earlier_versions_drew():
    """A checkpoint taken mid-epoch resumes at a batch number, so the seeded batches of an epoch
    must never change: these are the batches the trainer has always drawn for this seed."""
    lengths = [3, 7, 1, 7, 0, 12, 5, 5, 9, 2]
    shuffled = length_batches(lengths, batch_size=3, generator=np.random.default_rng([7, 2]))
    assert shuffled == [[5, 8, 3], [0, 9, 2], [4], [1, 7, 6]]
    assert length_batches(lengths, batch_size=3) == [[5, 8, 1], [3, 6, 7], [0, 9, 2], [4]]


def test_a_sentence_over_the_budget_gets_a_batch_of_its_own():
    lengths = np.array([5000, 3000, 10, 10, 10])
    assert length_batches(lengths, batch_size=32, max_tokens=4096) == [[0], [1], [2, 3, 4]]
    assert cut([2, 3, 4, 0], lengths, max_tokens=30) == [[2, 3, 4], [0]]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"batch_size": 0}, "batch_size must be >= 1, got 0"),
        ({"max_tokens": 0}, "max_tokens must be >= 1, got 0"),
        ({"order": "random"}, "order must be"),
    ],
)
def test_bad_limits_are_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        length_batches([1, 2], **arguments)
