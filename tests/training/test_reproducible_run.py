"""Same config, seed and thread count → the same run: two tiny trainings with 2 CPU threads write
identical results.json (history, scores; timings aside) and identical predictions, and
re-evaluating one from its checkpoint reproduces its test predictions."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli.test_train import glove_file, write_corpus

from ner.common.paths import PROJECT_ROOT
from ner.training.reevaluate import evaluate_run


def outcome(value: Any) -> Any:
    """`value` without wall-clock figures (``*seconds*`` keys) and the commit that ran (others
    may commit while the two runs run)."""
    if isinstance(value, dict):
        return {k: outcome(v) for k, v in value.items() if "second" not in k and k != "git_commit"}
    if isinstance(value, list):
        return [outcome(v) for v in value]
    return value


@pytest.mark.slow
def test_two_identical_runs_write_identical_results(tmp_path: Path, monkeypatch) -> None:
    corpus = write_corpus(tmp_path / "tiny")
    with open(corpus / "test.txt", "a") as test:  # a word outside train, with a GloVe vector
        test.write("Mary B-PER\nvisited O\nZanzibar B-LOC\n. O\n\n")
    glove = glove_file(tmp_path / "glove.txt")
    with open(glove, "a") as vectors:
        vectors.write("zanzibar " + " ".join(["0.5"] * 50) + "\n")
    env = {**os.environ, "NER_DATA_DIR": str(tmp_path / "data"), "WANDB_SILENT": "true"}
    runs = []
    for name in ("first", "second"):
        run_dir = tmp_path / name
        args = [
            f"data.name={corpus}",
            f"embeddings.glove.source={glove}",
            "elmo=none",
            "trainer.max_epochs=3",
            "trainer.num_threads=2",
            "data.batch_size=64",  # large enough for torch's multi-threaded kernels
            "model.hidden_size=32",
            "trainer.optimizer.lr=0.01",
            "logger=none",
            "progress=false",
            f"hydra.run.dir={run_dir}",
        ]
        result = subprocess.run(
            [sys.executable, "-m", "ner.cli.train", *args],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        runs.append(run_dir)
    first, second = (json.loads((run / "results.json").read_text()) for run in runs)
    assert outcome(first) == outcome(second)
    losses = [epoch["train/loss_per_token"] for epoch in first["history"]]
    assert losses[-1] < losses[0]  # it did train
    for predictions in ("predictions_dev.txt", "predictions_test.txt"):
        assert (runs[0] / predictions).read_text() == (runs[1] / predictions).read_text()
    # ner-evaluate rebuilds the run from its checkpoint, GloVe words beyond train included.
    monkeypatch.setenv("NER_DATA_DIR", env["NER_DATA_DIR"])
    rescored = evaluate_run(runs[0], split="test")
    assert (runs[0] / "eval_tiny_test.txt").read_text() == (
        runs[0] / "predictions_test.txt"
    ).read_text()
    assert rescored["f1"] == first["test"]["f1"]
