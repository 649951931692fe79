"""The memory-mapped ELMo feature cache with the fixture biLM: reuse, keys, corruption."""

import json
import socket

import numpy as np
import pytest
import torch
from fixture_files import FIXTURE

from ner.bilm.bilm import BiLM
from ner.bilm.char_ids import batch_to_ids
from ner.common.batching import length_batches
from ner.common.downloads import sha256_file
from ner.common.keyed_cache import key_digest
from ner.features.cache import (
    MAX_BATCH_TOKENS,
    NonFiniteFeaturesError,
    cache_key,
    corpus_fingerprint,
    open_or_build,
)
from ner.features.elmo import ElmoFeatures

SENTENCES = [
    ["The", "cat", "sat", "."],
    [],
    ["Peter", "Blackburn", "visited", "Brussels", "on", "Monday", "."],
    ["EU"],
]


@pytest.fixture(scope="module")
def bilm() -> BiLM:
    model = BiLM.from_files(FIXTURE / "options.json", FIXTURE / "lm_weights.hdf5", state="warm")
    return model.eval().requires_grad_(False)


def key_for(sentences, state="warm") -> dict:
    return cache_key(
        weights_sha256=sha256_file(FIXTURE / "lm_weights.hdf5"),
        options=json.loads((FIXTURE / "options.json").read_text()),
        state=state,
        batch_size=2,
        corpus=corpus_fingerprint(sentences),
    )


class Loader:
    """Counts how often the cache asks for the biLM."""

    def __init__(self, bilm: BiLM) -> None:
        self.bilm, self.calls = bilm, 0

    def __call__(self) -> BiLM:
        self.calls += 1
        return self.bilm


def test_cache_matches_the_live_bilm_and_is_reused(tmp_path, bilm):
    loader = Loader(bilm)
    key = key_for(SENTENCES)
    cache = open_or_build(tmp_path, key, SENTENCES, loader, batch_size=2, progress=False)
    assert loader.calls == 1 and len(cache) == 4
    assert cache.layers(1).shape == (0, 3, 32)
    with torch.no_grad():
        live, _ = bilm(batch_to_ids([SENTENCES[2]]))
    cached = cache.batch([2, 0])
    assert cached.shape == (2, 3, 7, 32)
    torch.testing.assert_close(cached[0], live[0], atol=2e-3, rtol=1e-3)
    assert torch.all(cached[1, :, 4:] == 0)
    again = open_or_build(tmp_path, key, SENTENCES, loader, batch_size=2, progress=False)
    assert loader.calls == 1
    assert torch.equal(again.batch([0, 2, 3]), cache.batch([0, 2, 3]))


def test_any_key_change_gives_a_new_entry(tmp_path, bilm):
    loader = Loader(bilm)
    open_or_build(tmp_path, key_for(SENTENCES), SENTENCES, loader, batch_size=2, progress=False)
    other_corpus = SENTENCES[:3]
    open_or_build(
        tmp_path, key_for(other_corpus), other_corpus, loader, batch_size=2, progress=False
    )
    stateless = key_for(SENTENCES, state="stateless")
    assert key_digest(stateless) != key_digest(key_for(SENTENCES))
    bilm.state = "stateless"
    try:
        open_or_build(tmp_path, stateless, SENTENCES, loader, batch_size=2, progress=False)
    finally:
        bilm.state = "warm"
    assert loader.calls == 3
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 3


@pytest.mark.parametrize("damage", ["flip", "truncate", "no_meta", "bad_meta", "offsets"])
def test_corrupt_or_interrupted_cache_is_rebuilt(tmp_path, bilm, damage, caplog):
    loader = Loader(bilm)
    key = key_for(SENTENCES)
    cache = open_or_build(tmp_path, key, SENTENCES, loader, batch_size=2, progress=False)
    reference = cache.batch([0, 2, 3]).clone()
    del cache
    entry = tmp_path / key_digest(key)
    layers = entry / "layers.bin"
    if damage == "flip":
        data = bytearray(layers.read_bytes())
        data[100] ^= 0xFF
        layers.write_bytes(bytes(data))
    elif damage == "truncate":
        layers.write_bytes(layers.read_bytes()[:-64])
    elif damage == "offsets":  # sentences given other rows, the total kept
        np.save(entry / "offsets.npy", np.array([0, 1, 1, 11, 12]))
    elif damage == "no_meta":
        (entry / "meta.json").unlink()
    else:
        (entry / "meta.json").write_text("{not json")
    rebuilt = open_or_build(tmp_path, key, SENTENCES, loader, batch_size=2, progress=False)
    assert loader.calls == 2
    assert "rebuilding the ELMo feature cache" in caplog.text
    assert torch.equal(rebuilt.batch([0, 2, 3]), reference)


