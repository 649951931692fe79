"""biLM files that do not belong together or do not parse: errors that name the file."""

import json
import shutil
import time

import h5py
import pytest
from tiny_tagger import FIXTURE

from ner.bilm.bilm import BiLM
from ner.bilm.options import OptionsError
from ner.bilm.weights import WeightsError
from ner.features.elmo import ElmoFeatures


def config(folder) -> dict:
    return {
        "options_file": str(folder / "options.json"),
        "weight_file": str(folder / "lm_weights.hdf5"),
        "state": "warm",
    }


@pytest.fixture
def bilm_copy(tmp_path):
    folder = tmp_path / "bilm"
    shutil.copytree(FIXTURE, folder)
    return folder


def test_a_malformed_options_json_is_named(bilm_copy, tmp_path):
    (bilm_copy / "options.json").write_text('{"lstm": {"projection_dim": 16,')
    with pytest.raises(OptionsError, match=r"bilm/options\.json: cannot read ELMo options JSON"):
        ElmoFeatures(config(bilm_copy), cache_dir=tmp_path / "cache", progress=False)


def test_options_without_a_needed_key_are_named(bilm_copy, tmp_path):
    options = json.loads((bilm_copy / "options.json").read_text())
    del options["lstm"]["projection_dim"]
    (bilm_copy / "options.json").write_text(json.dumps(options))
    with pytest.raises(OptionsError, match=r"options\.json: field 'lstm\.projection_dim' must be"):
        ElmoFeatures(config(bilm_copy), cache_dir=tmp_path / "cache", progress=False)


def test_n_highway_that_disagrees_with_the_weights_is_refused(bilm_copy):
    options = json.loads((bilm_copy / "options.json").read_text())
    with h5py.File(bilm_copy / "lm_weights.hdf5", "r") as weights:
        assert "CNN_high_1/W_carry" in weights  # the fixture has two highway layers
    options["char_cnn"]["n_highway"] = 1
    (bilm_copy / "options.json").write_text(json.dumps(options))
    with pytest.raises(WeightsError, match=r"'CNN_high_1/.*n_highway=1.*do not belong together"):
        BiLM.from_files(bilm_copy / "options.json", bilm_copy / "lm_weights.hdf5")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("lstm.n_layers", 10**6, r"asks for 1000000 \(lstm\.n_layers\), the file holds 2"),
        ("char_cnn.n_highway", 10**6, r"asks for 1000000 \(char_cnn\.n_highway\), .* holds 2"),
        (
            "lstm.dim",
            10**9,
            r"Cell0/LSTMCell/W_0' has shape \(32, 256\), expected \(32, 4000000000\)",
        ),
    ],
)
def test_crafted_sizes_fail_before_anything_is_allocated(bilm_copy, key, value, message):
    """A million layers, or a billion cells, are refused by comparing the options with the
    weights file, in well under a second, before the biLM is built."""
    options = json.loads((bilm_copy / "options.json").read_text())
    section, name = key.split(".")
    options[section][name] = value
    (bilm_copy / "options.json").write_text(json.dumps(options))
    began = time.monotonic()
    with pytest.raises(WeightsError, match=message):
        BiLM.from_files(bilm_copy / "options.json", bilm_copy / "lm_weights.hdf5")
    assert time.monotonic() - began < 2
