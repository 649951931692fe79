"""seqeval-based span scores: conlleval-compatible default mode, strict mode, per type."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seqeval.metrics import classification_report

from ner.data.tag_schemes import SCHEMES
from ner.metrics import (
    SEQEVAL_SCHEMES,
    evaluate_tags,
    merge_surface_forms,
    span_scores,
    surface_forms,
    surface_scores,
)


def test_perfect_and_partial_scores_in_percent():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
    predicted = [["B-PER", "I-PER", "O", "O"], ["B-ORG", "O"]]
    scores = span_scores(gold, predicted)
    assert scores["precision"] == pytest.approx(100.0)
    assert scores["recall"] == pytest.approx(200 / 3)
    assert scores["f1"] == pytest.approx(80.0)
    assert scores["support"] == 3
    assert scores["per_type"]["LOC"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1}
    assert scores["per_type"]["PER"]["f1"] == pytest.approx(100.0)


def test_default_mode_reads_chunks_like_conlleval_and_strict_does_not():
    # "O I-ORG" is an ORG chunk for conlleval (IOB1 style) but invalid in strict IOB2.
    gold = [["O", "B-ORG", "I-ORG"]]
    predicted = [["O", "I-ORG", "I-ORG"]]
    scores = evaluate_tags(gold, predicted, "iob2")
    assert scores["f1"] == pytest.approx(100.0)
    assert scores["strict"]["f1"] == pytest.approx(0.0)


def test_iob1_chunks_split_by_b():
    gold = [["I-PER", "I-PER", "B-PER", "O"]]
    merged = [["I-PER", "I-PER", "I-PER", "O"]]
    assert span_scores(gold, gold)["f1"] == pytest.approx(100.0)
    assert span_scores(gold, merged)["f1"] == pytest.approx(0.0)
    assert span_scores(gold, gold, strict=True, scheme="iob1")["support"] == 2


def test_bioes_and_no_chunks():
    gold = [["S-LOC", "O", "B-PER", "E-PER"]]
    assert evaluate_tags(gold, gold, "bioes")["strict"]["f1"] == pytest.approx(100.0)
    empty = span_scores([["O", "O"]], [["O", "O"]])
    assert empty == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0, "per_type": {}}


def test_strict_mode_knows_every_tag_scheme():
    assert tuple(SEQEVAL_SCHEMES) == SCHEMES


def test_mismatched_lengths_are_errors():
    with pytest.raises(ValueError, match="sentence 0"):
        span_scores([["O", "B-PER"]], [["O"]])
    with pytest.raises(ValueError, match="2 gold sentences"):
        span_scores([["O"], ["O"]], [["O"]])
    with pytest.raises(ValueError, match="strict mode needs a scheme"):
        span_scores([["O"]], [["O"]], strict=True)


TAG_ALPHABET = ["O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "I-LOC", "B-MISC", "I-ORG"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(st.sampled_from(TAG_ALPHABET), st.sampled_from(TAG_ALPHABET)), max_size=12
        ),
        min_size=1,
        max_size=8,
    )
)
def test_default_mode_equals_seqevals_classification_report_bit_for_bit(sentences):
    """The default mode reads the chunks once, with its own reading and arithmetic: every figure
    must equal seqeval's `classification_report`'s, for any tags (invalid sequences and empty
    sentences too)."""
    gold = [[g for g, _ in sentence] for sentence in sentences]
    predicted = [[p for _, p in sentence] for sentence in sentences]
    scores = span_scores(gold, predicted)
    if not any(tag != "O" for sentence in gold + predicted for tag in sentence):
        assert scores["support"] == 0
        return
    report = classification_report(gold, predicted, output_dict=True, zero_division=0)
    expected = {name: row for name, row in report.items() if not name.endswith(" avg")}
    assert set(scores["per_type"]) == set(expected)
    for name, row in [("micro avg", scores), *scores["per_type"].items()]:
        wanted = report[name] if name == "micro avg" else expected[name]
        assert row["precision"] == 100.0 * float(wanted["precision"])
        assert row["recall"] == 100.0 * float(wanted["recall"])
        assert row["f1"] == 100.0 * float(wanted["f1-score"])
        assert row["support"] == int(wanted["support"])


def test_token_scores_accuracy_per_label_and_confusions():
    from ner.metrics import token_scores

    gold = [["DT", "NN", "VBZ"], ["DT", "JJ", "NN", "."]]
    predicted = [["DT", "NN", "NN"], ["DT", "NN", "NN", "."]]
    scores = token_scores(gold, predicted)
    assert scores["accuracy"] == pytest.approx(100 * 5 / 7)
    assert (scores["correct"], scores["support"]) == (5, 7)
    nn = scores["per_label"]["NN"]  # 2 right of 4 predicted, both gold NN found
    assert (nn["precision"], nn["recall"], nn["support"]) == (50.0, 100.0, 2)
    assert nn["f1"] == pytest.approx(200 / 3)
    assert scores["per_label"]["VBZ"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1}
    assert scores["confusions"] == [
        {"gold": "JJ", "predicted": "NN", "count": 1},
        {"gold": "VBZ", "predicted": "NN", "count": 1},
    ]
    with pytest.raises(ValueError, match="sentence 1: 4 gold tags but 3 predicted"):
        token_scores(gold, [predicted[0], predicted[1][:3]])


def test_surface_forms_count_each_distinct_entity_text_once_as_wnuteval_does():
    tokens = [["I", "love", "Paris", "and", "Paris"], ["Paris", "Hilton", "is", "in", "Rome"]]
    gold = [["O", "O", "B-loc", "O", "B-loc"], ["B-per", "I-per", "O", "O", "B-loc"]]
    predicted = [["O", "O", "B-loc", "O", "O"], ["B-loc", "O", "O", "O", "B-per"]]
    forms = surface_forms(tokens, gold, predicted)
    assert forms == {
        "loc": {"gold": ["Paris", "Rome"], "predicted": ["Paris"], "correct": ["Paris"]},
        "per": {"gold": ["Paris Hilton"], "predicted": ["Rome"], "correct": []},
    }
    scores = surface_scores(forms)
    # 1 correct of 2 distinct predicted forms, of 3 distinct gold forms; mentions: 1/3, 1/4.
    assert scores["precision"] == pytest.approx(50.0)
    assert scores["recall"] == pytest.approx(100.0 / 3)
    assert scores["f1"] == pytest.approx(40.0) and scores["support"] == 3
    assert scores["per_type"]["loc"]["f1"] == pytest.approx(200.0 / 3)
    assert span_scores(gold, predicted)["recall"] == pytest.approx(25.0)


def test_surface_forms_of_parts_merge_into_the_whole_and_check_lengths():
    tokens = [["a", "b"], ["a", "c"], ["b"]]
    gold = [["B-x", "O"], ["B-x", "B-y"], ["B-x"]]
    predicted = [["B-x", "B-y"], ["O", "B-y"], ["B-y"]]
    merged: dict = {}
    for part in range(3):
        parts = (tokens[part : part + 1], gold[part : part + 1], predicted[part : part + 1])
        merge_surface_forms(merged, surface_forms(*parts))
    assert merged == surface_forms(tokens, gold, predicted)
    with pytest.raises(ValueError, match="2 tokens but 1 gold tags"):
        surface_forms([["a", "b"]], [["O"]], [["O"]])
