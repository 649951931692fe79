"""The biLM's LSTM products in bfloat16 (ner.common.precision): near float32, not in training."""

import torch

from ner.bilm.bilm import BiLM
from ner.bilm.char_cnn import CharCNN
from ner.bilm.char_ids import batch_to_ids
from ner.bilm.options import BiLMOptions


def test_bfloat16_products_stay_close_to_float32(fixture_dir, fixture_sentences):
    model = BiLM.from_files(
        fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5", state="stateless"
    ).eval()
    sentences = fixture_sentences[0] + fixture_sentences[1]
    exact = model.embed_sentences(sentences)
    model.set_precision("bfloat16")
    reduced = model.embed_sentences(sentences)
    for full, low in zip(exact, reduced, strict=True):
        assert low.dtype == torch.float32 and low.shape == full.shape
        # The token layer does not pass through the LSTM: unchanged.
        assert torch.equal(low[0], full[0])
        # The LSTM layers move by about bfloat16's resolution (2^-8 of a value), not more.
        scale = full[1:].abs().amax()
        error = (low[1:] - full[1:]).abs().amax()
        assert 0 < error < 0.01 * scale


def test_training_ignores_the_precision(fixture_dir, fixture_sentences):
    model = BiLM.from_files(
        fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5", state="stateless"
    )
    sentence = fixture_sentences[2][:4]
    ids = batch_to_ids(sentence)
    exact, _ = model(ids)
    model.set_precision("bfloat16")
    with torch.enable_grad():
        trained, _ = model(ids)
    assert torch.equal(trained, exact)
    with torch.no_grad():
        predicted, _ = model(ids)
    assert not torch.equal(predicted, exact)


def test_char_cnn_as_one_product_equals_the_convolutions():
    # Under autocast (mixed-precision pretraining) the char-CNN runs all filters as one product:
    # in float32 it must give the convolutions' numbers, for short tokens and for tokens whose
    # characters fill all 50 slots (no repeated tail: a filter's last positions must be cut).
    options = BiLMOptions.from_dict(
        {
            "lstm": {"dim": 8, "projection_dim": 4, "n_layers": 1, "cell_clip": 3,
                     "proj_clip": 3, "use_skip_connections": True},
            "char_cnn": {"embedding": {"dim": 4}, "filters": [[1, 4], [3, 6], [5, 8]],
                         "n_highway": 1, "n_characters": 262, "max_characters_per_token": 50,
                         "activation": "relu"},
        }
    )  # fmt: skip
    torch.manual_seed(0)
    cnn = CharCNN(options)
    with torch.no_grad():
        cnn.char_embed.weight[1:].normal_()  # row 0 (padding) stays zero
    words = ["EU", "rejects", "x" * 46, "y" * 48, "é" * 30, "z" * 60, ",", "1987"]
    ids = batch_to_ids([words])[0]  # (8, 50)
    exact = cnn(ids)
    rows = ids.reshape(-1, 50)
    product = cnn._highway_and_projection(cnn._pooled_as_one_product(rows, torch.float32))
    torch.testing.assert_close(product, exact, rtol=1e-5, atol=1e-5)
    exact_grads = torch.autograd.grad(exact.square().sum(), list(cnn.parameters()))
    product_grads = torch.autograd.grad(product.square().sum(), list(cnn.parameters()))
    for want, got in zip(exact_grads, product_grads, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = cnn(ids)
    assert mixed.shape == exact.shape
    assert (mixed.float() - exact).abs().amax() < 0.02 * exact.abs().amax()
