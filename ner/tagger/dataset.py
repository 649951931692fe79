"""From a corpus (`load_corpus` DatasetDict) to encoded examples and length-bucketed batches.

Tags are read in the corpus's own scheme, converted to the model's scheme (BIOES by default, as
AllenNLP's BIOUL) for training, and converted back for predictions files and scores.
"""

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ner.common.errors import InputError
from ner.common.packed_words import PackedWords
from ner.common.vocabulary import Vocabulary
from ner.data.labels import TOKENS
from ner.data.tag_schemes import SCHEMES, TagSchemeError, convert_tags, split_tag
from ner.tagger.batch import TaggerBatch

if TYPE_CHECKING:  # keep `datasets` (≈1 s to import) out of model loading and ner-predict
    from datasets import DatasetDict

logger = logging.getLogger(__name__)
SPLITS = ("train", "validation", "test")
# The vocabularies' name in model folders and checkpoints written before they were called so.
LEGACY_VOCABULARIES = "encoder"


@dataclass
class Split:
    """One split's sentences: tokens and gold tags in the corpus's scheme."""

    name: str
    tokens: list[list[str]]
    tags: list[list[str]]

    @property
    def num_tokens(self) -> int:
        """Tokens in the split."""
        return sum(len(sentence) for sentence in self.tokens)


def read_splits(corpus: "DatasetDict", max_sentences: int | None = None) -> dict[str, Split]:
    """The train/validation/test splits as lists, each capped at `max_sentences`."""
    missing = [name for name in SPLITS if name not in corpus]
    if missing:
        raise InputError(f"the corpus has no {', '.join(missing)} split (it has {list(corpus)})")
    splits = {}
    for name in SPLITS:
        dataset = corpus[name]
        if max_sentences is not None:
            dataset = dataset.select(range(min(max_sentences, len(dataset))))
        names = dataset.features["tags"].feature.names
        splits[name] = Split(
            name,
            [list(tokens) for tokens in dataset["tokens"]],
            [[names[i] for i in tags] for tags in dataset["tags"]],
        )
        if not splits[name].tokens:
            raise InputError(f"the {name} split is empty")
    return splits


def entity_types(tags: Sequence[Sequence[str]]) -> set[str]:
    """The chunk types (PER, LOC, …) that occur in tag sequences."""
    return {split_tag(tag)[1] for sentence in tags for tag in sentence if tag != "O"}


def check_label_sets(splits: dict[str, Split]) -> None:
    """Raise if dev or test has chunk types that train never shows (the model could not predict
    them and the scores would silently count them as misses)."""
    known = entity_types(splits["train"].tags)
    for name in ("validation", "test"):
        unseen = entity_types(splits[name].tags) - known
        if unseen:
            raise InputError(
                f"the {name} split has tag types that the train split lacks: {sorted(unseen)} "
                f"(train has {sorted(known)}); fix the corpus or drop those tags"
            )


def token_labels(splits: dict[str, Split]) -> list[str]:
    """Per-token labels: every label of every split, sorted, so that a label only dev or test
    shows is scored as the error it is; such labels are logged (the model never learns them)."""
    labels = {tag for split in splits.values() for tags in split.tags for tag in tags}
    known = {tag for tags in splits["train"].tags for tag in tags}
    if labels - known:
        logger.warning(
            "labels in dev/test but never in train (the model will not predict them): %s",
            ", ".join(sorted(labels - known)),
        )
    return sorted(labels)


def tag_list(types: set[str], scheme: str) -> list[str]:
    """All tags of `scheme` for `types`: ``O`` first, then each type's prefixes."""
    prefixes = "BIES" if scheme == "bioes" else "BI"
    return ["O"] + [f"{prefix}-{kind}" for kind in sorted(types) for prefix in prefixes]


def convert_split(
    tags: list[list[str]], source: str, target: str, split: str, *, lenient: bool = False
) -> list[list[str]]:
    """Convert every sentence's tags, naming the split and sentence of an invalid one; `lenient`
    (for predictions) repairs invalid sequences instead. Per-token labels (``tokens`` to
    ``tokens``) are copied as they are."""
    if source == target == TOKENS:
        return [list(sentence) for sentence in tags]
    if source not in SCHEMES or target not in SCHEMES:
        raise ValueError(f"tag schemes must be among {SCHEMES}, got {source!r} → {target!r}")
    converted = []
    for index, sentence in enumerate(tags):
        try:
            converted.append(convert_tags(sentence, source, target, lenient=lenient))
        except TagSchemeError as error:
            raise TagSchemeError(f"{split} sentence {index}: {error}", error.position) from None
    return converted


