"""The pretraining config schema: conf/pretrain.yaml composes into typed settings; a wrong
type or a misspelt key fails while composing, a value out of range before any text is read."""

import os
import subprocess
import sys

import pytest
from hydra import compose, initialize_config_module
from hydra.errors import ConfigCompositionException

from ner.common.schema import ConfigError
from ner.pretrain.config import validate


def compose_pretrain(*overrides: str):
    with initialize_config_module("ner.conf", version_base="1.3"):
        return compose("pretrain", overrides=list(overrides))


def test_the_shipped_recipe_composes_and_validates():
    cfg = compose_pretrain()
    validate(cfg)
    assert cfg.model.lstm.projection_dim == 128


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("pretrain.max_steps=lots", "could not be converted to Integer"),
        ("pretrain.max_step=5", "Key 'max_step' not in 'PretrainSettings'"),
        ("vocab.min_count=2.5", "could not be converted to Integer"),
    ],
)
def test_wrong_types_and_typos_fail_while_composing(override, message):
    with pytest.raises(ConfigCompositionException) as caught:
        compose_pretrain(override)
    error = caught.value
    text = f"{error}\n{error.__cause__}"
    assert message in text and override.split("=")[0] in text


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("pretrain.batch_size=0", "pretrain.batch_size=0: expected a number ≥ 1"),
        ("pretrain.dropout=1.0", "pretrain.dropout=1.0: expected a number ≥ 0.0 and < 1.0"),
        (
            "pretrain.state_reset_probability=1.5",
            "pretrain.state_reset_probability=1.5: expected a number ≥ 0.0 and ≤ 1.0",
        ),
        (
            "pretrain.optimizer.name=rmsprop",
            "pretrain.optimizer.name=rmsprop: expected one of adam, adagrad, sgd",
        ),
        ("pretrain.lr_schedule=cosine", "pretrain.lr_schedule=cosine: expected one of constant"),
        ("corpus.heldout_per_mille=1000", "corpus.heldout_per_mille=1000: expected a number <"),
        ("pretrain.threads=0", "pretrain.threads=0: expected a positive number or auto"),
        ("wandb.mode=loud", "wandb.mode=loud: expected one of online, offline, disabled"),
        ("pretrain.precision=half", "pretrain.precision=half: expected one of auto, float32"),
    ],
)
def test_values_out_of_range_are_rejected_naming_key_and_value(override, message):
    with pytest.raises(ConfigError) as caught:
        validate(compose_pretrain(override))
    assert str(caught.value).startswith(message)


def test_init_from_takes_an_options_and_weights_pair():
    pair = "pretrain.init_from={options: /bilm/options.json, weights: /bilm/weights.hdf5}"
    cfg = compose_pretrain(pair)
    validate(cfg)
    assert cfg.pretrain.init_from.weights == "/bilm/weights.hdf5"
    with pytest.raises(ConfigError, match=r"expected \{options: PATH, weights: PATH\}"):
        validate(compose_pretrain("pretrain.init_from={options: /bilm/options.json}"))


def test_ner_pretrain_stops_on_a_bad_value_before_reading_text(tmp_path):
    env = {**os.environ, "NER_DATA_DIR": str(tmp_path / "data")}
    result = subprocess.run(
        [sys.executable, "-m", "ner.cli.pretrain", "pretrain.batch_size=0"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2
    assert "ner-pretrain: pretrain.batch_size=0: expected a number ≥ 1" in result.stderr
    assert not (tmp_path / "data").exists()
