"""Character CNN word encoder: char embedding → 1-d convolution → ReLU → max over positions."""

import torch
from torch import nn


class CharCnnEncoder(nn.Module):
    """AllenNLP's NER char encoder (16-d chars, 128 filters of width 3, ReLU, max-pooled).

    Unlike AllenNLP, windows that lie wholly in padding are excluded from the max, so a word's
    vector does not depend on how long the longest word of its batch is. Each distinct word of
    a batch is encoded once (about half the tokens of a CoNLL batch repeat a word or are
    padding), which makes the CNN, forward and backward, about twice as fast.
    """

    CHUNK_WORDS = 1024  # distinct words convolved at a time

    def __init__(self, num_chars: int, char_dim: int = 16, filters: int = 128, width: int = 3):
        super().__init__()
        self.width = width
        self.embedding = nn.Embedding(num_chars, char_dim, padding_idx=0)
        self.conv = nn.Conv1d(char_dim, filters, kernel_size=width)
        self.output_dim = filters

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        """chars: (B, T, C) char ids, 0 = padding → (B, T, filters)."""
        batch_size, length, max_chars = chars.shape
        if max_chars < self.width:
            chars = nn.functional.pad(chars, (0, self.width - max_chars))
            max_chars = self.width
        # flat: (U, C) the distinct words; inverse: (B*T,) each token's row in flat
        flat, inverse = torch.unique(chars.reshape(-1, max_chars), dim=0, return_inverse=True)
        # pooled: (U, filters). In chunks of words: the (words, filters, positions) activations
        # of a 256-sentence evaluation batch would otherwise take hundreds of MB at once.
        pooled = torch.cat([self._pool(words) for words in flat.split(self.CHUNK_WORDS)])
        # index_select, not pooled[inverse]: the latter's backward accumulates with parallel
        # atomic adds on CPU, so the gradient's summation order (and the run) varied by thread.
        return pooled.index_select(0, inverse).view(batch_size, length, -1)

    def _pool(self, words: torch.Tensor) -> torch.Tensor:
        """Distinct words (U, C) char ids → their max-pooled filter outputs (U, filters)."""
        # embedded: (U, char_dim, C)
        embedded = self.embedding(words).transpose(1, 2)
        # convolved: (U, filters, C - width + 1)
        convolved = self.conv(embedded)
        word_lengths = (words > 0).sum(1)
        windows = torch.clamp(word_lengths - self.width + 1, min=1)
        positions = torch.arange(convolved.size(2), device=words.device)
        # valid: (U, 1, positions). Windows in padding are set to 0, which the ReLU keeps and
        # which is neutral for a max over ReLU outputs. Both steps work in place (neither
        # backward needs the values they overwrite): one tensor of activations, not three.
        valid = (positions.unsqueeze(0) < windows.unsqueeze(1)).unsqueeze(1)
        return torch.relu_(convolved.masked_fill_(~valid, 0.0)).max(2).values
