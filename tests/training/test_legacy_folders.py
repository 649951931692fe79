"""Folders an earlier version saved (``tests/fixtures/legacy``, made by its ``make_fixture.py``)
keep working: the model folder loads and tags as it did, and the run killed after epoch 3
resumes from its checkpoint and config.yaml to the results the uninterrupted run had."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_files import FIXTURE

from ner.model.tagger import Tagger

LEGACY = Path(__file__).parents[1] / "fixtures" / "legacy"


def column_sentences(path: Path) -> list[list[list[str]]]:
    """The rows of each blank-line separated sentence of a column file, split at spaces."""
    blocks = path.read_text().strip().split("\n\n")
    return [[line.split() for line in block.splitlines()] for block in blocks]


def untimed(value: object) -> object:
    """`value` without its wall-clock figures (``seconds``, ``tokens_per_second``)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if "second" not in k}
    return value


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The fixture's folders in a writable place, with the biLM files the runs read (``elmo/``)
    and the model folder's biLM weights, which the fixture leaves out (the same bytes)."""
    for name in ("corpus", "glove.txt", "finished", "interrupted"):
        source = LEGACY / name
        copy = shutil.copytree if source.is_dir() else shutil.copy
        copy(source, tmp_path / name)
    shutil.copytree(FIXTURE, tmp_path / "elmo")
    shutil.copy(FIXTURE / "lm_weights.hdf5", tmp_path / "finished/model/bilm/weights.hdf5")
    return tmp_path


def test_a_model_folder_of_an_earlier_version_tags_as_it_did(workspace: Path) -> None:
    saved = column_sentences(workspace / "finished" / "predictions_test.txt")  # token gold pred
    tagger = Tagger.load(workspace / "finished" / "model")
    tagged = tagger.predict_tokens([[row[0] for row in sentence] for sentence in saved])
    assert [result.tags for result in tagged] == [[row[2] for row in s] for s in saved]
    assert tagger.scores["test"]["f1"] == pytest.approx(95.0)


@pytest.mark.slow
def test_a_run_of_an_earlier_version_resumes_to_the_uninterrupted_results(
    workspace: Path,
) -> None:
    env = {
        **os.environ,
        "NER_DATA_DIR": str(workspace / "data"),
        "OMP_NUM_THREADS": "1",
        "WANDB_SILENT": "true",
    }
    result = subprocess.run(
        [sys.executable, "-m", "ner.cli.train", "resume=interrupted"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "resumed after epoch 3" in result.stdout
    resumed, finished = (
        json.loads((workspace / run / "results.json").read_text())
        for run in ("interrupted", "finished")
    )
    for split in ("dev", "test"):  # scores the fixture's version did not have yet
        assert resumed[split].pop("surface")["support"] > 0
    for key in ("best_epoch", "epochs_run", "dev", "test"):
        assert untimed(resumed[key]) == untimed(finished[key]), key
    for ours, theirs in zip(resumed["history"], finished["history"], strict=True):
        assert ours["train/loss_per_token"] == pytest.approx(theirs["train/loss_per_token"])
        assert ours.get("dev/f1") == theirs.get("dev/f1")
    assert (workspace / "interrupted" / "predictions_test.txt").read_text() == (
        workspace / "finished" / "predictions_test.txt"
    ).read_text()
