"""The docs' walkthrough, run as written (docs/data.md): ``ner-train`` on one tab-separated file
with dev and test carved by ``data.options.holdout``, plus tiny settings so that it takes
seconds; results.json records the carve, the training subset and the run's warnings."""

import json
import os
import random
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_files import FIXTURE

from ner.common.paths import PROJECT_ROOT

DOCS = PROJECT_ROOT / "docs" / "data.md"


def documented_command() -> list[str]:
    """The ``ner-train`` command of the walkthrough section, as arguments."""
    section = DOCS.read_text().split("### Walkthrough", 1)[1]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    command = next(block for block in blocks if "ner-train" in block)
    return shlex.split(command.replace("\\\n", " "))


def write_tsv(path: Path, sentences: int = 80) -> Path:
    """A one-file corpus in the walkthrough's layout (tabs, -DOCSTART-, blank lines)."""
    rng = random.Random(0)
    people, places = ["Anna", "John Smith", "Mary", "Bob"], ["Paris", "New York", "Rome", "Oslo"]
    lines = ["-DOCSTART-\tO", ""]
    for _ in range(sentences):
        person, place = rng.choice(people).split(), rng.choice(places).split()
        lines += [f"{w}\t{'B' if i == 0 else 'I'}-PER" for i, w in enumerate(person)]
        lines += [f"{w}\tO" for w in rng.choice(["visited", "flew to", "left"]).split()]
        lines += [f"{w}\t{'B' if i == 0 else 'I'}-LOC" for i, w in enumerate(place)]
        lines += [".\tO", ""]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
def test_the_walkthrough_trains_on_one_file(tmp_path):
    program, *arguments = documented_command()
    assert program == ".venv/bin/ner-train"
    assert "data.name=mydata.tsv" in arguments and "data.options.holdout=0.1" in arguments
    write_tsv(tmp_path / "mydata.tsv")
    glove = tmp_path / "glove.txt"
    glove.write_text("paris 0.1 0.2\nrome 0.3 -0.1\nvisited -0.2 0.4\n")
    run_dir = tmp_path / "run"
    tiny = [
        "trainer.max_epochs=3",
        "trainer.optimizer.lr=0.01",
        "model.hidden_size=16",
        "data.batch_size=8",
        "data.train_fraction=0.5",
        f"embeddings.glove.source={glove}",
        "embeddings.glove.dim=2",
        f"elmo.options_file={FIXTURE / 'options.json'}",
        f"elmo.weight_file={FIXTURE / 'lm_weights.hdf5'}",
        "logger=none",
        "progress=false",
        f"hydra.run.dir={run_dir}",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "ner.cli.train", *arguments, *tiny],
        cwd=tmp_path,  # data.name=mydata.tsv is relative to where the command runs
        env={**os.environ, "NER_DATA_DIR": str(tmp_path / "data"), "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    log = (run_dir / "train.log").read_text() + done.stderr
    assert "mydata: validation and test carved from train (holdout=0.1, holdout_seed=0)" in log
    assert "train_fraction=0.5 (subset_seed=0): 32 of 64 training sentences" in log
    results = json.loads((run_dir / "results.json").read_text())
    assert results["sentences"] == {"train": 32, "validation": 8, "test": 8}
    assert results["data"]["holdout"] == {
        "fraction": 0.1,
        "seed": 0,
        "splits": ["validation", "test"],
    }
    assert results["data"]["train_fraction"] == 0.5
    assert results["data"]["train_sentences_available"] == 64
    assert results["data"]["source_scheme"] == "iob2"
    assert isinstance(results["warnings"], list)
    assert results["dev"]["predicted_entities"] >= 0 and results["dev"]["support"] > 0
    assert (run_dir / "model").is_dir()
    # the model folder keeps the run's scores, for a server that sees only the folder
    kept = json.loads((run_dir / "model" / "archive.json").read_text())["metadata"]["scores"]
    assert kept == {
        split: {k: results[split][k] for k in ("precision", "recall", "f1")}
        for split in ("dev", "test")
    }
