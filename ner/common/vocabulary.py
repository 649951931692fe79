"""One string ↔ id vocabulary for the toolkit: the tagger's words, characters and pretrained
words (saved as JSON in model archives) and the biLM's softmax vocabulary (bilm-tf's text file,
one token a line).

Ids follow insertion order with the special items first; the unknown item, when there is one,
is the id of every item not in the vocabulary.
"""

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ner.common.files import write_text

PAD = "@@PADDING@@"
UNK = "@@UNKNOWN@@"


class Vocabulary:
    """`specials` then `items` (repeats dropped); `unknown` (one of `specials`, or None) is the
    id of unseen items. The default is the tagger's: id 0 padding, id 1 unknown."""

    def __init__(
        self,
        items: Iterable[str] = (),
        *,
        specials: Sequence[str] = (PAD, UNK),
        unknown: str | None = UNK,
    ) -> None:
        if unknown is not None and unknown not in specials:
            raise ValueError(f"the unknown item {unknown!r} must be one of the specials {specials}")
        self.items: list[str] = []
        self.index: dict[str, int] = {}
        for item in [*specials, *items]:
            if item not in self.index:
                self.index[item] = len(self.items)
                self.items.append(item)
        self.unknown = unknown

    @classmethod
    def from_counts(
        cls,
        counts: Mapping[str, int],
        *,
        min_count: int = 1,
        max_size: int | None = None,
        specials: Sequence[str] = (PAD, UNK),
        unknown: str | None = UNK,
    ) -> "Vocabulary":
        """Items seen at least `min_count` times, most frequent first (ties: alphabetical), at
        most `max_size` ids in all (specials included)."""
        kept = sorted(
            (item for item, n in counts.items() if n >= min_count and item not in specials),
            key=lambda item: (-counts[item], item),
        )
        if max_size is not None:
            kept = kept[: max(0, max_size - len(specials))]
        return cls(kept, specials=specials, unknown=unknown)

    def __len__(self) -> int:
        return len(self.items)

    def __contains__(self, item: str) -> bool:
        return item in self.index

    @property
    def unknown_id(self) -> int | None:
        """The id of unseen items (None without an unknown item)."""
        return None if self.unknown is None else self.index[self.unknown]

    def get(self, item: str) -> int | None:
        """The id of `item`, or None if it is not among the items (unknown or not)."""
        return self.index.get(item)

    def id(self, item: str) -> int:
        """The id of `item`; the unknown id for an unseen item (KeyError without one)."""
        found = self.index.get(item)
        if found is not None:
            return found
        if self.unknown is None:
            raise KeyError(f"{item!r} is not in the vocabulary and it has no unknown item")
        return self.index[self.unknown]

    def to_json(self) -> dict:
        """A JSON-serialisable dict that `from_json` reads back (specials are the first items)."""
        return {"items": self.items, "unknown": self.unknown}

    @classmethod
    def from_json(cls, data: dict) -> "Vocabulary":
        """The inverse of `to_json`; also reads the older ``with_unknown`` flag (id 1 unknown)."""
        vocabulary = cls(data["items"], specials=(), unknown=None)
        if "unknown" in data:
            unknown = data["unknown"]
        else:
            unknown = vocabulary.items[1] if data.get("with_unknown") else None
        if unknown is not None and unknown not in vocabulary.index:
            raise ValueError(f"the unknown item {unknown!r} is not among the vocabulary's items")
        vocabulary.unknown = unknown
        return vocabulary

    def write_lines(self, path: Path) -> None:
        """Write every item, one a line (bilm-tf's vocabulary file)."""
        write_text(path, "".join(f"{item}\n" for item in self.items))
