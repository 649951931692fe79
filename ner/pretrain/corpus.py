"""The pretraining corpus: tokenized sentences from named sources or text files, split, encoded.

Text files have one tokenized sentence per line (tokens separated by whitespace, bilm-tf's format).
Named sources (`ner.pretrain.sources.SOURCES`) are tokenized once and cached as such a file under
`data_dir()/pretrain/corpora/`. A fixed ~`heldout_per_mille`/1000 of the sentences, chosen by a hash
of the sentence text (so duplicates never straddle the split), is held out for perplexity.
"""

from __future__ import annotations

import logging
import zlib
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ner.common.errors import NerError
from ner.common.files import atomic_write
from ner.common.paths import data_dir
from ner.data.lines import decode_line
from ner.pretrain.vocabulary import SPECIAL_TOKENS

logger = logging.getLogger(__name__)


class CorpusError(NerError, ValueError):
    """Bad pretraining input; the message names the file (and line) at fault."""


def cache_path(name: str) -> Path:
    """Where the tokenized text of a named source is cached (`corpora-clean`: caches written
    before evaluation sentences were removed are left where they were, never read)."""
    return data_dir() / "pretrain" / "corpora-clean" / f"{name}.txt"


def prepare_source(name: str, max_sentence_tokens: int) -> Path:
    """Tokenize a named source once into `cache_path(name)`, leaving out every sentence equal to
    an evaluation sentence (`sources.evaluation_sentences`; counted in the log). Sentences over the
    limit are cut into consecutive pieces of `max_sentence_tokens` (counted too)."""
    from ner.pretrain.sources import SOURCES, evaluation_sentences, normalized

    path = cache_path(name)
    if path.exists():
        return path
    excluded = evaluation_sentences()
    sentences = tokens = cut = removed = 0
    with atomic_write(path, "w", encoding="utf-8") as out:
        for sentence in SOURCES[name]():
            if normalized(sentence) in excluded:
                removed += 1
                continue
            # Whitespace inside a token (e.g. U+2028) would break the one-line format: split on it.
            pieces = " ".join(sentence).split()
            cut += len(pieces) > max_sentence_tokens
            for start in range(0, len(pieces), max_sentence_tokens):
                out.write(" ".join(pieces[start : start + max_sentence_tokens]) + "\n")
                sentences += 1
            tokens += len(pieces)
        if not sentences:  # raised inside: nothing is written
            raise CorpusError(
                f"source {name!r} produced no sentences (empty or unreadable download?)"
            )
    logger.info(
        "prepared %s: %d sentences, %d tokens (%d long sentences cut, %d equal to an evaluation "
        "sentence left out) -> %s",
        *(name, sentences, tokens, cut, removed, path),
    )
    return path


def read_sentences(path: Path, max_sentence_tokens: int) -> Iterator[list[str]]:
    """Sentences of a text file, one per non-blank line.

    Raises `CorpusError` naming the file and line for text that is not UTF-8 or binary (NUL
    bytes) and for a line longer than `max_sentence_tokens` (usually a file that is not split
    into sentences), and for a file without any sentence.
    """
    found = False
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = decode_line(raw, number, "utf-8")
            except UnicodeDecodeError as error:
                raise CorpusError(
                    f"{path}:{number}: not UTF-8 ({error.reason} at byte {error.start}); "
                    "convert the file, e.g. `iconv -f latin1 -t utf-8`"
                ) from None
            if "\x00" in line:
                raise CorpusError(f"{path}:{number}: holds NUL bytes (a binary file, not text)")
            tokens = line.split()
            if len(tokens) > max_sentence_tokens:
                raise CorpusError(
                    f"{path}:{number}: {len(tokens)} tokens on one line (limit "
                    f"corpus.max_sentence_tokens={max_sentence_tokens}); the file should hold one "
                    "sentence per line: split it, or raise the limit"
                )
            if tokens:
                found = True
                yield tokens
    if not found:
        raise CorpusError(f"{path}: no sentences (the file is empty or blank)")


def is_heldout(tokens: Sequence[str], per_mille: int) -> bool:
    """The fixed held-out choice: a CRC-32 of the sentence text modulo 1000."""
    return zlib.crc32(" ".join(tokens).encode("utf-8")) % 1000 < per_mille


@dataclass
class Split:
    """Sentences as type ids, concatenated: sentence i is `ids[offsets[i]:offsets[i + 1]]`."""

    ids: np.ndarray  # (n_tokens,) int64
    offsets: np.ndarray  # (n_sentences + 1,) int64

    @property
    def num_sentences(self) -> int:
        return len(self.offsets) - 1

    @property
    def num_tokens(self) -> int:
        return len(self.ids)


@dataclass
class EncodedCorpus:
    """Train and held-out sentences over one type list, ordered as a bilm-tf vocabulary:
    `<S>`, `</S>`, `<UNK>`, then by descending training frequency (ties by string), then the
    types seen only in held-out text. The first `vocab_size` types are the softmax vocabulary."""

    types: list[str]
    train_counts: np.ndarray  # (n_types,) int64
    train: Split
    heldout: Split
    source_stats: dict[str, dict[str, int]] = field(default_factory=dict)


def resolve(source: str, max_sentence_tokens: int) -> Path:
    """A named source (prepared and cached) or a path to a text file."""
    from ner.pretrain.sources import SOURCES

    if source in SOURCES:
        return prepare_source(source, max_sentence_tokens)
    path = Path(source).expanduser()
    if not path.is_file():
        raise CorpusError(f"{source!r} is neither a named source {sorted(SOURCES)} nor a file")
    return path


def encode_corpus(
    sources: Iterable[str], heldout_per_mille: int, max_sentence_tokens: int
) -> EncodedCorpus:
    """Read every source, split train/held-out, and encode tokens as frequency-sorted type ids."""
    index: dict[str, int] = {token: i for i, token in enumerate(SPECIAL_TOKENS)}
    buffers = {"train": (array("q"), array("q", [0])), "heldout": (array("q"), array("q", [0]))}
    stats: dict[str, dict[str, int]] = {}
    for source in sources:
        counts = stats.setdefault(source, dict.fromkeys(buffers, 0))
        for tokens in read_sentences(resolve(source, max_sentence_tokens), max_sentence_tokens):
            split = "heldout" if is_heldout(tokens, heldout_per_mille) else "train"
            ids, offsets = buffers[split]
            ids.extend(index.setdefault(token, len(index)) for token in tokens)
            offsets.append(len(ids))
            counts[split] += len(tokens)
    first_seen = list(index)
    raw = {
        name: Split(np.asarray(ids), np.asarray(offsets))
        for name, (ids, offsets) in buffers.items()
    }
    if raw["train"].num_sentences == 0:
        raise CorpusError(f"no training sentences in {list(sources)}")
    counts = np.bincount(raw["train"].ids, minlength=len(first_seen))
    specials = len(SPECIAL_TOKENS)
    order = sorted(range(specials, len(first_seen)), key=lambda i: (-counts[i], first_seen[i]))
    order = [*range(specials), *order]
    remap = np.empty(len(order), dtype=np.int64)
    remap[order] = np.arange(len(order))
    return EncodedCorpus(
        types=[first_seen[i] for i in order],
        train_counts=counts[order],
        train=Split(remap[raw["train"].ids], raw["train"].offsets),
        heldout=Split(remap[raw["heldout"].ids], raw["heldout"].offsets),
        source_stats=stats,
    )
