"""A large, frozen word list (id = position) packed into one UTF-8 buffer.

The GloVe words beyond a tagger's training vocabulary number about 400k. As a `Vocabulary` they
take one Python string plus a list and a dict entry each, about 50 MB with the heap fragments
they leave; packed they take about 8 MB: the words sorted by their UTF-8 bytes in one buffer,
where a lookup is a binary search. It is written to JSON as the `Vocabulary` it stands for.
"""

import bisect
from array import array
from collections import Counter
from collections.abc import Iterable
from itertools import accumulate
from pathlib import Path

# The files of a saved `PackedWords`: the buffer, then the two arrays as raw machine integers.
FILES = {"buffer": "words.bin", "starts": "starts.bin", "ids": "ids.bin"}


def _utf8(word: str) -> bytes:
    return word.encode("utf-8", "surrogatepass")  # total: never fails on any str


class PackedWords:
    """`words` (no repeats) with ids 0…n-1 in their order; `id` and ``in`` by binary search."""

    def __init__(self, words: Iterable[str]) -> None:
        encoded = [_utf8(word) for word in words]
        if len(set(encoded)) < len(encoded):
            repeated = next(word for word, count in Counter(encoded).items() if count > 1)
            raise ValueError(f"{repeated.decode('utf-8', 'surrogatepass')!r} repeats")
        order = sorted(range(len(encoded)), key=encoded.__getitem__)
        ranked = [encoded[i] for i in order]
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

    def id(self, word: str) -> int:
        """The id of `word` (KeyError if absent)."""
        rank = self._rank(word)
        if rank is None:
            raise KeyError(f"{word!r} is not among the {len(self)} words")
        return self._ids[rank]

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
