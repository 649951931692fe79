"""The pretraining config schema: conf/pretrain.yaml composes into typed settings; a wrong
type or a misspelt key fails while composing, a value out of range before any text is read."""

import logging
import os
import subprocess
import sys

import pytest
import torch
from hydra import compose, initialize_config_module
from hydra.errors import ConfigCompositionException

from ner.common.schema import ConfigError
from ner.pretrain.config import (
    NAMED_OPTIMIZERS,
    PretrainSettings,
    optimizer_config,
    preset_overrides,
    validate,
)
from ner.pretrain.trainer import build_optimizer, lr_factor, lr_factors


def compose_pretrain(*overrides: str):
    with initialize_config_module("ner.conf", version_base="1.3"):
        return compose("pretrain", overrides=list(overrides))


def test_the_shipped_recipe_composes_and_validates():
    cfg = compose_pretrain()
    validate(cfg)
    assert cfg.model.lstm.projection_dim == 128


def test_the_config_is_in_groups_and_logs_offline_by_default_as_ner_train(tmp_path):
    cfg = compose_pretrain()
    assert (cfg.wandb.mode, cfg.wandb.project) == ("offline", None)
    assert compose_pretrain("wandb=online").wandb.mode == "online"
    mine = tmp_path / "my_conf" / "corpus"
    mine.mkdir(parents=True)
    (mine / "mine.yaml").write_text("sources: [my_text.txt]\nheldout_per_mille: 20\n")
    search = f"hydra.searchpath=[file://{mine.parent}]"
    result = subprocess.run(
        [sys.executable, "-m", "ner.cli.pretrain", search, "corpus=mine", "--cfg", "job"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "- my_text.txt\n  heldout_per_mille: 20\n  max_sentence_tokens: 400" in result.stdout
    assert "reuters" not in result.stdout and "projection_dim: 128" in result.stdout


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


def test_the_optimizer_is_any_torch_optimizer_built_from_its_target():
    cfg = compose_pretrain(
        "pretrain.optimizer._target_=torch.optim.SGD",
        "pretrain.optimizer.lr=0.5",
        "pretrain.optimizer.fused=null",
        "+pretrain.optimizer.momentum=0.9",
    )
    validate(cfg)
    optimizer = build_optimizer(torch.nn.Linear(2, 2), cfg.pretrain.optimizer)
    assert type(optimizer) is torch.optim.SGD
    assert optimizer.defaults["lr"] == 0.5 and optimizer.defaults["momentum"] == 0.9


def test_the_default_precision_is_bfloat16_where_the_device_has_it():
    """bfloat16 products trained about twice as fast as float32 on a CPU with AVX512-BF16 and
    as well (docs/pretraining.md); `training_precision` resolves auto per device."""
    settings = compose_pretrain().pretrain
    assert settings.precision == "auto" and PretrainSettings().precision == "auto"


def test_the_default_optimizer_is_the_shipped_recipes_fused_adam():
    optimizer = build_optimizer(torch.nn.Linear(2, 2), compose_pretrain().pretrain.optimizer)
    assert type(optimizer) is torch.optim.Adam
    assert optimizer.defaults["lr"] == 0.002 and optimizer.defaults["fused"] is True


@pytest.mark.parametrize(
    ("name", "kind", "arguments"),
    [
        ("adam", torch.optim.Adam, {"fused": True}),
        ("adagrad", torch.optim.Adagrad, {"initial_accumulator_value": 1.0, "fused": None}),
        ("sgd", torch.optim.SGD, {"fused": None}),
    ],
)
def test_the_deprecated_optimizer_name_builds_what_it_built_and_names_the_new_keys(
    name, kind, arguments, caplog
):
    cfg = compose_pretrain(f"pretrain.optimizer.name={name}", "pretrain.optimizer.lr=0.2")
    validate(cfg)
    with caplog.at_level(logging.WARNING):
        optimizer = build_optimizer(torch.nn.Linear(2, 2), cfg.pretrain.optimizer)
        named = optimizer_config(cfg.pretrain.optimizer)
    assert type(optimizer) is kind and optimizer.defaults["lr"] == 0.2
    assert {key: optimizer.defaults[key] for key in arguments} == arguments
    overrides = preset_overrides(NAMED_OPTIMIZERS[name])
    assert f"pretrain.optimizer.name={name} is deprecated: set {' '.join(overrides)}" in caplog.text
    # What the warning says to set instead builds the same optimizer, without a warning.
    caplog.clear()
    replacement = compose_pretrain(*overrides, "pretrain.optimizer.lr=0.2").pretrain.optimizer
    assert optimizer_config(replacement) == named
    assert "deprecated" not in caplog.text


@pytest.mark.parametrize("warm_up", [0, 2])
def test_the_bilm_learns_at_its_scale_of_the_learning_rate(warm_up: int) -> None:
    """Two parameter groups: the softmax at the schedule's rate, the biLM at `bilm_lr_scale` of
    it (with a warm-up: 0 during it, then the schedule over the steps left)."""
    cfg = compose_pretrain(
        "pretrain.bilm_lr_scale=0.25",
        f"pretrain.softmax_warmup_steps={warm_up}",
        "pretrain.warmup_steps=3",
        "pretrain.max_steps=10",
    )
    validate(cfg)
    lr = cfg.pretrain.optimizer.lr
    model = torch.nn.Module()
    model.softmax, model.lstm = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    optimizer = build_optimizer(model, cfg.pretrain.optimizer, warm_up, 0.25)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factors(cfg.pretrain))
    softmax, bilm = optimizer.param_groups
    assert softmax["params"] == list(model.softmax.parameters())
    assert bilm["params"] == list(model.lstm.parameters())
    for step in range(10):
        assert softmax["lr"] == pytest.approx(lr * lr_factor(step, 3, 10, "linear"))
        after = lr_factor(step - warm_up, 3, 10 - warm_up, "linear") if step >= warm_up else 0.0
        assert bilm["lr"] == pytest.approx(0.25 * lr * after)
        optimizer.step()
        scheduler.step()
