"""Pretrained word vectors for a tagger's word embedding, split at its training vocabulary.

The trained vocabulary (words of the training data) starts from the table's rows and is
fine-tuned. Every other word of the table goes into a frozen *extension*, kept with the model in
float16, so that a word never seen in training still gets its pretrained vector when the model
tags new text, instead of the unknown-word vector.
"""

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ner.common.errors import InputError, NerError
from ner.common.keyed_cache import key_digest, open_or_build
from ner.common.packed_words import FILES as PACKED_FILES
from ner.common.packed_words import PackedWords
from ner.common.paths import data_dir
from ner.common.verified import checked_once
from ner.common.vocabulary import Vocabulary
from ner.embeddings.glove import VectorTable, load_glove_table

logger = logging.getLogger(__name__)

_CHUNK_ROWS = 65536  # rows copied at a time from a memory-mapped table (bounds the float32 copy)
VECTORS = "vectors.npy"  # a cached extension's (E, dim) float16 vectors, beside its packed words


class ExtensionMismatch(ValueError):
    """A rebuilt extension is not the one recorded (another version of the table?)."""


@dataclass
class PretrainedWords:
    """initial: (V, dim) float32 init of the trained rows (table vectors where found, else
    N(0, σ_table); row 0, padding, zero); found: how many trained words the table has;
    extension: the table's other words (ids after the trained ones), packed: they stay in memory
    for the whole run; vectors: (E, dim) float16 their vectors; found_rows: (V,) bool, which
    trained rows the table has (their count is `found`)."""

    initial: torch.Tensor
    found: int
    extension: PackedWords
    vectors: torch.Tensor
    found_rows: torch.Tensor | None = None


def _table_rows(table: VectorTable) -> dict[str, int]:
    """Word → its first row in `table`, then lowercase forms of table words not yet present."""
    rows: dict[str, int] = {}
    for row, word in enumerate(table.words):
        rows.setdefault(word, row)
    for row, word in enumerate(table.words):
        rows.setdefault(word.lower(), row)
    return rows


def _extension(
    table: VectorTable, rows: dict[str, int], vocabulary: Vocabulary
) -> tuple[PackedWords, torch.Tensor]:
    """Every lowercase table word outside `vocabulary`, with its (E, dim) float16 vectors."""
    extension_words = [w for w, row in rows.items() if w not in vocabulary and w == w.lower()]
    extension_rows = np.array([rows[w] for w in extension_words], dtype=np.int64)
    vectors = np.empty((len(extension_rows), table.matrix.shape[1]), dtype=np.float16)
    for first in range(0, len(extension_rows), _CHUNK_ROWS):
        chunk = extension_rows[first : first + _CHUNK_ROWS]
        vectors[first : first + len(chunk)] = table.matrix[chunk]
    return PackedWords(extension_words), torch.from_numpy(vectors)


def split_table(table: VectorTable, vocabulary: Vocabulary, seed: int) -> PretrainedWords:
    """Initial rows for `vocabulary` (lowercase words; exact match, else the lowercase form of a
    table word) and the extension: every lowercase table word outside `vocabulary`."""
    rows = _table_rows(table)
    trained_rows = [rows.get(word) for word in vocabulary.items]
    found = torch.tensor([row is not None for row in trained_rows])
    dim = table.matrix.shape[1]
    initial = torch.zeros(len(vocabulary), dim)
    if found.any():
        hits = np.array([row for row in trained_rows if row is not None])
        initial[found] = torch.from_numpy(np.asarray(table.matrix[hits], dtype=np.float32))
    std = float(initial[found].std()) if int(found.sum()) > 1 else 1.0
    random_rows = torch.randn(initial.shape, generator=torch.Generator().manual_seed(seed)) * std
    initial = torch.where(found.unsqueeze(1), initial, random_rows)
    initial[0] = 0.0
    extension, vectors = _extension(table, rows, vocabulary)
    return PretrainedWords(initial, int(found.sum()), extension, vectors, found)


