"""Frozen-biLM features computed once per corpus and reused: a memory-mapped layer cache.

A frozen biLM gives the same layers every epoch, so running it per batch wastes most of the
training time. The cache runs it once per (weights sha256, options, state mode, batch size,
corpus fingerprint) and stores every token's layers in one memory-mapped file ``layers.bin`` of
shape (N_tokens, L, D), with ``offsets.npy`` (N_sentences + 1) giving each sentence's rows.
In ``stateful`` mode a build starts the biLM from zeros (`ElmoFeatures` resets it), so an entry's
layers depend on its own corpus alone, never on what the same biLM read before (another split).
Layers are stored as float16 while every value fits (|x| ≤ 65,504); a biLM with larger values
(possible with a user-trained one) is stored as float32 instead, so no value becomes inf.
``meta.json`` is written last and holds the key, the dtype, the shapes and the file's sha256: an
entry without it (interrupted) or whose size or checksum disagree (corrupt), or whose offsets do
not give each sentence of the corpus its length, is rebuilt. Entries
are built in a temporary folder and renamed into place, under a file lock, so readers never see
half a cache and concurrent runs that need the same entry build it once and share it.
"""

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from ner.bilm.bilm import BiLM
from ner.common import keyed_cache
from ner.common.batching import length_batches
from ner.common.downloads import sha256_file
from ner.common.errors import NerError
from ner.common.files import write_json

logger = logging.getLogger(__name__)

FORMAT_VERSION = 3
LAYERS = "layers.bin"
FLOAT16_MAX = float(np.finfo(np.float16).max)


