import pytest
from hypothesis import given
from hypothesis import strategies as st

from ner.data.tag_schemes import (
    SCHEMES,
    Span,
    TagSchemeError,
    convert_tags,
    detect_scheme,
    repair_tags,
    spans_to_tags,
    tags_to_spans,
)

# The same two sentences in every scheme: adjacent same-type chunks, single-token chunks, a
# type with hyphens, chunks at both ends.
SPANS = [Span("PER", 0, 2), Span("PER", 2, 3), Span("LOC", 4, 5), Span("B-NP", 5, 7)], 7
ENCODED = {
    "iob1": ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-B-NP", "I-B-NP"],
    "iob2": ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-B-NP", "I-B-NP"],
    "bioes": ["B-PER", "E-PER", "S-PER", "O", "S-LOC", "B-B-NP", "E-B-NP"],
}


@st.composite
def span_sets(draw) -> tuple[list[Span], int]:
    """Non-overlapping spans over a sentence, often adjacent and of the same type."""
    spans, position = [], 0
    for gap, length, label in draw(
        st.lists(
            st.tuples(st.integers(0, 2), st.integers(1, 4), st.sampled_from(["PER", "I-X"])),
            max_size=6,
        )
    ):
        start = position + gap
        spans.append(Span(label, start, start + length))
        position = start + length
    return spans, position + draw(st.integers(0, 2))


@pytest.mark.parametrize("scheme", SCHEMES)
def test_known_encoding(scheme):
    spans, length = SPANS
    assert spans_to_tags(spans, length, scheme) == ENCODED[scheme]
    assert tags_to_spans(ENCODED[scheme], scheme) == spans
    assert detect_scheme([ENCODED[scheme], ["O"]]) == scheme


@pytest.mark.parametrize("source", SCHEMES)
@pytest.mark.parametrize("target", SCHEMES)
def test_known_conversions(source, target):
    assert convert_tags(ENCODED[source], source, target) == ENCODED[target]


@given(span_sets())
def test_conversions_round_trip(case):
    spans, length = case
    for source in SCHEMES:
        tags = spans_to_tags(spans, length, source)
        assert tags_to_spans(tags, source) == spans
        assert repair_tags(tags, source) == (tags, 0)  # valid input needs no repair
        for target in SCHEMES:
            converted = convert_tags(tags, source, target)
            assert convert_tags(converted, target, source) == tags


def test_detect_prefers_iob2_when_ambiguous():
    assert detect_scheme([["O", "O"], []]) == "iob2"
    assert detect_scheme([["B-PER", "O"]]) == "iob2"
    assert detect_scheme([["I-PER", "O"]]) == "iob1"


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        (["O", "X-PER"], "unknown tag 'X-PER'"),
        (["PER"], "unknown tag 'PER'"),
        (["B-"], "unknown tag 'B-'"),
    ],
)
def test_unknown_prefix(tags, message):
    with pytest.raises(TagSchemeError, match=message):
        detect_scheme([tags])


def test_iob2_and_iob1_in_one_corpus_is_an_error():
    # B- opens chunks (IOB2) twice, then an I- opens one after O: no scheme allows all three.
    with pytest.raises(TagSchemeError, match=r"sequence 1, token 1: tag 'I-LOC' after 'O'"):
        detect_scheme([["B-PER", "O", "B-LOC"], ["O", "I-LOC"]])


@pytest.mark.parametrize(
    ("tags", "scheme", "error", "repaired", "changes"),
    [
        (["O", "I-PER", "I-PER"], "iob2", "must start with B-PER", ["O", "B-PER", "I-PER"], 1),
        (["B-PER", "I-LOC"], "iob2", "must start with B-LOC", ["B-PER", "B-LOC"], 1),
        (["O", "B-PER"], "iob1", "may only follow a PER chunk", ["O", "I-PER"], 1),
        (["I-PER", "O"], "bioes", "must start with B-PER", ["S-PER", "O"], 1),
        (["B-PER", "O"], "bioes", "not closed with E-PER", ["S-PER", "O"], 1),
        (["B-PER", "I-PER"], "bioes", "ends inside a PER chunk", ["B-PER", "E-PER"], 1),
        (["S-PER", "E-PER"], "bioes", "must start with B-PER", ["S-PER", "S-PER"], 1),
    ],
)
def test_invalid_sequences_raise_and_repair(tags, scheme, error, repaired, changes):
    with pytest.raises(TagSchemeError, match=error):
        tags_to_spans(tags, scheme)
    assert repair_tags(tags, scheme) == (repaired, changes)


def test_error_position_and_unknown_scheme():
    with pytest.raises(TagSchemeError) as info:
        tags_to_spans(["O", "O", "I-PER"], "iob2")
    assert info.value.position == 2
    with pytest.raises(ValueError, match="unknown tag scheme 'bilou'"):
        convert_tags(["O"], "iob2", "bilou")


def test_overlapping_spans_are_refused():
    with pytest.raises(ValueError, match="overlaps"):
        spans_to_tags([Span("A", 0, 2), Span("B", 1, 3)], 3, "iob2")
