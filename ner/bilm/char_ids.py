"""Character ids for the ELMo char-CNN (docs/bilm.md, "Character ids").

Every token becomes 50 ids: begin-of-word, the first 48 UTF-8 bytes, end-of-word, then char padding,
all shifted by +1 so that an all-zero row means "no token" (sentence padding).
"""

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import torch

MAX_CHARACTERS_PER_TOKEN = 50

# Raw (unshifted) special character ids.
BEGIN_OF_SENTENCE_CHAR = 256
END_OF_SENTENCE_CHAR = 257
BEGIN_OF_WORD_CHAR = 258
END_OF_WORD_CHAR = 259
PADDING_CHAR = 260

BOS_TOKEN = "<S>"
EOS_TOKEN = "</S>"


def _special_row(char: int) -> tuple[int, ...]:
    """Shifted ids of a one-character special token such as the sentence boundaries."""
    raw = [BEGIN_OF_WORD_CHAR, char, END_OF_WORD_CHAR]
    raw += [PADDING_CHAR] * (MAX_CHARACTERS_PER_TOKEN - len(raw))
    return tuple(c + 1 for c in raw)


BOS_CHAR_IDS = _special_row(BEGIN_OF_SENTENCE_CHAR)
EOS_CHAR_IDS = _special_row(END_OF_SENTENCE_CHAR)


@lru_cache(maxsize=200_000)
def token_to_char_ids(token: str) -> tuple[int, ...]:
    """The 50 shifted character ids of a token (`<S>`/`</S>` map to the sentence boundary rows)."""
    if token == BOS_TOKEN:
        return BOS_CHAR_IDS
    if token == EOS_TOKEN:
        return EOS_CHAR_IDS
    data = token.encode("utf-8", "ignore")[: MAX_CHARACTERS_PER_TOKEN - 2]
    raw = [BEGIN_OF_WORD_CHAR, *data, END_OF_WORD_CHAR]
    raw += [PADDING_CHAR] * (MAX_CHARACTERS_PER_TOKEN - len(raw))
    return tuple(c + 1 for c in raw)


def batch_to_ids(sentences: Sequence[Sequence[str]]) -> torch.LongTensor:
    """Character ids of a batch of tokenized sentences, right-padded with all-zero token rows.

    Returns (B, T, 50), T the longest sentence; boundaries are NOT included (the biLM adds them).
    """
    longest = max((len(sentence) for sentence in sentences), default=0)
    ids = np.zeros((len(sentences), longest, MAX_CHARACTERS_PER_TOKEN), dtype=np.int64)
    for row, sentence in enumerate(sentences):
        if sentence:
            ids[row, : len(sentence)] = [token_to_char_ids(t) for t in sentence]
    return torch.from_numpy(ids)
