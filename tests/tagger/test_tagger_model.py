"""The BiLSTM-CRF model: input families, config round trip, padding invariance, learning."""

import pytest
import torch

from ner.tagger.batch import TaggerBatch
from ner.tagger.constraints import is_valid_sequence
from ner.tagger.dataset import Vocabularies, collate, tag_list
from ner.tagger.model import TaggerModel

SENTENCES = [
    ["John", "Smith", "lives", "in", "Paris", "."],
    ["Mary", "visited", "Berlin"],
    ["Acme", "Corporation", "hired", "Peter", "Jones", "yesterday", "in", "Rome", "."],
    ["Hello"],
]
GOLD = [
    ["B-PER", "E-PER", "O", "O", "S-LOC", "O"],
    ["S-PER", "O", "S-LOC"],
    ["B-ORG", "E-ORG", "O", "B-PER", "E-PER", "O", "O", "S-LOC", "O"],
    ["O"],
]
TAGS = tag_list({"PER", "LOC", "ORG"}, "bioes")
ELMO_DIM = 8


def make_model(**overrides) -> tuple[TaggerModel, Vocabularies]:
    torch.manual_seed(0)
    vocabularies = Vocabularies.build(SENTENCES, TAGS)
    config = dict(
        tags=TAGS,
        num_words=len(vocabularies.words),
        num_chars=len(vocabularies.chars),
        elmo_dim=ELMO_DIM,
        hidden_size=16,
        char_filters=8,
        word_dim=10,
    )
    config.update(overrides)
    return TaggerModel(**config), vocabularies


def elmo_layers(indices: list[int]) -> torch.Tensor:
    """Deterministic fake biLM layers (B, 3, T, D) standing in for cached features."""
    length = max(len(SENTENCES[i]) for i in indices)
    out = torch.zeros(len(indices), 3, length, ELMO_DIM)
    for row, i in enumerate(indices):
        generator = torch.Generator().manual_seed(i)
        out[row, :, : len(SENTENCES[i])] = torch.randn(
            3, len(SENTENCES[i]), ELMO_DIM, generator=generator
        )
    return out


def batch_of(vocabularies: Vocabularies, indices: list[int]) -> TaggerBatch:
    examples = [vocabularies.encode(i, SENTENCES[i], GOLD[i]) for i in indices]
    return collate(examples, elmo_layers)


@pytest.mark.parametrize(
    ("words", "chars", "elmo", "input_dim"),
    [
        (True, True, True, 10 + 8 + 8),
        (True, False, False, 10),
        (False, True, True, 16),
        (False, False, True, 8),
    ],
)
def test_input_families(words, chars, elmo, input_dim):
    model, vocabularies = make_model(
        num_words=len(Vocabularies.build(SENTENCES, TAGS).words) if words else 0,
        num_chars=len(Vocabularies.build(SENTENCES, TAGS).chars) if chars else 0,
        elmo_dim=ELMO_DIM if elmo else 0,
    )
    assert model.input_dim == input_dim
    batch = batch_of(vocabularies, [0, 1, 2])
    output = model(batch)
    assert output["emissions"].shape == (3, 9, len(TAGS))
    assert output["loss"].ndim == 0 and output["loss"].item() > 0


def test_needs_an_input_and_elmo_layers():
    with pytest.raises(ValueError, match="at least one input"):
        TaggerModel(tags=TAGS)
    model, vocabularies = make_model()
    batch = batch_of(vocabularies, [0])
    batch.elmo = None
    with pytest.raises(ValueError, match="no ELMo layers"):
        model(batch)


def test_config_round_trip_gives_the_same_model():
    model, vocabularies = make_model()
    clone = TaggerModel(**model.config)
    clone.load_state_dict(model.state_dict())
    model.eval(), clone.eval()
    batch = batch_of(vocabularies, [0, 1, 2, 3])
    assert torch.equal(model.emissions(batch), clone.emissions(batch))


def test_a_sentence_scores_the_same_alone_and_in_a_padded_batch():
    model, vocabularies = make_model()
    model.eval()
    alone = model.emissions(batch_of(vocabularies, [1]))[0]
    padded = model.emissions(batch_of(vocabularies, [2, 1, 0]))[1, :3]
    torch.testing.assert_close(alone, padded, rtol=1e-5, atol=1e-5)


def test_gradients_reach_the_mix_but_not_frozen_words():
    model, vocabularies = make_model(word_trainable=False)
    model(batch_of(vocabularies, [0, 1]))["loss"].backward()
    assert model.elmo_mix.scalar_parameters.grad is not None
    assert model.elmo_mix.gamma.grad is not None
    assert model.word_embedding.weight.grad is None
    assert model.char_encoder.conv.weight.grad.abs().sum() > 0
    assert set(model.mix_summary()) == {"layers", "weights", "gamma"}
    assert sum(model.mix_summary()["weights"]) == pytest.approx(1.0)


def test_model_learns_a_tiny_corpus_and_decodes_valid_tags():
    model, vocabularies = make_model(dropout=0.0, lstm_dropout=0.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    batch = batch_of(vocabularies, [0, 1, 2, 3])
    for _ in range(60):
        optimizer.zero_grad()
        model(batch)["loss"].backward()
        optimizer.step()
    model.eval()
    decoded = [[TAGS[i] for i in path] for path in model.decode(batch)]
    assert decoded == GOLD
    assert all(is_valid_sequence("bioes", tags) for tags in decoded)
