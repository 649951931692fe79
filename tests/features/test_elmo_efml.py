"""ELMo features from an ELMoForManyLangs folder (``elmo.path``): the feature cache and the live
biLM compute them through the model's own input path (its character and word dictionaries), so
they equal the loader's layers; the cache is keyed by the folder's digest."""

import json

import numpy as np
import pytest
import torch
from fixture_files import FIXTURE

from ner.bilm.efml_bilm import EfmlBiLM
from ner.bilm.folder import folder_digest
from ner.features.elmo import ElmoFeatures

EFML = FIXTURE.parent / "efml" / "word_char"
# Words of word.dic and unknown ones, a character the model lacks, a token over 48 characters.
SENTENCES = [
    ["la", "casa", "xylophone", "."],
    [],
    ["Peter", "vive", "en", "España", "desde", "a" * 60],
    ["la"],
]


@pytest.fixture(scope="module")
def expected() -> list[torch.Tensor]:
    """The loader's layers (L, T_i, D) of each sentence, each run alone."""
    bilm = EfmlBiLM.from_folder(EFML, state="stateless")
    return [bilm.embed_sentences([sentence])[0] for sentence in SENTENCES]


def features(tmp_path, cache: bool) -> ElmoFeatures:
    config = {"path": str(EFML), "format": "efml", "state": "stateless", "batch_size": 2}
    return ElmoFeatures(config, cache=cache, cache_dir=tmp_path, progress=False)


def test_the_cache_holds_the_loaders_layers_keyed_by_the_folder_digest(tmp_path, expected):
    elmo = features(tmp_path, cache=True)
    assert (elmo.num_layers, elmo.output_dim) == (3, 16)
    source = elmo.source(SENTENCES)
    cached = source([0, 1, 2, 3])  # (B, L, T, D), float16 in the cache
    for row, layers in enumerate(expected):
        length = layers.shape[1]
        torch.testing.assert_close(cached[row, :, :length], layers, atol=2e-3, rtol=1e-3)
        assert torch.all(cached[row, :, length:] == 0)
    (entry,) = [p for p in tmp_path.iterdir() if (p / "meta.json").is_file()]
    key = json.loads((entry / "meta.json").read_text())["key"]
    assert key["weights_sha256"] == folder_digest(EFML, "efml")
    assert key["options"] == {"format": "efml"}


def test_live_features_equal_the_loaders_layers(tmp_path, expected):
    elmo = features(tmp_path, cache=False)
    live = elmo.source(SENTENCES)([2, 0, 3])
    for row, index in enumerate([2, 0, 3]):
        length = expected[index].shape[1]
        assert np.abs((live[row, :, :length] - expected[index]).numpy()).max() <= 1e-6
