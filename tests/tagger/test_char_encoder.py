"""The char CNN: a word's vector is the same alone or in any batch (padding, repeats)."""

import torch

from ner.tagger.char_encoder import CharCnnEncoder


def test_each_token_is_encoded_as_if_alone():
    torch.manual_seed(0)
    encoder = CharCnnEncoder(num_chars=12, char_dim=4, filters=6, width=3)
    # (B=2, T=3, C=5): repeated words, a one-char word, padding tokens and padding chars
    chars = torch.tensor(
        [
            [[1, 2, 3, 0, 0], [4, 5, 6, 7, 8], [1, 2, 3, 0, 0]],
            [[9, 0, 0, 0, 0], [1, 2, 3, 0, 0], [0, 0, 0, 0, 0]],
        ]
    )
    batched = encoder(chars)
    assert batched.shape == (2, 3, 6)
    for b in range(2):
        for t in range(3):
            word = chars[b, t][chars[b, t] > 0]
            if len(word):
                alone = encoder(word.view(1, 1, -1))[0, 0]
                torch.testing.assert_close(batched[b, t], alone)
    gradient = torch.randn_like(batched)
    (batched * gradient).sum().backward()
    expected = encoder.conv.weight.grad.clone()
    encoder.zero_grad()
    per_token = torch.stack(
        [encoder(chars[b, t].view(1, 1, -1))[0, 0] for b in range(2) for t in range(3)]
    )
    (per_token * gradient.view(6, -1)).sum().backward()
    torch.testing.assert_close(encoder.conv.weight.grad, expected)


def test_gradients_are_bitwise_identical_with_two_threads():
    """The embedding gradient sums each word's repeats in a fixed order: with `pooled[inverse]`
    torch accumulated them with parallel atomic adds, and runs drifted apart."""
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        torch.manual_seed(0)
        encoder = CharCnnEncoder(num_chars=40, char_dim=16, filters=128, width=3)
        chars = torch.randint(1, 40, (64, 30, 6))  # (B, T, C): 1,920 tokens, many repeats
        chars[:, 1::2] = chars[0, 0]  # half the tokens are one word, in every row
        upstream = torch.randn(64, 30, 128)
        gradients = []
        for _ in range(20):
            encoder.zero_grad()
            (encoder(chars) * upstream).sum().backward()
            gradients.append(encoder.conv.weight.grad.clone())
    finally:
        torch.set_num_threads(threads)
    assert all(torch.equal(gradients[0], g) for g in gradients[1:])


def test_words_encoded_in_chunks_match_one_pass(monkeypatch):
    torch.manual_seed(0)
    encoder = CharCnnEncoder(num_chars=30, char_dim=4, filters=6, width=3)
    chars = torch.randint(0, 30, (8, 12, 7))  # (B, T, C): ~96 distinct words
    whole = encoder(chars)
    monkeypatch.setattr(CharCnnEncoder, "CHUNK_WORDS", 10)
    torch.testing.assert_close(encoder(chars), whole)
