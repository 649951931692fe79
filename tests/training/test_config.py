"""The training config schema: every shipped config composes and validates; wrong types, typos,
unknown choices and out-of-range values fail at start-up with the key, the value and what is
expected; documented keys need no ``+``; a user's own config folder joins via hydra.searchpath."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module
from hydra.errors import ConfigCompositionException, MissingConfigException
from hydra.utils import instantiate
from omegaconf import OmegaConf

from ner.training.config import ConfigError, validate
from ner.training.run import run_dir_and_config

EXPERIMENTS = sorted(
    path.stem for path in (Path(__file__).parents[2] / "conf" / "experiment").iterdir()
)


def compose_train(*overrides: str):
    with initialize_config_module("ner.conf", version_base="1.3"):
        return compose("train", overrides=list(overrides))


def error_text(error: BaseException) -> str:
    """The message of `error` and of the errors that caused it (what Hydra prints)."""
    parts = []
    while error is not None:
        parts.append(str(error))
        error = error.__cause__
    return "\n".join(parts)


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_every_experiment_composes_and_validates(experiment):
    cfg = compose_train(f"experiment={experiment}")
    validate(cfg)
    assert cfg.variant and cfg.data.name


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("trainer.max_epochs=abc", r"Value 'abc' of type 'str' could not be converted to Integer"),
        ("data.batch_size=1.5", r"Value '1.5' of type '\w+' could not be converted to Integer"),
        ("elmo.cache=maybe", r"Value 'maybe' is not a valid bool"),
        ("model.dropout=high", r"Value 'high' of type 'str' could not be converted to Float"),
    ],
)
def test_a_wrong_type_fails_while_composing_and_names_key_and_value(override, expected):
    with pytest.raises(ConfigCompositionException) as caught:
        compose_train(override)
    text = error_text(caught.value)
    key = override.split("=")[0]
    assert f"full_key: {key}" in text
    assert re.search(expected, text), text


def test_a_misspelt_key_fails_while_composing():
    with pytest.raises(ConfigCompositionException) as caught:
        compose_train("trainer.max_epoch=3")
    assert "Key 'max_epoch' not in 'TrainerConfig'" in error_text(caught.value)


def test_an_unknown_choice_lists_the_available_ones():
    with pytest.raises(MissingConfigException, match=r"Could not find 'elmo/tiny'") as caught:
        compose_train("elmo=tiny")
    assert "small_news" in str(caught.value)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("trainer.max_epochs=0", "trainer.max_epochs=0: expected a number ≥ 1"),
        ("data.batch_size=-8", "data.batch_size=-8: expected a number ≥ 1"),
        ("model.hidden_size=0", "model.hidden_size=0: expected a number ≥ 1"),
        ("embeddings.glove.dim=-1", "embeddings.glove.dim=-1: expected a number ≥ 1"),
        ("trainer.optimizer.lr=-0.1", "trainer.optimizer.lr=-0.1: expected a number ≥ 0.0"),
        ("model.dropout=1.0", "model.dropout=1.0: expected a number ≥ 0.0 and < 1.0"),
        ("data.options.holdout=1.5", "data.options.holdout=1.5: expected a number ≥ 0.0 and < 1"),
        ("elmo.state=sticky", "elmo.state=sticky: expected one of warm, stateless, stateful"),
        ("model.tag_scheme=bilou", "model.tag_scheme=bilou: expected one of iob1, iob2, bioes"),
        ("logger.mode=loud", "logger.mode=loud: expected one of online, offline, disabled"),
        ("trainer.num_threads=many", "trainer.num_threads=many: expected a positive number"),
        ("trainer.max_batch_tokens=0", "trainer.max_batch_tokens=0: expected a number ≥ 1"),
        ("trainer.max_batch_tokens=null", None),
        ("trainer.eval_every=0", "trainer.eval_every=0: expected a number ≥ 1"),
        ("elmo.mix.layers=[0,1]", None),
        ("data.train_fraction=1.5", "data.train_fraction=1.5: expected a number > 0.0 and ≤ 1.0"),
        ("data.train_fraction=0", "data.train_fraction=0.0: expected a number > 0.0 and ≤ 1.0"),
        ("data.train_fraction=0.05", None),
        ("elmo.mix.layers=[3]", "elmo.mix.layers=[3]: layers out of range for the biLM's 3"),
        ("elmo.mix.layers=[1,1]", "elmo.mix.layers=[1, 1]: layers must be distinct"),
        (
            "elmo.mix.fixed_weights=[0.5,0.5]",
            "elmo.mix.fixed_weights=[0.5, 0.5]: expected 3 weights (one per mixed layer [0, 1, 2])",
        ),
        (
            "elmo.mix.fixed_weights=[1,1,1]",
            "elmo.mix.fixed_weights=[1.0, 1.0, 1.0]: expected 3 weights (one per mixed layer",
        ),
        ("elmo.mix.fixed_weights=[0.2,0.3,0.5]", None),
        (
            "embeddings.glove.tuning=thawed",
            "embeddings.glove.tuning=thawed: expected one of fine_tune, frozen, anchored, projec",
        ),
        ("embeddings.glove.anchor_weight=-1", "embeddings.glove.anchor_weight=-1.0: expected a"),
        ("embeddings.glove.tuning=projected", None),
    ],
)
def test_out_of_range_values_are_rejected_with_key_value_and_expectation(override, message):
    cfg = compose_train(override)
    if message is None:
        validate(cfg)
        return
    with pytest.raises(ConfigError) as caught:
        validate(cfg)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["embeddings=words", "embeddings.glove.tuning=frozen"],
            "embeddings.glove.tuning=frozen: needs pretrained rows, but embeddings.glove.source",
        ),
        (
            ["embeddings.glove.source=null", "embeddings.glove.tuning=projected"],
            "embeddings.glove.tuning=projected: needs pretrained rows",
        ),
        (
            ["embeddings.glove.trainable=false", "embeddings.glove.tuning=anchored"],
            "embeddings.glove.tuning=anchored: anchors rows that train",
        ),
    ],
)
def test_a_glove_tuning_needs_pretrained_rows(overrides, message):
    with pytest.raises(ConfigError) as caught:
        validate(compose_train(*overrides))
    assert str(caught.value).startswith(message)


def test_random_word_rows_fine_tune_and_frozen_glove_rows_may_be_projected():
    validate(compose_train("embeddings=words"))  # the group sets fine_tune
    validate(compose_train("embeddings.glove.source=null", "embeddings.glove.tuning=fine_tune"))
    validate(compose_train("embeddings.glove.trainable=false", "embeddings.glove.tuning=projected"))


def test_fixed_mix_weights_need_one_weight_per_mixed_layer():
    cfg = compose_train("elmo.mix.layers=[0,2]", "elmo.mix.fixed_weights=[0.5,0.25,0.25]")
    with pytest.raises(ConfigError, match=r"expected 2 weights \(one per mixed layer \[0, 2\]\)"):
        validate(cfg)


def test_mixed_layers_are_checked_against_the_biLM_in_use(monkeypatch, fixture_dir, tmp_path):
    """The layer count comes from the biLM's options.json (or its preset's expected shapes)."""
    monkeypatch.setenv("NER_ELMO_FIXTURE", str(fixture_dir))
    with pytest.raises(ConfigError, match=r"^elmo\.mix\.fixed_weights=\[0\.5, 0\.5\]: expected 3"):
        validate(compose_train("elmo=fixture", "elmo.mix.fixed_weights=[0.5,0.5]"))
    options = tmp_path / "options.json"
    options.write_text(
        (fixture_dir / "options.json").read_text().replace('"n_layers": 2', '"n_layers": 3')
    )
    cfg = compose_train(
        f"elmo.options_file={options}", "elmo.mix.fixed_weights=[0.25,0.25,0.25,0.25]"
    )
    validate(cfg)
    cfg = compose_train(f"elmo.options_file={options}", "elmo.mix.layers=[4]")
    with pytest.raises(ConfigError, match=r"out of range for the biLM's 4 layers"):
        validate(cfg)


def test_mix_layers_of_a_biLM_the_preset_does_not_describe_are_checked_on_loading():
    cfg = compose_train("elmo.options_file=my/options.json", "elmo.mix.fixed_weights=[0.5,0.5]")
    validate(cfg)  # its layer count is unknown until its options.json is read


def test_documented_keys_need_no_plus():
    cfg = compose_train(
        "data.name=/corpora/mine.tsv",
        "data.options.columns=[tokens,_,tags]",
        "data.options.separator='\t'",
        "data.options.holdout=0.1",
        "data.options.tag_scheme=iob2",
        "trainer/scheduler=plateau",
        "trainer.optimizer.weight_decay=0.01",
        "elmo.mix.layers=[2]",
        "elmo.dropout=0.1",
        "logger.tags=[a,b]",
    )
    validate(cfg)
    assert list(cfg.data.options.columns) == ["tokens", "_", "tags"]
    assert cfg.data.options.separator == "\t" and cfg.data.options.holdout == 0.1
    assert cfg.trainer.scheduler.factor == 0.5


def test_elmo_none_and_logger_none_switch_them_off():
    cfg = compose_train("elmo=none", "logger=none")
    validate(cfg)
    assert cfg.elmo is None and cfg.logger is None


def test_the_fixture_preset_takes_its_folder_from_the_environment(monkeypatch, fixture_dir):
    monkeypatch.setenv("NER_ELMO_FIXTURE", str(fixture_dir))
    cfg = compose_train("elmo=fixture")
    assert cfg.elmo.options_file == str(fixture_dir / "options.json")
    assert cfg.elmo.expected.options_file == cfg.elmo.options_file


def ner_train(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ner.cli.train", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("sweep", "override", "message"),
    [
        ([], "trainer.max_epochs=-1", "trainer.max_epochs=-1: expected a number ≥ 1"),
        (["-m", "seed=1,2"], "trainer.max_epochs=-1", "trainer.max_epochs=-1: expected a number"),
        ([], "data.train_fraction=1.5", "data.train_fraction=1.5: expected a number > 0.0"),
        ([], "elmo.mix.fixed_weights=[0.5,0.5]", "elmo.mix.fixed_weights=[0.5, 0.5]: expected 3"),
        (
            [],
            "data.options.encoding=latin-1",
            "data.options.encoding='latin-1': conll2003 is a named corpus (its files have a fixed "
            "format); it does not take it",
        ),
    ],
    ids=["run", "multirun", "train_fraction", "fixed_weights", "corpus_option"],
)
def test_a_bad_value_stops_ner_train_before_any_data_loads(tmp_path, sweep, override, message):
    data = tmp_path / "data"
    started = time.perf_counter()
    result = ner_train(
        *sweep,
        override,
        "logger=none",
        f"hydra.run.dir={tmp_path / 'run'}",
        f"hydra.sweep.dir={tmp_path / 'run'}",
        cwd=tmp_path,
        env={"NER_DATA_DIR": str(data)},
    )
    assert result.returncode == 2
    assert f"ner-train: {message}" in result.stderr
    assert not data.exists(), "nothing may be downloaded or prepared for a bad config"
    assert not (tmp_path / "run").exists(), "no run dir for a run that never starts"
    assert time.perf_counter() - started < 150  # start-up only, even on a busy machine


def test_a_users_config_folder_joins_through_the_search_path(tmp_path):
    """A folder with the same layout as conf/ adds experiments and corpora of one's own."""
    mine = tmp_path / "my_conf"
    (mine / "data").mkdir(parents=True)
    (mine / "experiment").mkdir()
    (mine / "data" / "shop_orders.yaml").write_text(
        "name: /corpora/shop_orders.tsv\noptions:\n  columns: [tokens, tags]\n  holdout: 0.1\n"
    )
    (mine / "experiment" / "shop.yaml").write_text(
        "# @package _global_\n"
        "defaults:\n  - override /data: shop_orders\n  - override /elmo: none\n\n"
        "trainer:\n  max_epochs: 30\nvariant: shop_glove\n"
    )
    result = ner_train(
        f"hydra.searchpath=[file://{mine}]", "experiment=shop", "--cfg", "job", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "name: /corpora/shop_orders.tsv" in result.stdout
    assert "holdout: 0.1" in result.stdout and "variant: shop_glove" in result.stdout
    assert "max_epochs: 30" in result.stdout and "elmo: null" in result.stdout


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ([], {"word_dim": 50, "char_dim": 16, "elmo_mix_layers": None, "elmo_dropout": 0.0}),
        (
            ["embeddings.char.dim=8", "elmo.mix.layers=[0,2]", "elmo.dropout=0.25"],
            {"char_dim": 8, "elmo_mix_layers": [0, 2], "elmo_dropout": 0.25},
        ),
        # without the input: the constructor's defaults (unused)
        (["embeddings=char", "elmo=none"], {"word_trainable": True, "elmo_layer_norm": False}),
    ],
)
def test_the_model_node_is_the_constructors_arguments(overrides, expected):
    cfg = compose_train(*overrides)
    model = instantiate(cfg.model, _convert_="all", tags=["O", "S-PER"], num_chars=5)
    assert {key: model.config[key] for key in expected} == expected


def test_a_run_saved_before_the_model_node_held_its_inputs_resumes_with_them(tmp_path):
    """An older config.yaml has no model.char_dim etc.: they follow its saved groups; keys the
    run added with `+` stay."""
    saved = OmegaConf.to_container(
        compose_train("embeddings.char.dim=8", "+trainer.optimizer.momentum=0.9"), resolve=True
    )
    for key in ("word_dim", "char_dim", "char_filters", "elmo_mix_layers", "elmo_dropout"):
        del saved["model"][key]
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "last.pt").write_bytes(b"")
    (tmp_path / "config.yaml").write_text(OmegaConf.to_yaml(saved))
    _, cfg, resuming = run_dir_and_config(OmegaConf.create({"resume": str(tmp_path)}))
    model = (cfg.model.char_dim, cfg.model.word_dim, cfg.model.char_filters)
    assert resuming and model == (8, 50, 128)
    assert cfg.trainer.optimizer.momentum == 0.9  # a key of the run's own (`+`) stays