def extension_digest(words: PackedWords | Vocabulary, vectors: torch.Tensor) -> str:
    """sha256 of an extension's words (in id order) and float16 vectors: what a compact model
    folder records, so that the rebuilt extension is checked to be the one trained with."""
    digest = hashlib.sha256()
    if isinstance(words, PackedWords):
        digest.update(words.lines())  # the same bytes, gathered without decoding the words
    else:
        for word in words.items:
            digest.update(word.encode("utf-8", "surrogatepass") + b"\n")
    digest.update(vectors.to(torch.float16).contiguous().numpy())
    return digest.hexdigest()


def rebuild_extension(source: str, vocabulary: Vocabulary) -> tuple[PackedWords, torch.Tensor]:
    """The frozen extension a tagger with trained vocabulary `vocabulary` was saved with, rebuilt
    from the named table `source` (fetched on first use): the same words and vectors as
    `split_table` gave at training time."""
    table = load_glove_table(source)
    return _extension(table, _table_rows(table), vocabulary)


def cached_extension(
    source: str, vocabulary: Vocabulary, count: int, sha256: str
) -> tuple[PackedWords, torch.Tensor]:
    """`rebuild_extension`, checked against the `count` and `extension_digest` recorded when the
    model was saved (`ExtensionMismatch` otherwise), and kept in the data folder: a later load
    reads it back instead of rebuilding it from the table (about 2 s). What is read back is
    checked against the same digest, once per process while its files stay unchanged: files
    edited or damaged in the data folder are rebuilt, never used. Without a writable data folder
    it is rebuilt every time."""

    def rebuilt() -> tuple[PackedWords, torch.Tensor]:
        words, vectors = rebuild_extension(source, vocabulary)
        if len(words) != count or extension_digest(words, vectors) != sha256:
            raise ExtensionMismatch(f"the words rebuilt from {source} are not the recorded ones")
        return words, vectors

    def build(staging: Path) -> None:
        if (folder / VECTORS).exists():
            logger.warning("rebuilding %s: its words or vectors were changed or damaged", folder)
        words, vectors = rebuilt()
        words.save(staging)
        np.save(staging / VECTORS, vectors.numpy(), allow_pickle=False)

    def opened(folder: Path) -> tuple[PackedWords, torch.Tensor] | None:
        files = [folder / name for name in (*PACKED_FILES.values(), VECTORS)]
        try:
            words = PackedWords.load(folder)
            vectors = np.load(folder / VECTORS, allow_pickle=False)
            if len(words) != count or vectors.shape[0] != count or vectors.dtype != np.float16:
                return None
            if not checked_once(
                files, sha256, lambda: extension_digest(words, torch.from_numpy(vectors)) == sha256
            ):
                return None
        except (OSError, ValueError):
            return None  # missing or broken: built again
        return words, torch.from_numpy(vectors)

    key = key_digest({"source": source, "count": count, "sha256": sha256})
    folder = data_dir() / "pretrained_words" / key
    try:
        entry = open_or_build(folder, opened, build, lambda built, _: opened(built))
    except NerError:
        raise  # the table could not be fetched or read: rebuilding again would not help
    except OSError:  # a read-only or full data folder: the rows are not kept
        entry = None
    return entry if entry is not None else rebuilt()


def load_pretrained_words(
    source: str,
    vocabulary: Vocabulary,
    *,
    dim: int,
    seed: int,
    member: str | None = None,
    sha256: str | None = None,
) -> PretrainedWords:
    """`split_table` of the vectors file `source` (see `ner.embeddings.glove.load_glove_table`),
    checking that its vectors have `dim` dimensions (``embeddings.glove.dim``)."""
    table = load_glove_table(source, member=member, sha256=sha256)
    if table.matrix.shape[1] != dim:
        raise InputError(
            f"{source} has {table.matrix.shape[1]}-d vectors but embeddings.glove.dim is {dim}; "
            f"set embeddings.glove.dim={table.matrix.shape[1]}"
        )
    words = split_table(table, vocabulary, seed)
    logger.info(
        "GloVe %s: %d/%d training vocabulary words found; %d more words kept for new text",
        source,
        words.found,
        len(vocabulary),
        len(words.extension),
    )
    return words
