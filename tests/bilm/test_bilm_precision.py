"""The biLM's LSTM products in bfloat16 (ner.common.precision): near float32, not in training."""

import torch

from ner.bilm.bilm import BiLM
from ner.bilm.char_ids import batch_to_ids


def test_bfloat16_products_stay_close_to_float32(fixture_dir, fixture_sentences):
    model = BiLM.from_files(
        fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5", state="stateless"
    ).eval()
    sentences = fixture_sentences[0] + fixture_sentences[1]
    exact = model.embed_sentences(sentences)
    model.lstm.product_dtype = torch.bfloat16
    reduced = model.embed_sentences(sentences)
    for full, low in zip(exact, reduced, strict=True):
        assert low.dtype == torch.float32 and low.shape == full.shape
        # The token layer does not pass through the LSTM: unchanged.
        assert torch.equal(low[0], full[0])
        # The LSTM layers move by about bfloat16's resolution (2^-8 of a value), not more.
        scale = full[1:].abs().amax()
        error = (low[1:] - full[1:]).abs().amax()
        assert 0 < error < 0.01 * scale


def test_training_ignores_the_product_dtype(fixture_dir, fixture_sentences):
    model = BiLM.from_files(
        fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5", state="stateless"
    )
    sentence = fixture_sentences[2][:4]
    ids = batch_to_ids(sentence)
    exact, _ = model(ids)
    model.lstm.product_dtype = torch.bfloat16
    with torch.enable_grad():
        trained, _ = model(ids)
    assert torch.equal(trained, exact)
    with torch.no_grad():
        predicted, _ = model(ids)
    assert not torch.equal(predicted, exact)
