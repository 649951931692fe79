"""Packing sentences into streams for truncated back-propagation through time (bilm-tf batching).

Sentences, each wrapped as `<S> w_1 … w_n </S>`, are laid back to back (shuffled order per epoch)
and the sequence is cut into `num_streams` contiguous streams. Row r of every batch continues
stream r, so the LSTM state of row r is carried from one batch to the next and no position is
padding. The backward LM reads the same sequence reversed (`</S> w_n … w_1 <S>`), as bilm-tf does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from ner.pretrain.corpus import CorpusError, Split
from ner.pretrain.vocabulary import BOS_ID, EOS_ID


@dataclass
class Batch:
    """One window of every stream: inputs and next-token targets as type ids, (B, T) each."""

    forward_inputs: torch.Tensor
    forward_targets: torch.Tensor
    backward_inputs: torch.Tensor
    backward_targets: torch.Tensor

    @property
    def num_targets(self) -> int:
        return self.forward_targets.numel() + self.backward_targets.numel()


def pack(split: Split, order: np.ndarray) -> np.ndarray:
    """The sentences of `split` in `order`, each as `<S> … </S>`, concatenated: (n_tokens + 2n,)."""
    lengths = np.diff(split.offsets)[order]
    starts = np.cumsum(lengths + 2) - (lengths + 2)  # where each <S> goes
    packed = np.empty(int(lengths.sum()) + 2 * len(order), dtype=np.int64)
    packed[starts] = BOS_ID
    packed[starts + lengths + 1] = EOS_ID
    word_starts = np.cumsum(lengths) - lengths
    sources = np.repeat(split.offsets[:-1][order] - word_starts, lengths) + np.arange(lengths.sum())
    words = np.ones(len(packed), dtype=bool)
    words[starts] = False
    words[starts + lengths + 1] = False
    packed[words] = split.ids[sources]
    return packed


class StreamBatcher:
    """Batches of `unroll_steps` positions from `num_streams` streams over a split.

    With `shuffle`, epoch e packs the sentences in the permutation drawn from `(seed, e)`, so any
    process can rebuild any epoch (resume, data-parallel ranks) without storing it.
    """

    def __init__(
        self, split: Split, num_streams: int, unroll_steps: int, shuffle: bool, seed: int = 0
    ) -> None:
        self.split = split
        self.num_streams = num_streams
        self.unroll_steps = unroll_steps
        self.shuffle = shuffle
        self.seed = seed
        positions = split.num_tokens + 2 * split.num_sentences
        self.stream_length = (positions - 1) // num_streams
        self.steps_per_epoch = self.stream_length // unroll_steps
        if self.steps_per_epoch <= 0:
            raise CorpusError(
                f"{positions} positions cannot fill one batch of {num_streams} streams × "
                f"{unroll_steps} steps (+1): use more text or a smaller batch"
            )

    def streams(self, epoch: int) -> tuple[np.ndarray, np.ndarray]:
        """Forward and backward streams of an epoch, (num_streams, stream_length + 1) each."""
        order = np.arange(self.split.num_sentences)
        if self.shuffle:
            order = np.random.default_rng([self.seed, epoch]).permutation(order)
        packed = pack(self.split, order)
        span = self.num_streams * self.stream_length + 1
        index = np.arange(self.num_streams)[:, None] * self.stream_length + np.arange(
            self.stream_length + 1
        )
        return packed[:span][index], packed[::-1][:span][index]

    def batches(self, epoch: int, start: int = 0, rows: slice = slice(None)) -> Iterator[Batch]:
        """The batches of an epoch from step `start`, of stream `rows` only (a rank's share)."""
        forward, backward = (torch.from_numpy(s[rows]) for s in self.streams(epoch))
        for step in range(start, self.steps_per_epoch):
            window = slice(step * self.unroll_steps, (step + 1) * self.unroll_steps)
            after = slice(window.start + 1, window.stop + 1)
            yield Batch(
                forward[:, window], forward[:, after], backward[:, window], backward[:, after]
            )
