"""The spaCy comparison's own parts (spaCy is not a dependency, so the comparison itself runs
only from experiments/bench/against_spacy.py): the tag conversion and the LSTM's FLOP count."""

import against_spacy
import pytest

from ner.tagger.model import TaggerModel


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (["I-PER", "I-PER", "O", "I-LOC"], ["B-PER", "I-PER", "O", "B-LOC"]),
        (["B-ORG", "I-ORG", "I-PER", "B-PER"], ["B-ORG", "I-ORG", "B-PER", "B-PER"]),
        (["O", "O"], ["O", "O"]),
        ([], []),
    ],
)
def test_every_chunk_opens_with_b(tags, expected):
    assert against_spacy.iob2(tags) == expected


@pytest.mark.parametrize(
    "sizes",
    [
        {"num_words": 10, "num_chars": 5},
        {"num_words": 10, "num_chars": 0, "hidden_size": 32, "num_layers": 1},
        {"num_words": 0, "num_chars": 5, "elmo_dim": 16, "num_layers": 3},
    ],
)
def test_the_lstm_flop_count_is_two_per_weight_of_its_products(sizes):
    model = TaggerModel(tags=["O", "S-PER"], **sizes)
    weights = sum(
        parameter.numel()
        for name, parameter in model.named_parameters()
        if "weight_ih" in name or "weight_hh" in name
    )
    assert weights > 0 and against_spacy.lstm_flop(model.config) == 2 * weights