def corpus_fingerprint(sentences: Sequence[Sequence[str]]) -> str:
    """Hex sha256 of the tokens, sentence by sentence (order matters)."""
    digest = hashlib.sha256()
    for sentence in sentences:
        digest.update(json.dumps(list(sentence), ensure_ascii=False).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def cache_key(
    *, weights_sha256: str, options: dict, state: str, batch_size: int, corpus: str
) -> dict[str, Any]:
    """Everything that changes the cached layers; any difference gives another cache entry.

    ``stateful`` keys also say that the build starts from zeros: entries written before builds
    did so hold layers that depend on the split built before them, and are not reused."""
    return {
        "format": FORMAT_VERSION,
        "weights_sha256": weights_sha256,
        "options": options,
        "state": state,
        **({"initial_state": "zeros"} if state == "stateful" else {}),
        "batch_size": batch_size,
        "corpus": corpus,
    }


class CacheError(NerError, OSError):
    """A cache entry is incomplete or corrupt."""


class CacheNotWritableError(NerError, PermissionError):
    """The cache folder has no entry for this corpus yet and cannot be written."""


class NonFiniteFeaturesError(NerError, ValueError):
    """The biLM produced NaN or inf for a sentence (broken weights or options)."""


def check_finite(layers: torch.Tensor, sentences: Sequence[Sequence[str]]) -> None:
    """Raise `NonFiniteFeaturesError` naming the first sentence whose layers (B, L, T, D) hold a
    NaN or inf; padding positions are zeros and never trip it."""
    finite = torch.isfinite(layers).flatten(1).all(dim=1)  # (B,)
    if bool(finite.all()):
        return
    row = int((~finite).nonzero()[0, 0])
    words = " ".join(sentences[row][:8]) + (" ..." if len(sentences[row]) > 8 else "")
    raise NonFiniteFeaturesError(
        f"the biLM produced NaN or inf for the sentence {words!r} ({len(sentences[row])} "
        "tokens): its weights or options.json are broken (a biLM trained to divergence?)"
    )


class ElmoFeatureCache:
    """Read access to one complete cache entry: ``layers(i)`` → (T_i, L, D) memory-mapped view."""

    def __init__(self, directory: Path, *, verify: bool = True) -> None:
        self.directory = Path(directory)
        meta_path = self.directory / "meta.json"
        if not meta_path.is_file():
            raise CacheError(f"{self.directory}: no meta.json (an interrupted build?)")
        try:
            self.meta = json.loads(meta_path.read_text())
            self.offsets = np.load(self.directory / "offsets.npy")
            num_tokens, num_layers, dim = (int(n) for n in self.meta["shape"])
            dtype = np.dtype(self.meta["dtype"])
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise CacheError(f"{self.directory}: unreadable cache files ({error})") from error
        if dtype not in (np.float16, np.float32):
            raise CacheError(f"{meta_path}: unexpected dtype {dtype}")
        layers_path = self.directory / LAYERS
        expected_bytes = num_tokens * num_layers * dim * dtype.itemsize
        actual_bytes = layers_path.stat().st_size if layers_path.is_file() else -1
        if actual_bytes != expected_bytes:
            raise CacheError(
                f"{layers_path}: {actual_bytes} bytes, expected {expected_bytes} for shape "
                f"{(num_tokens, num_layers, dim)} in {dtype}"
            )
        if len(self.offsets) != self.meta["num_sentences"] + 1 or self.offsets[-1] != num_tokens:
            raise CacheError(f"{self.directory}: offsets.npy does not match meta.json")
        if verify and (actual := sha256_file(layers_path)) != self.meta["sha256"]:
            raise CacheError(
                f"{layers_path}: sha256 {actual} differs from the recorded {self.meta['sha256']}"
            )
        self.num_layers, self.dim = num_layers, dim
        self.data = (
            np.memmap(layers_path, dtype=dtype, mode="r", shape=(num_tokens, num_layers, dim))
            if num_tokens
            else np.zeros((0, num_layers, dim), dtype=dtype)
        )

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def layers(self, index: int) -> np.ndarray:
        """Sentence `index`'s layers (T_i, L, D), in the stored dtype, memory-mapped."""
        return self.data[self.offsets[index] : self.offsets[index + 1]]

    def batch(self, indices: Sequence[int]) -> torch.Tensor:
        """Padded float32 layers (B, L, T, D) of the given sentences."""
        lengths = [int(self.offsets[i + 1] - self.offsets[i]) for i in indices]
        out = torch.zeros(len(indices), self.num_layers, max(lengths, default=0), self.dim)
        for row, (index, length) in enumerate(zip(indices, lengths, strict=True)):
            # (T_i, L, D) → (L, T_i, D)
            out[row, :, :length] = torch.from_numpy(np.array(self.layers(index))).transpose(0, 1)
        return out


# Distinct token strings whose char-CNN vectors a build keeps (emptied when it holds more).
MAX_CACHED_TOKENS = 100_000
# Padded tokens per biLM batch (unless a single sentence is longer), so very long sentences
# run in small batches instead of exhausting memory. The biLM itself has no length limit.
MAX_BATCH_TOKENS = 4096


class _LayerFile:
    """The (N_tokens, L, D) layers file being written: float16 until a value does not fit, then
    float32 (the rows written so far are widened exactly: every float16 is a float32)."""

    def __init__(self, path: Path, shape: tuple[int, int, int]) -> None:
        self.path, self.shape, self.dtype = path, shape, np.dtype(np.float16)
        path.touch()
        self.data = np.memmap(path, dtype=self.dtype, mode="w+", shape=shape) if shape[0] else None

    def write(self, start: int, values: np.ndarray) -> None:
        """Store float32 rows (T, L, D) at token `start`."""
        if self.dtype == np.float16 and np.abs(values).max(initial=0.0) > FLOAT16_MAX:
            self._widen()
        self.data[start : start + len(values)] = values

    def _widen(self) -> None:
        logger.info("biLM values exceed the float16 range: caching them as float32")
        narrow = np.array(self.data, dtype=np.float32)
        del self.data
        self.dtype = np.dtype(np.float32)
        self.data = np.memmap(self.path, dtype=self.dtype, mode="w+", shape=self.shape)
        self.data[:] = narrow

    def close(self) -> None:
        if self.data is not None:
            self.data.flush()
            del self.data
            self.data = None


def _write_entry(
    directory: Path,
    key: dict[str, Any],
    sentences: Sequence[Sequence[str]],
    bilm: BiLM,
    batch_size: int,
    progress: bool,
) -> None:
    """Run the biLM over `sentences` (longest first) and write a complete entry in `directory`.

    The biLM reads the token strings (`embed_batch`), each format through its own input path (an
    ELMoForManyLangs model's character and word dictionaries, bilm-tf's UTF-8 byte ids)."""
    lengths = np.array([len(s) for s in sentences], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    num_tokens = int(offsets[-1])
    shape = (num_tokens, bilm.num_layers, bilm.output_dim)
    layers_file = _LayerFile(directory / LAYERS, shape)
    bar = tqdm(total=num_tokens, desc="ELMo features", unit="tok", disable=not progress)
    token_cache: dict[str, torch.Tensor] = {}  # char-CNN vectors by token string
    with torch.inference_mode():
        for chunk in length_batches(
            lengths, batch_size=batch_size, max_tokens=MAX_BATCH_TOKENS, skip_empty=True
        ):
            batch = [sentences[i] for i in chunk]
            if len(token_cache) > MAX_CACHED_TOKENS:
                token_cache.clear()
            layers, _ = bilm.embed_batch(batch, token_cache)  # (B, L, T, D)
            check_finite(layers, batch)
            layers = layers.float().transpose(1, 2).cpu().numpy()  # (B, T, L, D)
            for row, index in enumerate(chunk):
                layers_file.write(int(offsets[index]), layers[row, : lengths[index]])
            bar.update(int(lengths[chunk].sum()))
    bar.close()
    layers_file.close()
    np.save(directory / "offsets.npy", offsets)
    meta = {
        "key": key,
        "dtype": layers_file.dtype.name,
        "shape": list(shape),
        "num_sentences": len(sentences),
        "sha256": sha256_file(directory / LAYERS),
    }
    write_json(directory / "meta.json", meta)


def _open_entry(
    directory: Path, key: dict[str, Any], verify: bool, lengths: np.ndarray
) -> ElmoFeatureCache | None:
    """The complete entry for `key` in `directory`, or None when it is missing or broken, or
    when its offsets do not give each sentence its length in tokens (`lengths`)."""
    if not directory.exists():
        return None
    try:
        cache = ElmoFeatureCache(directory, verify=verify)
    except CacheError as error:
        logger.warning("rebuilding the ELMo feature cache: %s", error)
        return None
    if cache.meta.get("key") != key:
        logger.warning("rebuilding the ELMo feature cache: %s holds another key", directory)
        return None
    if not np.array_equal(np.diff(cache.offsets), lengths):
        logger.warning("rebuilding the ELMo feature cache: %s has other offsets", directory)
        return None
    return cache


def open_or_build(
    root: Path,
    key: dict[str, Any],
    sentences: Sequence[Sequence[str]],
    load_bilm: Callable[[], BiLM],
    *,
    batch_size: int = 32,
    verify: bool = True,
    progress: bool = True,
) -> ElmoFeatureCache:
    """The cache entry for `key`, built first (calling `load_bilm`) when missing or broken.

    Building and repairing happen under a lock on the entry: a concurrent run that needs the
    same entry waits and then reads what the first one built.
    """

    def build(building: Path) -> None:
        _write_entry(building, key, sentences, load_bilm(), batch_size, progress)

    def unwritable(error: PermissionError) -> CacheNotWritableError:
        return CacheNotWritableError(
            f"the ELMo feature cache {root} is not writable, and this corpus has no entry in it "
            f"yet ({error}); make the folder writable or use another (NER_DATA_DIR)"
        )

    lengths = np.array([len(sentence) for sentence in sentences], dtype=np.int64)
    return keyed_cache.open_or_build(
        Path(root) / keyed_cache.key_digest(key),
        lambda directory: _open_entry(directory, key, verify, lengths),
        build,
        lambda directory, _: ElmoFeatureCache(directory, verify=False),
        unwritable=unwritable,
    )
