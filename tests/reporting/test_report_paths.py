"""`ner-report` writes only inside its output folders, whatever the ``results.json`` it is handed
holds: a corpus name or metric with ``../`` in it, run as a user runs it (the console script,
from another folder)."""

import json
import subprocess
import sys
from pathlib import Path

from test_report import config, write_run

BIN = Path(sys.executable).parent


def files_under(folder: Path) -> set[Path]:
    return {path for path in folder.rglob("*") if path.is_file()}


def ner_report(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "ner-report"), *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_a_corpus_name_with_dotdot_writes_nothing_outside_the_folders(tmp_path: Path) -> None:
    runs, out, study = tmp_path / "runs", tmp_path / "a/b/c/out", tmp_path / "a/b/c/study"
    crafted = config(corpus="x")  # the corpus name is x-<label column>
    crafted["data"]["options"]["label_column"] = "../../../../escaped"
    for seed in (1, 2):  # plots/dev_f1_x-../../../../escaped.png would be a/b/c/escaped.png
        write_run(runs / str(seed), seed, 90.0, 88.0, crafted)
    before = files_under(tmp_path)
    done = ner_report(tmp_path, "runs", "--out", "a/b/c/out", "--study-json", "a/b/c/study")
    assert done.returncode == 0, done.stderr
    written = files_under(tmp_path) - before
    assert written and all(
        path.is_relative_to(out) or path.is_relative_to(study) for path in written
    )
    [plot] = [path for path in written if path.name.startswith("dev_f1_")]
    assert plot.parent == out / "plots" and plot.suffix == ".png"
    [record] = [path for path in written if path.parent == study]
    assert list(json.loads(record.read_text())["variants"]) == ["glove"]
    report = (out / "report.md").read_text()
    assert f"](plots/{plot.name})" in report


def test_a_metric_that_is_not_a_metric_is_refused(tmp_path: Path) -> None:
    folder = write_run(tmp_path / "runs" / "1", 1, 90.0, 88.0, config())
    results = json.loads((folder / "results.json").read_text())
    (folder / "results.json").write_text(json.dumps({**results, "metric": "../../x"}))
    done = ner_report(tmp_path, "runs", "--out", "out")
    assert done.returncode == 2
    assert "runs/1/results.json: 'metric' must be one of f1, accuracy" in done.stderr
    assert not (tmp_path / "out").exists()
