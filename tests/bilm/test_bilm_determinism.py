"""`stateless` and `warm`: a sentence's vectors do not depend on batch size, position or the other
sentences (≤ 1e-5); `stateful` carries state from batch to batch, like AllenNLP."""

import pytest
import torch

from ner.bilm.bilm import BiLM
from ner.bilm.char_ids import batch_to_ids


def load(fixture_dir, state: str) -> BiLM:
    return BiLM.from_files(fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5", state)


@pytest.mark.parametrize("state", ["stateless", "warm"])
def test_vectors_do_not_depend_on_batch_size_position_or_neighbours(
    fixture_dir, fixture_sentences, sentences, state
):
    model = load(fixture_dir, state)
    pool = sentences + fixture_sentences[0][:2]
    with torch.no_grad():
        alone = [model(batch_to_ids([s]))[0][0, :, : len(s)] for s in pool]
        together, _ = model(batch_to_ids(pool[::-1]))  # every sentence at another row
        for row, sentence in enumerate(pool[::-1]):
            expected = alone[len(pool) - 1 - row]
            torch.testing.assert_close(
                together[row, :, : len(sentence)], expected, atol=1e-5, rtol=0
            )
    for batch_size, max_tokens in [(1, 4096), (64, 40)]:
        embedded = model.embed_sentences(pool, batch_size=batch_size, max_tokens=max_tokens)
        for vectors, expected in zip(embedded, alone, strict=True):
            torch.testing.assert_close(vectors, expected, atol=1e-5, rtol=0)


def test_warm_state_is_the_same_for_every_load_and_differs_from_zeros(fixture_dir, sentences):
    first, second = load(fixture_dir, "warm"), load(fixture_dir, "warm")
    ids = batch_to_ids(sentences)
    with torch.no_grad():
        assert torch.equal(first(ids)[0], second(ids)[0])
        first.state = "stateless"
        assert (first(ids)[0] - second(ids)[0]).abs().max() > 1e-3
    assert first.warm_state().h.shape == (2, 2, 1, 16)
    assert first.warm_state().c.shape == (2, 2, 1, 64)


def test_stateful_depends_on_history_until_reset(fixture_dir, sentences):
    model = load(fixture_dir, "stateful")
    ids = batch_to_ids(sentences)
    with torch.no_grad():
        fresh = model(ids)[0]
        carried = model(ids)[0]
        assert (fresh - carried).abs().max() > 1e-3
        model.reset_states()
        torch.testing.assert_close(model(ids)[0], fresh, atol=0, rtol=0)


def test_stateful_embed_sentences_runs_consecutive_batches_in_order(fixture_dir, sentences):
    model = load(fixture_dir, "stateful")
    embedded = model.embed_sentences(sentences, batch_size=2)
    model.reset_states()
    with torch.no_grad():
        for start in range(0, len(sentences), 2):
            batch = sentences[start : start + 2]
            layers, _ = model(batch_to_ids(batch))
            for row, sentence in enumerate(batch):
                actual = embedded[start + row]
                torch.testing.assert_close(
                    actual, layers[row, :, : len(sentence)], atol=1e-6, rtol=0
                )


def test_empty_sentences_give_empty_outputs(fixture_dir):
    model = load(fixture_dir, "warm")
    embedded = model.embed_sentences([[], ["a"], []])
    assert [tuple(e.shape) for e in embedded] == [(3, 0, 32), (3, 1, 32), (3, 0, 32)]
    layers, mask = model(batch_to_ids([[], ["a"]]))
    assert layers.shape == (2, 3, 1, 32) and mask.tolist() == [[False], [True]]
    assert (layers[0] == 0).all()


def test_gradients_flow_to_every_parameter(fixture_dir, sentences):
    """The modules stay trainable (pretraining builds on them)."""
    model = load(fixture_dir, "stateless")
    layers, _ = model(batch_to_ids(sentences))
    layers.sum().backward()
    for name, parameter in model.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name


def test_casting_recomputes_the_warm_state_and_moves_the_carried_one(fixture_dir, sentences):
    model = load(fixture_dir, "warm")
    ids = batch_to_ids(sentences)
    with torch.no_grad():
        single = model(ids)[0]
        model.double()
        assert model.warm_state().h.dtype == torch.float64
        torch.testing.assert_close(model(ids)[0].float(), single, atol=1e-5, rtol=0)
        model.state = "stateful"
        model(ids)
        model.float()
        continued = model(ids)[0]  # from the carried state, cast
        reference = load(fixture_dir, "stateful")
        reference(ids)
        expected = reference(ids)[0]
        first = load(fixture_dir, "stateful")(ids)[0]
    assert continued.dtype == torch.float32
    torch.testing.assert_close(continued, expected, atol=1e-5, rtol=0)
    assert not torch.allclose(continued, first, atol=1e-3)  # it did not start from zeros


@pytest.mark.parametrize("state", ["warm", "stateful"])
def test_states_made_under_inference_mode_can_be_used_for_training(fixture_dir, sentences, state):
    model = load(fixture_dir, state)
    model.embed_sentences(sentences)  # runs under torch.inference_mode
    layers, _ = model(batch_to_ids(sentences))
    layers.sum().backward()
    assert model.lstm.layers[0].w_state.grad is not None
