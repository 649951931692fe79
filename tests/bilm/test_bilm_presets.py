"""conf/elmo presets: the published models resolve to the right URLs and shapes."""

import pytest
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

import ner.training.config  # noqa: F401  (registers the training config schema)
from ner.bilm.bilm import BiLM

BASE = "https://allennlp.s3.amazonaws.com/models/elmo"

# name → (file prefix, parameters stored in weights.hdf5, 2P), as AllenNLP publishes them.
PUBLISHED = {
    "original": ("2x4096_512_2048cnn_2xhighway", 93_600_848, 1024),
    "original_5.5b": ("2x4096_512_2048cnn_2xhighway_5.5B", 93_600_848, 1024),
    "medium": ("2x2048_256_2048cnn_1xhighway", 28_027_728, 512),
    "small": ("2x1024_128_2048cnn_1xhighway", 13_593_296, 256),
}


def preset(name: str) -> dict:
    with initialize_config_module("ner.conf", version_base="1.3"):
        cfg = compose(config_name="train", overrides=[f"elmo={name}"])
    return OmegaConf.to_container(cfg.elmo, resolve=True)


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_presets_resolve_to_urls_and_shapes(name):
    prefix, parameters, output_dim = PUBLISHED[name]
    elmo = preset(name)
    assert elmo["options_file"] == f"{BASE}/{prefix}/elmo_{prefix}_options.json"
    assert elmo["weight_file"] == f"{BASE}/{prefix}/elmo_{prefix}_weights.hdf5"
    assert elmo["state"] == "warm" and elmo["cache"] and elmo["mix"]["layers"] is None
    expected = elmo["expected"]
    assert (expected["parameters"], expected["output_dim"]) == (parameters, output_dim)
    assert expected["options_file"] == elmo["options_file"]


def test_fixture_preset_loads_and_overrides_work():
    elmo = preset("fixture")
    model = BiLM.from_files(elmo["options_file"], elmo["weight_file"], expected=elmo["expected"])
    assert model.output_dim == 32 and model.num_layers == 3
    with initialize_config_module("ner.conf", version_base="1.3"):
        cfg = compose(
            config_name="train",
            overrides=["elmo=small", "elmo.options_file=/x/o.json", "elmo.weight_file=/x/w.hdf5"],
        )
    assert (cfg.elmo.options_file, cfg.elmo.weight_file) == ("/x/o.json", "/x/w.hdf5")


def test_preset_shapes_apply_to_its_own_files_only():
    """`elmo.options_file=...` points a preset elsewhere: its expected shapes no longer apply."""
    fixture = preset("fixture")
    wrong_file = {**preset("small")["expected"], "options_file": fixture["options_file"]}
    with pytest.raises(ValueError, match="the preset expects"):
        BiLM.from_files(fixture["options_file"], fixture["weight_file"], expected=wrong_file)
    with initialize_config_module("ner.conf", version_base="1.3"):
        cfg = compose(
            config_name="train",
            overrides=[
                f"elmo.options_file={fixture['options_file']}",
                f"elmo.weight_file={fixture['weight_file']}",
            ],
        )
    elmo = OmegaConf.to_container(cfg.elmo, resolve=True)
    model = BiLM.from_files(elmo["options_file"], elmo["weight_file"], expected=elmo["expected"])
    assert model.output_dim == 32


# ELMoForManyLangs presets → the NLPL repository's id of the language's zip.
EFML_PRESETS = {"es": 145, "nl": 164, "de": 142, "fr": 150}


@pytest.mark.parametrize("language", sorted(EFML_PRESETS))
def test_elmoformanylangs_presets_name_the_published_zip_without_a_made_up_pin(language):
    elmo = preset(f"efml_{language}")
    number = EFML_PRESETS[language]
    assert elmo["path"] == f"http://vectors.nlpl.eu/repository/11/{number}.zip"
    assert elmo["format"] == "efml" and elmo["state"] == "stateless"
    assert elmo["sha256"] is None and elmo["options_file"] is None


def test_a_config_without_a_bilm_is_refused_in_one_line():
    from ner.common.schema import ConfigError
    from ner.training.config import validate

    with initialize_config_module("ner.conf", version_base="1.3"):
        cfg = compose(config_name="train", overrides=["elmo.weight_file=null"])
    with pytest.raises(ConfigError, match=r"elmo=small_news: set elmo\.path=DIR_OR_ZIP .* or both"):
        validate(cfg)
    with initialize_config_module("ner.conf", version_base="1.3"):
        cfg = compose(config_name="train", overrides=["elmo=folder"])
    with pytest.raises(ConfigError, match=r"elmo=folder: set elmo\.path=DIR_OR_ZIP \(a biLM"):
        validate(cfg)
