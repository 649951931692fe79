"""Packing sentences into carried-state streams (bilm-tf batching)."""

import numpy as np
import pytest
import torch

from ner.pretrain.corpus import CorpusError, Split
from ner.pretrain.streams import StreamBatcher, pack
from ner.pretrain.vocabulary import BOS_ID, EOS_ID


def split_of(sentences: list[list[int]]) -> Split:
    offsets = np.cumsum([0] + [len(s) for s in sentences])
    return Split(np.array([t for s in sentences for t in s], dtype=np.int64), offsets)


def test_pack_wraps_every_sentence_in_boundaries() -> None:
    split = split_of([[10, 11], [12], [13, 14, 15]])
    packed = pack(split, np.array([2, 0, 1]))
    assert packed.tolist() == [0, 13, 14, 15, 1, 0, 10, 11, 1, 0, 12, 1]
    assert pack(split, np.arange(3)).tolist() == [0, 10, 11, 1, 0, 12, 1, 0, 13, 14, 15, 1]


def test_streams_continue_across_batches_and_targets_are_next_tokens() -> None:
    sentences = [[10 + i, 20 + i, 30 + i] for i in range(40)]  # 200 positions
    batcher = StreamBatcher(split_of(sentences), num_streams=3, unroll_steps=4, shuffle=False)
    packed = pack(batcher.split, np.arange(40))
    assert batcher.stream_length == 199 // 3 and batcher.steps_per_epoch == 66 // 4
    batches = list(batcher.batches(0))
    assert len(batches) == batcher.steps_per_epoch
    forward = torch.cat([b.forward_inputs for b in batches], dim=1)  # (3, 64)
    for row in range(3):
        start = row * batcher.stream_length
        assert forward[row].tolist() == packed[start : start + 64].tolist()
    for batch in batches:
        assert torch.equal(batch.forward_targets[:, :-1], batch.forward_inputs[:, 1:])
        assert torch.equal(batch.backward_targets[:, :-1], batch.backward_inputs[:, 1:])
    reverse = packed[::-1]
    backward = torch.cat([b.backward_inputs for b in batches], dim=1)
    assert backward[0].tolist() == reverse[:64].tolist()
    assert reverse[0] == EOS_ID and reverse[4] == BOS_ID  # </S> w_n ... w_1 <S>


def test_rank_rows_are_slices_of_the_full_batch() -> None:
    sentences = [[5 + i % 7] * (1 + i % 5) for i in range(100)]
    batcher = StreamBatcher(
        split_of(sentences), num_streams=4, unroll_steps=3, shuffle=True, seed=3
    )
    full = next(batcher.batches(2, start=5))
    half = next(batcher.batches(2, start=5, rows=slice(2, 4)))
    assert torch.equal(full.forward_inputs[2:], half.forward_inputs)
    assert torch.equal(full.backward_targets[2:], half.backward_targets)
    other_epoch = next(batcher.batches(3, start=5))
    assert not torch.equal(full.forward_inputs, other_epoch.forward_inputs)


def test_too_little_text_for_one_batch_is_an_error() -> None:
    with pytest.raises(CorpusError, match="cannot fill one batch of 8 streams"):
        StreamBatcher(split_of([[5, 6, 7]] * 3), num_streams=8, unroll_steps=20, shuffle=False)
