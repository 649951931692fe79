"""Exactness against AllenNLP's fixture ELMo, produced by bilm-tf (docs/bilm.md, "Exactness")."""

import h5py
import numpy as np
import pytest
import torch

from ner.bilm.bilm import BiLM
from ner.bilm.char_ids import batch_to_ids
from ner.bilm.reference import ReferenceBiLM


def load_fixture(fixture_dir, state="stateful") -> BiLM:
    return BiLM.from_files(fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5", state)


def expected_top_layer(fixture_dir, stream: int, index: int) -> np.ndarray:
    with h5py.File(fixture_dir / f"lm_embeddings_{stream}.hdf5", "r") as handle:
        forward, backward = handle[str(index)][...]  # (T, 16) each
    return np.concatenate([forward, backward], axis=-1)  # (T, 32)


@pytest.mark.parametrize("implementation", ["fast", "reference"])
def test_stateful_procedure_reproduces_lm_embeddings(
    fixture_dir, fixture_sentences, implementation
):
    """One model, 10 consecutive batches [s0[i], s1[i], s2[i]], state carried: ≤ 2e-6."""
    if implementation == "fast":
        model = load_fixture(fixture_dir)
    else:
        model = ReferenceBiLM.from_files(
            fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5"
        )
    worst = 0.0
    with torch.no_grad():
        for index in range(10):
            batch = [fixture_sentences[stream][index] for stream in range(3)]
            layers, mask = model(batch_to_ids(batch))
            assert layers.shape[:2] == (3, 3)
            for stream, sentence in enumerate(batch):
                assert int(mask[stream].sum()) == len(sentence)
                actual = layers[stream, 2, : len(sentence)].numpy()
                worst = max(
                    worst,
                    float(np.abs(actual - expected_top_layer(fixture_dir, stream, index)).max()),
                )
                assert (layers[stream, :, len(sentence) :] == 0).all()
    assert worst <= 2e-6


def test_stateless_does_not_reproduce_the_stateful_fixture(fixture_dir, fixture_sentences):
    """Documents why `stateful` exists: without carried state only the first batch matches."""
    model = load_fixture(fixture_dir, state="stateless")
    sentence = fixture_sentences[0][1]
    with torch.no_grad():
        layers, _ = model(batch_to_ids([sentence]))
    assert np.abs(layers[0, 2].numpy() - expected_top_layer(fixture_dir, 0, 1)).max() > 0.1


def test_token_layer_reproduces_elmo_token_embeddings(fixture_dir):
    """458 vocabulary words packed into sentences of 50 tokens → char-CNN layer ≤ 2e-6."""
    vocabulary = (fixture_dir / "vocab_test.txt").read_text().split("\n")
    assert len(vocabulary) == 458
    with h5py.File(fixture_dir / "elmo_token_embeddings.hdf5", "r") as handle:
        expected = handle["embedding"][...]
    sentences = [vocabulary[i : i + 50] for i in range(0, len(vocabulary), 50)]
    model = load_fixture(fixture_dir)
    with torch.no_grad():
        layers, mask = model(batch_to_ids(sentences))
    tokens = layers[:, 0, :, :16][mask].numpy()  # (458, 16)
    assert np.abs(tokens - expected).max() <= 2e-6
    # `<S>` / `</S>` given as tokens equal the boundary vectors the biLM inserts itself.
    inserted = model.char_cnn(batch_to_ids([["<S>", "</S>"]])[0]).detach().numpy()
    rows = [vocabulary.index("<S>"), vocabulary.index("</S>")]
    np.testing.assert_allclose(inserted, expected[rows], atol=2e-6, rtol=0)