def test_features_with_and_without_cache_agree(tmp_path):
    config = {
        "options_file": str(FIXTURE / "options.json"),
        "weight_file": str(FIXTURE / "lm_weights.hdf5"),
        "state": "warm",
        "batch_size": 2,
    }
    cached = ElmoFeatures(config, cache=True, cache_dir=tmp_path, progress=False)
    live = ElmoFeatures(config, cache=False, progress=False)
    assert (cached.output_dim, cached.num_layers) == (32, 3)
    sentences = [s for s in SENTENCES if s]
    from_cache = cached.source(sentences)([0, 1])
    from_bilm = live.source(sentences)([0, 1])
    torch.testing.assert_close(from_cache, from_bilm, atol=2e-3, rtol=1e-3)


def test_leftovers_of_killed_builds_are_removed(tmp_path, bilm):
    key = key_for(SENTENCES)
    host = socket.gethostname().replace("-", "_")
    leftover = tmp_path / f".{key_digest(key)}.tmp-{host}-999999999"  # no such process
    leftover.mkdir()
    (leftover / "layers.bin").write_bytes(b"partial")
    open_or_build(tmp_path, key, SENTENCES, Loader(bilm), batch_size=2, progress=False)
    assert not leftover.exists()


def test_very_long_sentences_run_in_small_batches(tmp_path, bilm):
    lengths = np.array([5000, 3000, 10, 10, 10])
    batches = length_batches(lengths, batch_size=32, max_tokens=MAX_BATCH_TOKENS)
    assert batches == [[0], [1], [2, 3, 4]]
    sentences = [["word"] * 5000, ["Paris", "."]]
    cache = open_or_build(
        tmp_path, key_for(sentences), sentences, Loader(bilm), batch_size=2, progress=False
    )
    assert cache.layers(0).shape == (5000, 3, 32)
    assert np.isfinite(np.asarray(cache.layers(0), dtype=np.float32)).all()


class Scaled(torch.nn.Module):
    """The fixture biLM with every layer multiplied by `factor` (a biLM with large values)."""

    def __init__(self, bilm: BiLM, factor: float) -> None:
        super().__init__()
        self.bilm, self.factor = bilm, factor
        self.num_layers, self.output_dim = bilm.num_layers, bilm.output_dim

    def forward(self, ids):
        layers, mask = self.bilm(ids)
        return layers * self.factor, mask

    def embed_batch(self, sentences, token_cache):
        """What the cache calls: the biLM on token strings."""
        layers, mask = self.bilm.embed_batch(sentences, token_cache)
        return layers * self.factor, mask


def test_values_beyond_float16_are_cached_exactly_as_float32(tmp_path, bilm):
    big = Scaled(bilm, 1e6)  # the fixture's layers reach ~1, so ~1e6 here: inf in float16
    with torch.no_grad():
        live, _ = big(batch_to_ids([SENTENCES[2]]))
    assert live.abs().max() > 65504
    cache = open_or_build(
        tmp_path, key_for(SENTENCES), SENTENCES, lambda: big, batch_size=2, progress=False
    )
    assert cache.meta["dtype"] == "float32"
    cached = cache.batch([2])
    assert torch.isfinite(cached).all()
    torch.testing.assert_close(cached[0], live[0], rtol=1e-3, atol=2e-3 * 1e6)


def test_small_values_stay_float16(tmp_path, bilm):
    cache = open_or_build(
        tmp_path, key_for(SENTENCES), SENTENCES, lambda: bilm, batch_size=2, progress=False
    )
    assert cache.meta["dtype"] == "float16"


def test_a_nan_from_the_bilm_is_refused_naming_the_sentence(tmp_path, bilm):
    broken = Scaled(bilm, float("nan"))
    with pytest.raises(NonFiniteFeaturesError, match=r"'Peter Blackburn visited Brussels"):
        open_or_build(
            tmp_path, key_for(SENTENCES), SENTENCES, lambda: broken, batch_size=1, progress=False
        )
    assert not any(tmp_path.iterdir()) or all(p.name.endswith(".lock") for p in tmp_path.iterdir())


def test_stateful_features_of_a_split_do_not_depend_on_the_splits_built_before(
    tmp_path, fixture_dir
):
    """One `ElmoFeatures` serves train, validation and test; in `stateful` mode each split's
    cached layers must be those of that split on its own, whatever was built first (else a cache
    entry, keyed by the split's text alone, would hold layers of another run's build order)."""
    config = {
        "options_file": str(fixture_dir / "options.json"),
        "weight_file": str(fixture_dir / "lm_weights.hdf5"),
        "state": "stateful",
        "batch_size": 2,
    }
    first = [s for s in SENTENCES if s]
    second = [["Paris", "is", "far", "."], ["Rome", "too", "."], ["Yes", "."]]
    after_first = ElmoFeatures(config, cache_dir=tmp_path / "a", progress=False)
    after_first.source(first)
    carried = after_first.source(second)([0, 1, 2])
    alone = ElmoFeatures(config, cache_dir=tmp_path / "b", progress=False).source(second)
    torch.testing.assert_close(carried, alone([0, 1, 2]), atol=0, rtol=0)
    # Entries built before splits started from zeros are not reused.
    assert key_for(second, "stateful")["initial_state"] == "zeros"
    assert "initial_state" not in key_for(second, "warm")
