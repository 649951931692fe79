"""Frozen-biLM features computed once per corpus and reused: an fp16 memory-mapped layer cache.

A frozen biLM gives the same layers every epoch, so running it per batch wastes most of the
training time. The cache runs it once per (weights sha256, options, state mode, batch size,
corpus fingerprint) and stores every token's layers as float16 in one memory-mapped file
``layers.f16`` of shape (N_tokens, L, D), with ``offsets.npy`` (N_sentences + 1) giving each
sentence's rows. ``meta.json`` is written last and holds the key, the shapes and the file's
sha256: a cache without it (interrupted) or whose size or checksum disagree (corrupt) is rebuilt.
Entries are built in a temporary folder and renamed into place, so readers never see half a cache.
"""

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from ner.bilm.char_ids import batch_to_ids
from ner.common.downloads import sha256_file

logger = logging.getLogger(__name__)

FORMAT_VERSION = 2


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
    """Everything that changes the cached layers; any difference gives another cache entry."""
    return {
        "format": FORMAT_VERSION,
        "weights_sha256": weights_sha256,
        "options": options,
        "state": state,
        "batch_size": batch_size,
        "corpus": corpus,
    }


def key_digest(key: dict[str, Any]) -> str:
    """A short, stable name for a cache key."""
    canonical = json.dumps(key, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:24]


class CacheError(OSError):
    """A cache entry is incomplete or corrupt."""


class ElmoFeatureCache:
    """Read access to one complete cache entry: ``layers(i)`` → (T_i, L, D) float16 view."""

    def __init__(self, directory: Path, *, verify: bool = True) -> None:
        self.directory = Path(directory)
        meta_path = self.directory / "meta.json"
        if not meta_path.is_file():
            raise CacheError(f"{self.directory}: no meta.json (an interrupted build?)")
        try:
            self.meta = json.loads(meta_path.read_text())
            self.offsets = np.load(self.directory / "offsets.npy")
        except (OSError, ValueError) as error:
            raise CacheError(f"{self.directory}: unreadable cache files ({error})") from error
        layers_path = self.directory / "layers.f16"
        num_tokens, num_layers, dim = self.meta["shape"]
        expected_bytes = num_tokens * num_layers * dim * 2
        actual_bytes = layers_path.stat().st_size if layers_path.is_file() else -1
        if actual_bytes != expected_bytes:
            raise CacheError(
                f"{layers_path}: {actual_bytes} bytes, expected {expected_bytes} for shape "
                f"{tuple(self.meta['shape'])}"
            )
        if len(self.offsets) != self.meta["num_sentences"] + 1 or self.offsets[-1] != num_tokens:
            raise CacheError(f"{self.directory}: offsets.npy does not match meta.json")
        if verify and (actual := sha256_file(layers_path)) != self.meta["sha256"]:
            raise CacheError(
                f"{layers_path}: sha256 {actual} differs from the recorded {self.meta['sha256']}"
            )
        self.num_layers, self.dim = num_layers, dim
        self.data = (
            np.memmap(layers_path, dtype=np.float16, mode="r", shape=(num_tokens, num_layers, dim))
            if num_tokens
            else np.zeros((0, num_layers, dim), dtype=np.float16)
        )

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def layers(self, index: int) -> np.ndarray:
        """Sentence `index`'s layers (T_i, L, D), float16, memory-mapped."""
        return self.data[self.offsets[index] : self.offsets[index + 1]]

    def batch(self, indices: Sequence[int]) -> torch.Tensor:
        """Padded float32 layers (B, L, T, D) of the given sentences."""
        lengths = [int(self.offsets[i + 1] - self.offsets[i]) for i in indices]
        out = torch.zeros(len(indices), self.num_layers, max(lengths, default=0), self.dim)
        for row, (index, length) in enumerate(zip(indices, lengths, strict=True)):
            # (T_i, L, D) → (L, T_i, D)
            out[row, :, :length] = torch.from_numpy(np.array(self.layers(index))).transpose(0, 1)
        return out


MAX_BATCH_TOKENS = 4096


