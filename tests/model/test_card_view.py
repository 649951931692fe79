"""`ner-models show` as a user runs it: a shipped tagger's card, a run's model folder (its card
made from the run's results.json), and a bare name that is always the shipped tagger while
``./NAME`` is the folder of that name, saying which was loaded."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tiny_tagger import saved_model

from ner.model.shipped import read_card, shipped_taggers

BIN = Path(sys.executable).parent


def ner_models(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "ner-models"), *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_show_prints_a_shipped_card(tmp_path: Path) -> None:
    done = ner_models(tmp_path, "show", "conll2003")
    assert done.returncode == 0, done.stderr
    folder = shipped_taggers()["conll2003"]
    card = read_card(folder)
    lines = done.stdout.splitlines()
    assert lines[0] == f"conll2003: the shipped tagger in {folder}"
    assert f"about:   {card['about']}" in lines
    assert f"test:    F1 {card['scores']['test']['f1']:.2f} (LOC " in done.stdout
    assert (folder / "MODEL_CARD.md").read_text().strip() in done.stdout


def test_a_folder_named_as_a_shipped_tagger_is_loaded_by_its_path(tmp_path: Path) -> None:
    run = tmp_path / "conll2003"
    shutil.copytree(saved_model(), run / "model")
    results = {"dev": {"f1": 97.5, "per_type": {"PER": {"f1": 96.0}}}, "test": {"f1": 88.25},
               "seed": 1, "best_epoch": 1, "epochs_run": 1, "history": [],
               "config": {"data": {"name": "tiny", "options": {}}}}  # fmt: skip
    (run / "results.json").write_text(json.dumps(results))
    shutil.copytree(run / "model", tmp_path / "conll2000")
    bare = ner_models(tmp_path, "show", "conll2000")
    assert bare.stdout.startswith("conll2000: the shipped tagger in ")
    assert "not the folder conll2000 here (load that with the path ./conll2000)" in bare.stderr
    size = sum(path.stat().st_size for path in (run / "model").rglob("*") if path.is_file())
    done = ner_models(tmp_path, "show", "./conll2003/model")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "./conll2003/model: the model folder conll2003/model",
        "task:    spans",
        "labels:  LOC, PER",
        "corpus:  tiny",
        "dev:     F1 97.50 (PER 96.00)",
        "test:    F1 88.25",
        f"size:    {size / 1e6:.1f} MB",
    ]
