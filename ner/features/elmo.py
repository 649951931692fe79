"""Where a batch's ELMo layers come from: the on-disk feature cache, or the biLM run live."""

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from ner.bilm.bilm import BiLM
from ner.bilm.source import configured_bilm
from ner.common.paths import data_dir
from ner.features.cache import (
    NonFiniteFeaturesError,
    cache_key,
    check_finite,
    corpus_fingerprint,
    open_or_build,
)

logger = logging.getLogger(__name__)

LayerSource = Callable[[list[int]], torch.Tensor]


class ElmoFeatures:
    """ELMo layers for the sentences of one or more splits.

    elmo_config: the ``elmo`` config node (path: a biLM folder or zip, with its format; or
    options_file, weight_file: path or URL; state: warm | stateless | stateful; batch_size;
    optional ``expected`` shapes); cache: use the feature
    cache (else the frozen biLM runs on every batch); cache_dir: where cache entries live
    (default ``data_dir()/elmo_cache``); verify: check the cache file's sha256 on open.
    """

    def __init__(
        self,
        elmo_config: dict[str, Any],
        *,
        cache: bool = True,
        cache_dir: Path | None = None,
        verify: bool = True,
        device: torch.device | None = None,
        progress: bool = True,
    ) -> None:
        self.location = configured_bilm(elmo_config)
        self.options = self.location.architecture()  # a bad file fails here, named
        self.state = self.location.state
        self.batch_size = int(elmo_config.get("batch_size", 32))
        self.expected = elmo_config.get("expected")
        self.use_cache, self.verify, self.progress = cache, verify, progress
        self.cache_dir = Path(cache_dir) if cache_dir else data_dir() / "elmo_cache"
        self.device = device or torch.device("cpu")
        self._bilm: BiLM | None = None
        self._identity: tuple[str, dict[str, Any]] | None = None
        self.cache_seconds = 0.0

    def bilm(self) -> BiLM:
        """The frozen biLM, loaded on first use."""
        if self._bilm is None:
            self._bilm = self.location.load(expected=self.expected)
            self._bilm.requires_grad_(False).eval().to(self.device)
        return self._bilm

    def _bilm_from_zeros(self) -> BiLM:
        """The biLM with no carried state: in `stateful` mode one biLM builds the entries of all
        splits, and each must start from zeros (as its cache key says), not from where the split
        built before it ended."""
        bilm = self.bilm()
        bilm.reset_states()
        return bilm

    @property
    def output_dim(self) -> int:
        """2P, read from options.json without loading the weights."""
        return self.options.output_dim

    @property
    def num_layers(self) -> int:
        """L + 1 (char-CNN layer + LSTM layers)."""
        return self.options.num_layers

    def source(self, sentences: Sequence[Sequence[str]]) -> LayerSource:
        """A function from sentence indices (into `sentences`) to padded layers (B, L, T, D)."""
        if not self.use_cache:
            return lambda indices: self.live([sentences[i] for i in indices])
        started = time.perf_counter()
        if self._identity is None:
            self._identity = self.location.identity()
        key = cache_key(
            weights_sha256=self._identity[0],
            options=self._identity[1],
            state=self.state,
            batch_size=self.batch_size,
            corpus=corpus_fingerprint(sentences),
        )
        try:
            cache = open_or_build(
                self.cache_dir,
                key,
                sentences,
                self._bilm_from_zeros,
                batch_size=self.batch_size,
                verify=self.verify,
                progress=self.progress,
            )
        except NonFiniteFeaturesError as error:
            raise NonFiniteFeaturesError(f"{self.location.location}: {error}") from None
        self.cache_seconds += time.perf_counter() - started
        return cache.batch

    @torch.no_grad()
    def live(self, sentences: list[Sequence[str]]) -> torch.Tensor:
        """Run the frozen biLM on a batch: (B, L, T, D) float32."""
        layers, _ = self.bilm().embed_batch(sentences, {})
        try:
            check_finite(layers, sentences)
        except NonFiniteFeaturesError as error:
            raise NonFiniteFeaturesError(f"{self.location.location}: {error}") from None
        return layers