def _chunks(order: list[int], lengths: np.ndarray, batch_size: int) -> list[list[int]]:
    """Consecutive groups of at most `batch_size` sentences and (unless a single sentence is
    longer) at most `MAX_BATCH_TOKENS` padded tokens, so very long sentences run in small
    batches instead of exhausting memory. The biLM itself has no length limit."""
    chunks: list[list[int]] = []
    for index in order:
        current = chunks[-1] if chunks else None
        longest = lengths[current[0]] if current else 0
        if (
            current
            and len(current) < batch_size
            and longest * (len(current) + 1) <= MAX_BATCH_TOKENS
        ):
            current.append(index)
        else:
            chunks.append([index])
    return chunks


def _write_entry(
    directory: Path,
    key: dict[str, Any],
    sentences: Sequence[Sequence[str]],
    bilm: torch.nn.Module,
    batch_size: int,
    progress: bool,
) -> None:
    """Run the biLM over `sentences` (longest first) and write a complete entry in `directory`."""
    lengths = np.array([len(s) for s in sentences], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    num_tokens = int(offsets[-1])
    shape = (num_tokens, bilm.num_layers, bilm.output_dim)
    layers_path = directory / "layers.f16"
    layers_path.touch()
    data = np.memmap(layers_path, dtype=np.float16, mode="w+", shape=shape) if num_tokens else None
    order = [i for i in np.argsort(-lengths, kind="stable").tolist() if lengths[i] > 0]
    bar = tqdm(total=num_tokens, desc="ELMo features", unit="tok", disable=not progress)
    with torch.inference_mode():
        for chunk in _chunks(order, lengths, batch_size):
            # layers: (B, L, T, D)
            layers, _ = bilm(batch_to_ids([sentences[i] for i in chunk]))
            layers = layers.to(torch.float16).transpose(1, 2).cpu().numpy()
            for row, index in enumerate(chunk):
                data[offsets[index] : offsets[index + 1]] = layers[row, : lengths[index]]
            bar.update(int(lengths[chunk].sum()))
    bar.close()
    if data is not None:
        data.flush()
        del data
    np.save(directory / "offsets.npy", offsets)
    meta = {
        "key": key,
        "shape": list(shape),
        "num_sentences": len(sentences),
        "sha256": sha256_file(layers_path),
    }
    meta_path = directory / "meta.json"
    meta_path.write_text(json.dumps(meta, indent=1))
    with open(meta_path, "rb") as handle:
        os.fsync(handle.fileno())


def _remove_abandoned_builds(directory: Path) -> None:
    """Delete ``<entry>.tmp-<pid>`` folders left by killed builds (their process is gone)."""
    for leftover in directory.parent.glob(f"{directory.name}.tmp-*"):
        pid = leftover.name.rsplit("-", 1)[-1]
        try:
            os.kill(int(pid), 0)
            alive = int(pid) != os.getpid()
        except (ValueError, ProcessLookupError):
            alive = False
        except PermissionError:
            alive = True
        if not alive:
            shutil.rmtree(leftover, ignore_errors=True)


def open_or_build(
    root: Path,
    key: dict[str, Any],
    sentences: Sequence[Sequence[str]],
    load_bilm: Callable[[], torch.nn.Module],
    *,
    batch_size: int = 32,
    verify: bool = True,
    progress: bool = True,
) -> ElmoFeatureCache:
    """The cache entry for `key`, built first (calling `load_bilm`) when missing or broken."""
    directory = Path(root) / key_digest(key)
    if directory.exists():
        try:
            cache = ElmoFeatureCache(directory, verify=verify)
            if cache.meta["key"] == key:
                return cache
            raise CacheError(f"{directory}: its key differs from the requested one")
        except (CacheError, KeyError, TypeError) as error:
            logger.warning("rebuilding the ELMo feature cache: %s", error)
            shutil.rmtree(directory)
    _remove_abandoned_builds(directory)
    building = directory.with_name(f"{directory.name}.tmp-{os.getpid()}")
    building.mkdir(parents=True)
    try:
        _write_entry(building, key, sentences, load_bilm(), batch_size, progress)
        try:
            building.rename(directory)
        except OSError:
            if not (directory / "meta.json").is_file():
                raise
            # Another process finished the same entry first; use theirs.
            shutil.rmtree(building)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return ElmoFeatureCache(directory, verify=False)
