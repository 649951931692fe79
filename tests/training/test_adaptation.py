"""``elmo.adapt=task|domain`` in a training run on a tiny corpus with the fixture biLM: the run
adapts on its training sentences alone, caches the result for later runs and seeds, records the
held-out perplexities, and saves the adapted biLM in its model folder."""

import logging
import shutil
from pathlib import Path

import pytest
import torch
from cli.test_train import glove_file, write_corpus
from hydra import compose, initialize_config_module
from tiny_tagger import one_thread

from ner.bilm.bilm import BiLM
from ner.common.schema import ConfigError
from ner.model.tagger import Tagger
from ner.training.api import train
from ner.training.config import validate
from ner.training.reevaluate import evaluate_run, run_tagger

ADAPTED = "elmo_adapted"


def run(corpus: Path, glove: Path, run_dir: Path, *extra: str) -> dict:
    overrides = [
        f"data.name={corpus}",
        f"embeddings.glove.source={glove}",
        "elmo=fixture",  # its folder: $NER_ELMO_FIXTURE (tests/conftest.py)
        "elmo.adapt_steps=3",
        "elmo.adapt_softmax_steps=2",
        "trainer.max_epochs=1",
        "trainer.num_threads=1",
        "data.batch_size=16",
        "model.hidden_size=8",
        "model.num_layers=1",
        "logger=none",
        "progress=false",
        *extra,
    ]
    with one_thread():
        return train(overrides=overrides, run_dir=run_dir).results


def bilm_weights(options: Path, weights: Path) -> dict[str, torch.Tensor]:
    return BiLM.from_files(options, weights, state="stateless").state_dict()


def entries(data: Path) -> list[Path]:
    return sorted(p for p in (data / ADAPTED).iterdir() if p.is_dir())


@pytest.mark.slow
def test_task_adaptation_on_train_only_cached_and_saved_with_the_model(
    tmp_path: Path, isolated_data_dir: Path, fixture_dir: Path, caplog
) -> None:
    corpus, glove = write_corpus(tmp_path / "tiny"), glove_file(tmp_path / "glove.txt")
    with caplog.at_level(logging.INFO):
        results = run(corpus, glove, tmp_path / "first", "elmo.adapt=task")
    assert "adapting the biLM" in caplog.text
    adaptation = results["elmo_adaptation"]
    assert adaptation["mode"] == "task"
    assert adaptation["task_sentences"] == results["sentences"]["train"]
    for when in ("before", "after"):
        assert adaptation[f"perplexity_{when}"]["forward"] > 1
    assert adaptation["steps"] == 2 + 3
    (entry,) = entries(isolated_data_dir)
    assert adaptation["cache_entry"] == entry.name

    # The saved model carries the adapted biLM, and a loaded tagger runs it, not the base.
    model_bilm = tmp_path / "first" / "model" / "bilm"
    assert (model_bilm / "weights.hdf5").read_bytes() == (entry / "weights.hdf5").read_bytes()
    adapted = bilm_weights(entry / "options.json", entry / "weights.hdf5")
    base = bilm_weights(fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5")
    assert any(not torch.equal(adapted[k], base[k]) for k in base)
    loaded = Tagger.load(tmp_path / "first" / "model").bilm_files
    assert bilm_weights(Path(loaded.options), Path(loaded.weights)).keys() == adapted.keys()
    for key, value in bilm_weights(Path(loaded.options), Path(loaded.weights)).items():
        assert torch.equal(value, adapted[key]), key

    # Without model/, ner-evaluate restores the checkpoint with the adapted biLM it records.
    shutil.rmtree(tmp_path / "first" / "model")
    restored = run_tagger(tmp_path / "first", results["config"], device="cpu")
    assert Path(restored.bilm_files.weights) == entry / "weights.hdf5"
    assert evaluate_run(tmp_path / "first", split="test")["f1"] == results["test"]["f1"]

    # Other dev and test sentences and another seed: the same adaptation, from the cache. Had
    # the adaptation read dev or test, its fingerprint (a digest of its text) would differ.
    for split in ("dev", "test"):
        (corpus / f"{split}.txt").write_text("Zanzibar B-LOC\nwas O\nnew O\n. O\n\n")
    caplog.clear()
    with caplog.at_level(logging.INFO):
        again = run(corpus, glove, tmp_path / "second", "elmo.adapt=task", "seed=2")
    assert "adapting the biLM" not in caplog.text
    assert entries(isolated_data_dir) == [entry]
    assert again["elmo_adaptation"]["cache_entry"] == entry.name


@pytest.mark.slow
def test_domain_adaptation_reads_the_named_text_too(
    tmp_path: Path, isolated_data_dir: Path, capsys
) -> None:
    corpus, glove = write_corpus(tmp_path / "tiny"), glove_file(tmp_path / "glove.txt")
    domain = tmp_path / "domain.txt"
    domain.write_text("Reuters reported from Tokyo on Monday .\nShares rose in Berlin .\n" * 20)
    results = run(
        corpus, glove, tmp_path / "run", "elmo.adapt=domain", f"elmo.adapt_text=[{domain}]"
    )
    assert results["elmo_adaptation"]["texts"] == [str(domain)]
    shown = capsys.readouterr().err
    assert "step/s" not in shown and "s/step" not in shown  # progress=false: no adaptation bar


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["elmo.adapt=domain"], "needs elmo.adapt_text"),
        (["elmo.adapt=task", "elmo.adapt_text=[a.txt]"], "only with elmo.adapt=domain"),
        (["elmo.adapt=tasks"], "expected one of none, task, domain"),
        (["elmo.adapt=task", "elmo.path=bilm.zip"], "not a biLM folder or zip"),
        (["elmo.adapt=task", "elmo.adapt_lr_scale=-0.1"], "adapt_lr_scale"),
    ],
)
def test_adaptation_settings_are_checked_before_anything_runs(overrides, message) -> None:
    with initialize_config_module("ner.conf", version_base="1.3"):
        cfg = compose("train", overrides=["elmo=fixture", *overrides])
    with pytest.raises(ConfigError, match=message):
        validate(cfg)
