"""Seeded sentence subsets: held-out dev/test splits and nested training fractions.

A training fraction places sentence i by the sha256 of ``"train_fraction:<seed>:<i>"``; a holdout
places a sentence by the sha256 of ``"holdout:<seed>:<its tokens>"``, so every copy of a
repeated sentence lands on the same side. Both orders are the same on every machine and every
Python or NumPy version (unlike ``hash()`` or a library's RNG stream), and taking the first k
sentences of one order makes smaller fractions subsets of larger ones (2% ⊂ 5% ⊂ 10%).
"""

import hashlib
import json
from collections.abc import Sequence

from ner.common.errors import InputError


def seeded_order(count: int, seed: int, purpose: str) -> list[int]:
    """The indices ``0..count-1`` in an order fixed by `seed` and `purpose` alone."""
    return sorted(
        range(count), key=lambda i: hashlib.sha256(f"{purpose}:{seed}:{i}".encode()).digest()
    )


def fraction_size(count: int, fraction: float, what: str) -> int:
    """How many of `count` sentences `fraction` (in (0, 1]) selects: at least one."""
    if isinstance(fraction, bool) or not isinstance(fraction, int | float):
        raise InputError(f"{what} must be a number in (0, 1], got {fraction!r}")
    if not 0 < fraction <= 1:
        raise InputError(f"{what} must be in (0, 1], got {fraction}")
    return max(1, round(count * fraction))


def nested_subset(count: int, fraction: float, seed: int) -> list[int]:
    """Indices (in corpus order) of `fraction` of `count` training sentences; for one `seed`,
    the subset of a smaller fraction is contained in that of a larger one."""
    size = fraction_size(count, fraction, "train_fraction")
    return sorted(seeded_order(count, seed, "train_fraction")[:size])


def holdout_splits(
    sentences: Sequence[Sequence[str]], fraction: float, seed: int, splits: list[str]
) -> dict[str, list[int]]:
    """Carve each of `splits` (about ``fraction`` of the sentences each) out of a training split;
    returns the indices (in corpus order) of every carved split and of what stays ``train``.

    The tokens decide: all copies of a sentence go to one side, so no carved sentence is also
    a training sentence. Distinct sentences are taken in an order fixed by `seed` and their
    tokens; a carved split takes a sentence with all its copies only while they fit its size
    (when none fits, the first one), so sizes match the fraction unless copies dominate."""
    count = len(sentences)
    size = fraction_size(count, fraction, "holdout")
    groups: dict[str, list[int]] = {}
    for index, tokens in enumerate(sentences):
        groups.setdefault(json.dumps(list(tokens), ensure_ascii=False), []).append(index)
    remaining = sorted(
        groups, key=lambda text: hashlib.sha256(f"holdout:{seed}:{text}".encode()).digest()
    )
    carved: dict[str, list[int]] = {}
    for split in splits:
        taken = [text for text in remaining if len(groups[text]) <= size]
        chosen: list[int] = []
        for text in taken:
            if len(chosen) + len(groups[text]) <= size:
                chosen += groups[text]
                remaining.remove(text)
        if not chosen and remaining:  # every sentence left has more copies than the size
            chosen = groups[remaining.pop(0)]
        carved[split] = sorted(chosen)
    train = sorted(i for text in remaining for i in groups[text])
    if not train or not all(carved.values()):
        repeats = f" ({len(groups)} distinct; copies stay together)" if len(groups) < count else ""
        raise InputError(
            f"holdout={fraction} of {count} sentences{repeats} leaves no training data for "
            f"{' and '.join(splits)}; use a smaller holdout or add sentences"
        )
    return {**carved, "train": train}
