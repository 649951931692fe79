"""The softmax vocabulary of the biLM: bilm-tf's format and order.

One token per line, `<S>`, `</S>`, `<UNK>` first, then by descending frequency, so that a
log-uniform (Zipf) candidate sampler over the ids matches the word distribution. The vocabulary
only defines the prediction targets; inputs are always full character ids, so no word is out of
vocabulary on the input side.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ner.common.vocabulary import Vocabulary

BOS, EOS, UNK = "<S>", "</S>", "<UNK>"
SPECIAL_TOKENS = (BOS, EOS, UNK)
BOS_ID, EOS_ID, UNK_ID = 0, 1, 2


def vocabulary_size(counts: np.ndarray, max_size: int | None, min_count: int) -> int:
    """How many of the frequency-sorted types (specials first) form the vocabulary.

    `counts` are training counts in type order (specials first, then descending).
    """
    specials = len(SPECIAL_TOKENS)
    frequent = int(np.count_nonzero(counts[specials:] >= min_count))
    size = specials + frequent
    return size if max_size is None else min(size, max_size)


def softmax_vocabulary(types: Sequence[str], size: int) -> Vocabulary:
    """The first `size` corpus types (specials first, then by descending frequency) as the
    softmax vocabulary; `write_lines` gives bilm-tf's file."""
    if tuple(types[: len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS:
        raise ValueError(f"a vocabulary must start with {SPECIAL_TOKENS}, got {list(types[:3])}")
    return Vocabulary(types[len(SPECIAL_TOKENS) : size], specials=SPECIAL_TOKENS, unknown=UNK)
