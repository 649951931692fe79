"""The fp16 memory-mapped ELMo feature cache with the fixture biLM: reuse, keys, corruption."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from ner.bilm.bilm import BiLM
from ner.bilm.char_ids import batch_to_ids
from ner.common.downloads import sha256_file
from ner.features.cache import (
    _chunks,
    cache_key,
    corpus_fingerprint,
    key_digest,
    open_or_build,
)
from ner.features.elmo import ElmoFeatures

FIXTURE = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "elmo"
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


@pytest.mark.parametrize("damage", ["flip", "truncate", "no_meta", "bad_meta"])
def test_corrupt_or_interrupted_cache_is_rebuilt(tmp_path, bilm, damage, caplog):
    loader = Loader(bilm)
    key = key_for(SENTENCES)
    cache = open_or_build(tmp_path, key, SENTENCES, loader, batch_size=2, progress=False)
    reference = cache.batch([0, 2, 3]).clone()
    del cache
    entry = tmp_path / key_digest(key)
    layers = entry / "layers.f16"
    if damage == "flip":
        data = bytearray(layers.read_bytes())
        data[100] ^= 0xFF
        layers.write_bytes(bytes(data))
    elif damage == "truncate":
        layers.write_bytes(layers.read_bytes()[:-64])
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
    leftover = tmp_path / f"{key_digest(key)}.tmp-999999999"
    (leftover).mkdir()
    (leftover / "layers.f16").write_bytes(b"partial")
    open_or_build(tmp_path, key, SENTENCES, Loader(bilm), batch_size=2, progress=False)
    assert not leftover.exists()


def test_very_long_sentences_run_in_small_batches(tmp_path, bilm):
    lengths = np.array([5000, 3000, 10, 10, 10])
    assert _chunks([0, 1, 2, 3, 4], lengths, batch_size=32) == [[0], [1], [2, 3, 4]]
    sentences = [["word"] * 5000, ["Paris", "."]]
    cache = open_or_build(
        tmp_path, key_for(sentences), sentences, Loader(bilm), batch_size=2, progress=False
    )
    assert cache.layers(0).shape == (5000, 3, 32)
    assert np.isfinite(np.asarray(cache.layers(0), dtype=np.float32)).all()
