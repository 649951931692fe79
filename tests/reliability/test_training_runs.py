"""Whole ``ner-train`` runs under faults (long: minutes each). SIGTERM: a checkpoint, a one-line
"resume with" message, exit 143; the resumed run finishes and logs into the same folder. A run
whose loss becomes NaN: exit 1 with a message, and neither results.json nor model/."""

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from ner.common.checkpoints import load_checkpoint
from ner.common.paths import PROJECT_ROOT

pytestmark = pytest.mark.long


def write_corpus(folder: Path) -> Path:
    """Tiny IOB2 column files: 'NAME visited PLACE .' sentences."""
    rng = random.Random(0)
    folder.mkdir(parents=True)
    for split, count in [("train", 60), ("dev", 20), ("test", 20)]:
        lines = []
        for _ in range(count):
            name, place = rng.choice(["John", "Mary", "Anna"]), rng.choice(["Paris", "Rome"])
            lines += [f"{name} B-PER", "visited O", f"{place} B-LOC", ". O", ""]
        (folder / f"{split}.txt").write_text("\n".join(lines))
    return folder


def train(tmp_path: Path, *arguments: str) -> subprocess.Popen:
    env = {**os.environ, "NER_DATA_DIR": str(tmp_path / "data"), "OMP_NUM_THREADS": "1"}
    corpus = tmp_path / "corpus"
    if not corpus.exists():
        write_corpus(corpus)
    return subprocess.Popen(
        [
            sys.executable, "-m", "ner.cli.train", f"data.name={corpus}", "elmo=fixture",
            "embeddings.glove.source=null", "data.batch_size=8", "model.hidden_size=16",
            "progress=false", "logger=none", *arguments,
        ],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def test_sigterm_saves_says_how_to_resume_and_the_resumed_run_logs_in_place(tmp_path):
    run_dir = tmp_path / "run"
    process = train(tmp_path, "trainer.max_epochs=30", f"hydra.run.dir={run_dir}")
    last = run_dir / "checkpoints" / "last.pt"
    deadline = time.monotonic() + 600
    while not last.exists():
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 128 + signal.SIGTERM
    assert "Traceback" not in stderr
    assert f"resume with ner-train resume={run_dir}" in stderr.strip().splitlines()[-1]
    assert not (run_dir / "results.json").exists()
    stopped_at = load_checkpoint(last)["loop"]["epoch"]
    assert stopped_at < 30

    resumed = train(tmp_path, f"resume={run_dir}", "trainer.max_epochs=30")
    _, stderr = resumed.communicate(timeout=1800)
    assert resumed.returncode == 0, stderr[-3000:]
    assert (run_dir / "results.json").exists() and (run_dir / "model" / "archive.json").exists()
    log = (run_dir / "train.log").read_text()
    assert "resuming" in log and log.count("epoch 1/") == 1  # one log: first part and resumed


def test_a_run_whose_loss_becomes_nan_fails_and_writes_no_results(tmp_path):
    run_dir = tmp_path / "run"
    process = train(
        tmp_path, "trainer.max_epochs=3", "trainer.optimizer.lr=1e30", f"hydra.run.dir={run_dir}"
    )
    _, stderr = process.communicate(timeout=1200)
    assert process.returncode == 2, stderr[-3000:]
    assert "Traceback" not in stderr
    assert "training stopped: the loss became NaN or inf" in stderr
    assert not (run_dir / "results.json").exists()
    assert not (run_dir / "model").exists()
    last = run_dir / "checkpoints" / "last.pt"
    if last.exists():
        assert all(torch.isfinite(v).all() for v in load_checkpoint(last)["model"].values())
