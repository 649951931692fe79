"""A large, frozen word list (id = position) packed into one UTF-8 buffer.

The GloVe words beyond a tagger's training vocabulary number about 400k. As a `Vocabulary` they
take one Python string plus a list and a dict entry each, about 50 MB with the heap fragments
they leave; packed they take about 8 MB: the words sorted by their UTF-8 bytes in one buffer,
where a lookup is a binary search. It is written to JSON as the `Vocabulary` it stands for.
"""

import bisect
from array import array
from collections.abc import Iterable
from itertools import accumulate, pairwise
from pathlib import Path

import numpy as np

# The files of a saved `PackedWords`: the buffer, then the two arrays as raw machine integers.
FILES = {"buffer": "words.bin", "starts": "starts.bin", "ids": "ids.bin"}


def _utf8(word: str) -> bytes:
    return word.encode("utf-8", "surrogatepass")  # total: never fails on any str


class PackedWords:
    """`words` (no repeats) with ids 0…n-1 in their order; `id` and ``in`` by binary search."""

    def __init__(self, words: Iterable[str]) -> None:
        encoded = [_utf8(word) for word in words]
        order = sorted(range(len(encoded)), key=encoded.__getitem__)
        ranked = [encoded[i] for i in order]
        del encoded  # each list of 400k entries is megabytes: only one at a time beside `ranked`
        # a repeat sits next to its twin in byte order
        for first, second in pairwise(ranked):
            if first == second:
                raise ValueError(f"{first.decode('utf-8', 'surrogatepass')!r} repeats")
        self._buffer = b"".join(ranked)
        # _starts[k]: where the k-th word in byte order starts (one more entry: the end);
        # _ids[k]: its id
        self._starts = array("q", accumulate(map(len, ranked), initial=0))
        self._ids = array("i", order)

    def save(self, folder: Path) -> None:
        """Write the packed form into `folder` (`load` reads it back without re-sorting)."""
        (folder / FILES["buffer"]).write_bytes(self._buffer)
        (folder / FILES["starts"]).write_bytes(self._starts.tobytes())
        (folder / FILES["ids"]).write_bytes(self._ids.tobytes())

    @classmethod
    def load(cls, folder: Path) -> "PackedWords":
        """What `save` wrote; ValueError if the files do not fit together (a truncated copy)."""
        words = cls.__new__(cls)
        words._buffer = (folder / FILES["buffer"]).read_bytes()
        words._starts, words._ids = array("q"), array("i")
        for name in ("starts", "ids"):
            try:
                getattr(words, f"_{name}").frombytes((folder / FILES[name]).read_bytes())
            except ValueError:  # not a whole number of integers
                raise ValueError(f"{folder / FILES[name]} is cut short") from None
        ends = words._starts
        if len(ends) != len(words._ids) + 1 or ends[0] != 0 or ends[-1] != len(words._buffer):
            raise ValueError(f"the packed words in {folder} do not fit together")
        return words

    def __len__(self) -> int:
        return len(self._ids)

    def _word_at(self, rank: int) -> bytes:
        return self._buffer[self._starts[rank] : self._starts[rank + 1]]

    def _rank(self, word: str) -> int | None:
        """The position of `word` in byte order, or None if absent."""
        key = _utf8(word)
        rank = bisect.bisect_left(range(len(self)), key, key=self._word_at)
        return rank if rank < len(self) and self._word_at(rank) == key else None

    def __contains__(self, word: str) -> bool:
        return self._rank(word) is not None

    def get(self, word: str) -> int | None:
        """The id of `word`, or None if absent (one search, where ``in`` then `id` take two)."""
        rank = self._rank(word)
        return None if rank is None else self._ids[rank]

    def id(self, word: str) -> int:
        """The id of `word` (KeyError if absent)."""
        found = self.get(word)
        if found is None:
            raise KeyError(f"{word!r} is not among the {len(self)} words")
        return found

    def lines(self) -> bytes:
        """Every word's UTF-8 and a newline, in id order: the bytes of `items` written one a
        line, gathered from the buffer without decoding a word (a fraction of the time).
        ValueError when the ids are not each of 0…n-1 once (a damaged copy)."""
        ids = np.frombuffer(self._ids, dtype=np.int32)
        if len(ids) and (ids.min() < 0 or ids.max() >= len(ids)):
            raise ValueError(f"word ids out of the range 0-{len(ids) - 1}")
        # positions as int32 while they fit: half the memory traffic, most of the time taken
        index = np.int32 if len(self._buffer) + len(ids) < 2**31 else np.int64
        rank = np.full(len(ids), -1, dtype=index)
        rank[ids] = np.arange(len(ids), dtype=index)
        if (rank < 0).any():
            raise ValueError("a word id repeats")
        starts = np.frombuffer(self._starts, dtype=np.int64).astype(index)
        first, length = starts[rank], np.diff(starts)[rank]
        ends = np.cumsum(length + 1, dtype=index)  # where each word's line ends in the result
        # result position p of id i's line: buffer position p - (the line's start) + first[i]
        source = np.repeat(first - (ends - length - 1), length + 1)
        source += np.arange(len(source), dtype=index)
        lines = np.frombuffer(self._buffer + b"\n", dtype=np.uint8)[source]
        lines[ends - 1] = ord("\n")
        return lines.tobytes()

    @property
    def items(self) -> list[str]:
        """Every word in id order (built on each call)."""
        words = [""] * len(self)
        for rank, word_id in enumerate(self._ids):
            words[word_id] = self._word_at(rank).decode("utf-8", "surrogatepass")
        return words

    def to_json(self) -> dict:
        """The JSON of a `Vocabulary` of these words without specials (what `from_json` reads)."""
        return {"items": self.items, "unknown": None}

    @classmethod
    def from_json(cls, data: dict) -> "PackedWords":
        """The words of a `Vocabulary`'s JSON that has no unknown item (as `to_json` writes):
        ValueError for another layout, a word that is not a string, or a repeated word."""
        if not isinstance(data, dict) or data.get("unknown") is not None:
            raise ValueError("expected a word list without an unknown item")
        words = data.get("items")
        if not isinstance(words, list) or not all(isinstance(word, str) for word in words):
            raise ValueError("expected 'items' to be a list of strings")
        return cls(words)
