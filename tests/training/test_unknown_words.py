"""Singleton replacement: only words seen once in training become unknown, at the set rate, and
the same generator seed replaces the same words."""

import numpy as np
import pytest
import torch

from ner.common.vocabulary import Vocabulary
from ner.training.unknown_words import SingletonReplacement

SENTENCES = [["Rome", "is", "big"], ["rome", "is", "old"]]  # counted lowercased: rome ×2, is ×2


def test_only_singletons_are_replaced_at_the_given_rate():
    vocabulary = Vocabulary(["rome", "is", "big", "old"])
    replacement = SingletonReplacement.from_sentences(SENTENCES, vocabulary, probability=0.5)
    assert replacement.is_singleton.nonzero().flatten().tolist() == [
        vocabulary.id("big"),
        vocabulary.id("old"),
    ]
    words = torch.tensor([[vocabulary.id(w) for w in ("rome", "is", "big", "old")]] * 2000)
    replaced = replacement(words, np.random.default_rng(0))
    assert torch.equal(replaced[:, :2], words[:, :2])  # frequent words are never touched
    rate = float((replaced[:, 2:] == 1).float().mean())
    assert rate == pytest.approx(0.5, abs=0.03)
    assert torch.equal(replaced, replacement(words, np.random.default_rng(0)))


def test_a_probability_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match=r"in \[0, 1\], got 1.5"):
        SingletonReplacement([2], 4, probability=1.5)
