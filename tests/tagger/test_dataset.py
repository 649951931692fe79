"""Encoded sentences and their batches: the char ids a batch pads, and what the encoded splits of
a training run hold in memory."""

import random
import tracemalloc

import numpy as np

from ner.tagger.dataset import Vocabularies, collate

SENTENCES = [["Wolfgang", "sang", ""], ["a"], [], ["Über", "extraordinarily", "x"]]


def test_a_batch_pads_each_tokens_chars_to_the_longest_token_of_the_batch():
    vocabularies = Vocabularies.build(SENTENCES, ["O"], max_chars=10)
    examples = [vocabularies.encode(i, tokens, None) for i, tokens in enumerate(SENTENCES)]
    batch = collate(examples)
    assert batch.chars.shape == (4, 3, 10)  # "extraordinarily" truncated at max_chars
    for row, tokens in enumerate(SENTENCES):
        for position in range(3):
            token = tokens[position][:10] if position < len(tokens) else ""
            expected = [vocabularies.chars.id(c) for c in token] + [0] * (10 - len(token))
            assert batch.chars[row, position].tolist() == expected
    assert collate(examples[1:2]).chars.shape == (1, 1, 1)
    assert collate(examples[2:3]).chars.shape == (1, 0, 1)  # an empty sentence


def test_encoded_sentences_take_about_their_char_ids():
    """A run keeps every encoded sentence of every split (300k CoNLL-2003 tokens); one list of
    ids per token took about 150 bytes a token, one (T, C) int32 array per sentence about 70."""
    generator = random.Random(1)
    sentences = [
        ["".join(generator.choices("abcdefgh", k=generator.randint(1, 8))) for _ in range(20)]
        for _ in range(2000)
    ]
    vocabularies = Vocabularies.build(sentences, ["O"])
    tags = ["O"] * 20
    tracemalloc.start()
    try:
        examples = [vocabularies.encode(i, tokens, tags) for i, tokens in enumerate(sentences)]
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held <= 80 * 20 * len(sentences), held / (20 * len(sentences))
    assert examples[0].chars.dtype == np.int32
