"""Chunks read like conlleval (ner.common.chunks): seqeval's default-mode reading, exactly."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ner.common.chunks import conlleval_chunks

# Odd labels too: no type, an empty type, a stray character, seqeval's "." (never a chunk).
ODD_TAGS = [
    *("O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "I-LOC", "B-MISC", "I-ORG"),
    *("B", "I", "E-", "S-LOC", "E-LOC", "X-PER", ".", "I-PER-X"),
]


@pytest.mark.filterwarnings("ignore:.* seems not to be NE tag")
@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(ODD_TAGS), max_size=14))
def test_chunks_are_read_as_seqeval_reads_them(tags):
    """`conlleval_chunks` gives seqeval's default-mode chunks (its `get_entities`), the chunks
    that `span_scores` and the significance tests count."""
    from seqeval.metrics.sequence_labeling import get_entities

    assert conlleval_chunks(tags) == get_entities(list(tags))
