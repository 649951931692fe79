"""How the pretrained word rows train (``embeddings.glove.tuning``): frozen rows stay put, the
anchor penalty measures how far they moved, the projection starts as the identity and also maps
the words outside the training data, and a saved model of each kind predicts as it did."""

import numpy as np
import pytest
import torch

from ner.embeddings.glove import VectorTable, load_glove_table
from ner.embeddings.pretrained import split_table
from ner.model.saving import save_tagger
from ner.model.tagger import Tagger
from ner.tagger.dataset import Vocabularies, collate, tag_list
from ner.tagger.model import WORD_TUNINGS, TaggerModel

TEXT = "the 0.5 0.25 1\nparis 1 2 3\nBerlin 4 5 6\noslo -1 -2 -3\nin 0 1 0\n"
TRAIN = [["The", "Paris", "meeting", "in", "Paris", "."], ["Oslo", "meeting"]]
GOLD = [["O", "S-LOC", "O", "O", "S-LOC", "O"], ["S-LOC", "O"]]


def table(tmp_path) -> VectorTable:
    path = tmp_path / "vectors.txt"
    path.write_text(TEXT)
    return load_glove_table(str(path))


def make_model(tmp_path, tuning: str) -> tuple[TaggerModel, Vocabularies, torch.Tensor]:
    """A words-only tagger on TRAIN[:1] (so "oslo" is a pretrained word outside training),
    prepared for `tuning`; and the found-rows mask."""
    vocabularies = Vocabularies.build(TRAIN[:1], tag_list({"LOC"}, "bioes"))
    words = split_table(table(tmp_path), vocabularies.words, seed=1)
    vocabularies.pretrained = words.extension
    torch.manual_seed(0)
    model = TaggerModel(
        tags=vocabularies.tags,
        num_words=len(vocabularies.words),
        pretrained_words=len(words.extension),
        word_dim=3,
        word_tuning=tuning,
        hidden_size=4,
        dropout=0.0,
        lstm_dropout=0.0,
    )
    model.set_pretrained_rows(words.initial, words.found_rows)
    model.pretrained_words.copy_(words.vectors)
    return model, vocabularies, words.found_rows


def batch(vocabularies: Vocabularies):
    examples = [
        vocabularies.encode(i, tokens, tags)
        for i, (tokens, tags) in enumerate(zip(TRAIN, GOLD, strict=True))
    ]
    return collate(examples)


def train_steps(
    model: TaggerModel, vocabularies: Vocabularies, steps: int, anchor_weight: float = 0.0
):
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=0.05)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = model(batch(vocabularies))["loss"]
        penalty = model.regularization(anchor_weight=anchor_weight)
        if penalty is not None:
            loss = loss + penalty
        loss.backward()
        optimizer.step()


def penalty_of(model: TaggerModel) -> float:
    return float(model.anchor_penalty().detach())


@pytest.mark.parametrize("tuning", ["frozen", "projected"])
def test_frozen_rows_do_not_change_but_the_others_train(tmp_path, tuning):
    model, vocabularies, found = make_model(tmp_path, tuning)
    assert found.tolist() == [
        word in ("the", "paris", "in") for word in vocabularies.words.items
    ]  # "meeting", ".", padding and the unknown word start random
    before = model.word_embedding.weight.detach().clone()
    train_steps(model, vocabularies, 3)
    after = model.word_embedding.weight.detach()
    assert torch.equal(after[found], before[found])
    moved = (after != before).any(1)
    assert moved[vocabularies.words.id("meeting")] and moved[vocabularies.words.id(".")]
    assert not moved[0]  # padding


def test_fine_tuned_rows_move(tmp_path):
    model, vocabularies, found = make_model(tmp_path, "fine_tune")
    before = model.word_embedding.weight.detach().clone()
    train_steps(model, vocabularies, 3)
    assert (model.word_embedding.weight.detach()[found] != before[found]).any()
    assert model.anchor_penalty() is None


def test_the_anchor_penalty_is_zero_at_first_and_grows_as_rows_move(tmp_path):
    model, vocabularies, _ = make_model(tmp_path, "anchored")
    assert penalty_of(model) == 0.0
    train_steps(model, vocabularies, 3)
    first = penalty_of(model)
    assert first > 0
    train_steps(model, vocabularies, 10)
    assert penalty_of(model) > first
    # Only the pretrained rows count: moving a random row changes nothing.
    with torch.no_grad():
        penalty = model.anchor_penalty()
        model.word_embedding.weight[vocabularies.words.id("meeting")] += 5.0
        assert torch.equal(model.anchor_penalty(), penalty)
        model.word_embedding.weight[vocabularies.words.id("paris")] += 1.0
        assert penalty_of(model) > float(penalty)


def test_a_strong_anchor_keeps_rows_nearer_their_pretrained_values(tmp_path):
    distances = []
    for weight in (0.0, 100.0):
        model, vocabularies, _ = make_model(tmp_path, "anchored")
        train_steps(model, vocabularies, 20, anchor_weight=weight)
        distances.append(penalty_of(model))
    assert distances[1] < distances[0] / 4


def test_the_projection_starts_as_the_identity_and_maps_new_words_too(tmp_path):
    model, vocabularies, _ = make_model(tmp_path, "projected")
    assert torch.equal(model.word_projection.weight, torch.eye(3))
    ids = torch.tensor([[len(vocabularies.words), vocabularies.words.id("paris")]])  # oslo, paris
    with torch.no_grad():
        np.testing.assert_array_equal(model.embed_words(ids)[0].numpy(), [[-1, -2, -3], [1, 2, 3]])
    train_steps(model, vocabularies, 5)
    projection = model.word_projection.weight.detach()
    assert not torch.equal(projection, torch.eye(3))
    with torch.no_grad():
        mapped = model.embed_words(ids)[0]
    oslo = torch.tensor([-1.0, -2.0, -3.0])
    torch.testing.assert_close(mapped[0], projection @ oslo)
    torch.testing.assert_close(mapped[1], projection @ torch.tensor([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("tuning", WORD_TUNINGS)
def test_a_saved_model_predicts_as_before(tmp_path, tuning):
    model, vocabularies, _ = make_model(tmp_path, tuning)
    train_steps(model, vocabularies, 5, anchor_weight=0.1)
    model.eval()
    sentences = [["Oslo", "and", "Paris", "meeting"], ["Berlin", "in", "Qwxzz"]]
    probe = collate([vocabularies.encode(i, tokens, None) for i, tokens in enumerate(sentences)])
    with torch.no_grad():
        expected = model.emissions(probe)
    save_tagger(tmp_path / "model", model, vocabularies, None)
    tagger = Tagger.load(tmp_path / "model")
    assert tagger.model.word_tuning == tuning
    assert (tagger.model.word_projection is not None) == (tuning == "projected")
    loaded = collate(
        [tagger.vocabularies.encode(i, tokens, None) for i, tokens in enumerate(sentences)]
    )
    assert torch.equal(loaded.words, probe.words)
    with torch.no_grad():
        torch.testing.assert_close(tagger.model.emissions(loaded), expected, rtol=0, atol=0)


def test_an_unknown_tuning_is_refused():
    with pytest.raises(ValueError, match="word_tuning='thawed'"):
        TaggerModel(tags=["O"], num_words=4, word_tuning="thawed")
