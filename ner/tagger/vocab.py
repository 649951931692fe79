"""A string ↔ id vocabulary that serialises to plain JSON (for model archives)."""

from collections import Counter
from collections.abc import Iterable

PAD = "@@PADDING@@"
UNK = "@@UNKNOWN@@"


class Vocabulary:
    """Ids in insertion order; id 0 is padding and id 1 the unknown item when `with_unknown`."""

    def __init__(self, items: Iterable[str], *, with_unknown: bool = True) -> None:
        specials = [PAD, UNK] if with_unknown else []
        self.items: list[str] = []
        self.index: dict[str, int] = {}
        for item in [*specials, *items]:
            if item not in self.index:
                self.index[item] = len(self.items)
                self.items.append(item)
        self.with_unknown = with_unknown

    @classmethod
    def from_counts(cls, counts: Counter[str], min_count: int = 1) -> "Vocabulary":
        """Items seen at least `min_count` times, most frequent first (ties: alphabetical)."""
        kept = sorted(
            (item for item, n in counts.items() if n >= min_count),
            key=lambda item: (-counts[item], item),
        )
        return cls(kept)

    def __len__(self) -> int:
        return len(self.items)

    def __contains__(self, item: str) -> bool:
        return item in self.index

    def id(self, item: str) -> int:
        """The id of `item`; the unknown id for an unseen item (KeyError without one)."""
        found = self.index.get(item)
        if found is not None:
            return found
        if not self.with_unknown:
            raise KeyError(f"{item!r} is not in the vocabulary and it has no unknown item")
        return 1

    def to_json(self) -> dict:
        """A JSON-serialisable dict that `from_json` reads back."""
        return {"items": self.items, "with_unknown": self.with_unknown}

    @classmethod
    def from_json(cls, data: dict) -> "Vocabulary":
        """The inverse of `to_json`."""
        vocab = cls([], with_unknown=False)
        for item in data["items"]:
            vocab.index[item] = len(vocab.items)
            vocab.items.append(item)
        vocab.with_unknown = bool(data["with_unknown"])
        return vocab