@dataclass(slots=True)
class Example:
    """One encoded sentence: word ids (T,), char ids (T, C) with each token's characters
    zero-padded to the sentence's longest token (C ≥ 1), tag ids (T,) or None.

    The chars are one small array rather than a list per token, and there is no instance dict:
    a training run holds every sentence of every split, and this keeps them at about a third of
    the memory."""

    index: int
    words: list[int]
    chars: np.ndarray  # (T, C) int32
    tags: list[int] | None


class Vocabularies:
    """Turns tokens and tags into ids: lowercased words, raw characters (truncated), tags.

    `pretrained`: words outside the trained vocabulary that have a frozen pretrained vector
    (`ner.embeddings.pretrained`); they get ids after the trained words, other unseen words the
    unknown id. It is saved with the model, not in `to_json` (it holds ~400k words).
    """

    def __init__(
        self,
        words: Vocabulary,
        chars: Vocabulary,
        tags: list[str],
        max_chars: int = 50,
        pretrained: Vocabulary | PackedWords | None = None,
    ) -> None:
        self.words, self.chars, self.tags, self.max_chars = words, chars, tags, max_chars
        self.pretrained = pretrained
        self.tag_index = {tag: i for i, tag in enumerate(tags)}

    @classmethod
    def build(cls, sentences: Sequence[Sequence[str]], tags: list[str], max_chars: int = 50):
        """Vocabularies from `sentences`: the training split's (the default), or every split's
        for the transductive setting of AllenNLP's vocabulary (``embeddings.vocabulary=all``)."""
        word_counts = Counter(token.lower() for sentence in sentences for token in sentence)
        char_counts = Counter(c for sentence in sentences for token in sentence for c in token)
        return cls(
            Vocabulary.from_counts(word_counts),
            Vocabulary.from_counts(char_counts),
            tags,
            max_chars,
        )

    def encode(self, index: int, tokens: Sequence[str], tags: Sequence[str] | None) -> Example:
        """The ids of one sentence; `tags` must be in the model's scheme."""
        truncated = [token[: self.max_chars] for token in tokens]
        chars = np.zeros((len(tokens), max(map(len, truncated), default=1) or 1), dtype=np.int32)
        for position, token in enumerate(truncated):
            chars[position, : len(token)] = [self.chars.id(c) for c in token]
        return Example(
            index=index,
            words=[self.word_id(token) for token in tokens],
            chars=chars,
            tags=None if tags is None else [self.tag_index[tag] for tag in tags],
        )

    def word_id(self, token: str) -> int:
        """The trained id of the lowercased token, else its pretrained id, else unknown."""
        word = token.lower()
        found = self.words.index.get(word)
        if found is None and self.pretrained is not None:
            extension = self.pretrained.get(word)
            if extension is not None:
                return len(self.words) + extension
        return self.words.id(word) if found is None else found

    def to_json(self) -> dict:
        """Plain JSON: the vocabularies, tags and the char truncation length."""
        return {
            "words": self.words.to_json(),
            "chars": self.chars.to_json(),
            "tags": self.tags,
            "max_chars": self.max_chars,
        }

    @classmethod
    def from_json(cls, data: dict) -> "Vocabularies":
        """The inverse of `to_json`."""
        return cls(
            Vocabulary.from_json(data["words"]),
            Vocabulary.from_json(data["chars"]),
            list(data["tags"]),
            int(data["max_chars"]),
        )

    @classmethod
    def from_saved(cls, saved: Mapping[str, Any], key: str) -> "Vocabularies":
        """The vocabularies stored as `key` in a model folder's vocabularies or a checkpoint,
        or as `LEGACY_VOCABULARIES` in those written by earlier versions."""
        return cls.from_json(saved[key] if key in saved else saved[LEGACY_VOCABULARIES])


def collate(
    examples: Sequence[Example], elmo: Callable[[list[int]], torch.Tensor] | None = None
) -> TaggerBatch:
    """Pad examples into a `TaggerBatch`; `elmo(indices)` supplies (B, L, T, D) layers."""
    length = max(len(e.words) for e in examples)
    max_chars = max(e.chars.shape[1] for e in examples)
    words = np.zeros((len(examples), length), dtype=np.int64)
    chars = np.zeros((len(examples), length, max_chars), dtype=np.int64)
    mask = np.zeros((len(examples), length), dtype=bool)
    has_tags = all(e.tags is not None for e in examples)
    tags = np.zeros((len(examples), length), dtype=np.int64) if has_tags else None
    for row, example in enumerate(examples):
        n = len(example.words)
        words[row, :n] = example.words
        mask[row, :n] = True
        chars[row, :n, : example.chars.shape[1]] = example.chars
        if tags is not None:
            tags[row, :n] = example.tags
    layers = elmo([e.index for e in examples]) if elmo is not None else None
    return TaggerBatch(
        mask=torch.from_numpy(mask),
        words=torch.from_numpy(words),
        chars=torch.from_numpy(chars),
        elmo=layers,
        tags=None if tags is None else torch.from_numpy(tags),
    )
