"""Sentences grouped into batches of similar length: the one batching rule every stage uses.

A batch costs what its padded tensor holds: rows × its longest sentence. Sorting sentences by
length before cutting them into batches keeps that padding small, and a token budget on the
padded size keeps a batch of very long sentences from exhausting memory while short sentences
still run many at a time.

`length_batches` orders the sentences (longest first, shortest first, or as given), then cuts
the order into consecutive batches of at most `batch_size` sentences and at most `max_tokens`
padded positions (a sentence longer than the budget gets a batch of its own). With a random
generator it gives training batches that vary between epochs yet depend only on the seed:
lengths are jittered by ±10% before sorting and the batches are shuffled.
"""

from collections.abc import Sequence
from typing import Literal

import numpy as np

Order = Literal["longest", "shortest", "given"]


def length_order(
    lengths: Sequence[float] | np.ndarray,
    order: Order = "longest",
    generator: np.random.Generator | None = None,
) -> list[int]:
    """Indices of `lengths` by decreasing (``longest``) or increasing (``shortest``) length, ties
    in index order, or ``given`` as they are. A generator multiplies each length by a factor
    drawn uniformly from [0.9, 1.1] before sorting (one draw per sentence)."""
    if order == "given":
        return list(range(len(lengths)))
    if order not in ("longest", "shortest"):
        raise ValueError(f"order must be 'longest', 'shortest' or 'given', got {order!r}")
    keys = np.asarray(lengths, dtype=np.float64)
    if generator is not None:
        keys = keys * generator.uniform(0.9, 1.1, size=len(keys))
    return np.argsort(-keys if order == "longest" else keys, kind="stable").tolist()


def cut(
    indices: Sequence[int],
    lengths: Sequence[int] | np.ndarray,
    *,
    batch_size: int | None = None,
    max_tokens: int | None = None,
) -> list[list[int]]:
    """`indices` cut, in their order, into consecutive batches: a batch takes the next sentence
    while it holds fewer than `batch_size` sentences and, with it, at most `max_tokens` padded
    positions (rows × longest length, an empty sentence counting as one position). The first
    sentence of a batch always fits. None means no limit."""
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if max_tokens is not None and max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    batches: list[list[int]] = []
    longest = 0  # of the last batch
    for index in indices:
        length = int(lengths[index])
        if batches:
            current = batches[-1]
            padded = (len(current) + 1) * max(longest, length, 1)
            if (batch_size is None or len(current) < batch_size) and (
                max_tokens is None or padded <= max_tokens
            ):
                current.append(index)
                longest = max(longest, length)
                continue
        batches.append([index])
        longest = length
    return batches


def length_batches(
    lengths: Sequence[int] | np.ndarray,
    *,
    batch_size: int | None = None,
    max_tokens: int | None = None,
    order: Order = "longest",
    skip_empty: bool = False,
    generator: np.random.Generator | None = None,
) -> list[list[int]]:
    """Batches of indices into `lengths` (see the module docstring): `length_order` then `cut`.

    skip_empty: sentences of length 0 go in no batch. generator: jitter the lengths before
    sorting, then shuffle the batches; the batches then depend only on the generator's state
    (it draws one number per sentence, then one permutation of the batches).
    """
    indices = length_order(lengths, order, generator)
    if skip_empty:
        indices = [i for i in indices if lengths[i] > 0]
    batches = cut(indices, lengths, batch_size=batch_size, max_tokens=max_tokens)
    if generator is not None:
        batches = [batches[i] for i in generator.permutation(len(batches))]
    return batches
