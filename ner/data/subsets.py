"""Seeded sentence subsets: held-out dev/test splits and nested training fractions.

A sentence's place in a seeded order is the sha256 of ``"<purpose>:<seed>:<index>"``. That order
is the same on every machine and every Python or NumPy version (unlike ``hash()`` or a library's
RNG stream), and taking the first k sentences of one order makes smaller fractions subsets of
larger ones (2% ⊂ 5% ⊂ 10%).
"""

import hashlib


def seeded_order(count: int, seed: int, purpose: str) -> list[int]:
    """The indices ``0..count-1`` in an order fixed by `seed` and `purpose` alone."""
    return sorted(
        range(count), key=lambda i: hashlib.sha256(f"{purpose}:{seed}:{i}".encode()).digest()
    )


def fraction_size(count: int, fraction: float, what: str) -> int:
    """How many of `count` sentences `fraction` (in (0, 1]) selects: at least one."""
    if isinstance(fraction, bool) or not isinstance(fraction, int | float):
        raise ValueError(f"{what} must be a number in (0, 1], got {fraction!r}")
    if not 0 < fraction <= 1:
        raise ValueError(f"{what} must be in (0, 1], got {fraction}")
    return max(1, round(count * fraction))


def nested_subset(count: int, fraction: float, seed: int) -> list[int]:
    """Indices (in corpus order) of `fraction` of `count` training sentences; for one `seed`,
    the subset of a smaller fraction is contained in that of a larger one."""
    size = fraction_size(count, fraction, "train_fraction")
    return sorted(seeded_order(count, seed, "train_fraction")[:size])


def holdout_splits(count: int, fraction: float, seed: int, splits: list[str]) -> dict[str, list]:
    """Carve each of `splits` (``fraction`` of `count` sentences each) out of a training split;
    returns the indices (in corpus order) of every carved split and of what stays ``train``."""
    size = fraction_size(count, fraction, "holdout")
    if count - size * len(splits) < 1:
        raise ValueError(
            f"holdout={fraction} of {count} sentences leaves no training data for "
            f"{' and '.join(splits)}; use a smaller holdout or add sentences"
        )
    order = seeded_order(count, seed, "holdout")
    carved = {split: sorted(order[i * size : (i + 1) * size]) for i, split in enumerate(splits)}
    return {**carved, "train": sorted(order[size * len(splits) :])}
