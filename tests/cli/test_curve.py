"""``ner-curve``: bad options refused in one line before anything runs, and a tiny real curve run
as a stranger would (the console script, from a folder that is not the repository): it trains,
reports, skips its finished runs when rerun, resumes a run left without results, and refuses to
mix runs of other settings into its folder."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_train import write_corpus

from ner.cli.curve import main

NER_CURVE = Path(sys.executable).with_name("ner-curve")
TINY = [
    "elmo=none",
    "embeddings.glove.source=null",
    "embeddings.glove.dim=8",
    "embeddings.char.filters=8",
    "model.hidden_size=8",
    "model.num_layers=1",
    "trainer.max_epochs=1",
]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--fractions", "0.5", "1"], "--fractions [0.5, 1.0]: expected 3 or more, 1 (the whole"),
        (["--fractions", "0.25", "0.5", "0.75"], "1 (the whole training set) among them"),
        (["--fractions", "0", "0.5", "1"], "expected distinct values in (0, 1]"),
        (["--fractions", "0.5", "0.5", "1"], "expected distinct values in (0, 1]"),
        (["--seeds", "1"], "--seeds 1: expected 2 or more"),
        (["--jobs", "0"], "--jobs and --resamples: expected 1 or more"),
        (["--level", "95"], "--level 95.0: expected a coverage in (0, 1)"),
        (["trainer.max_epoch=3"], "overrides trainer.max_epoch=3: "),
        (["experiment=nonesuch"], "overrides experiment=nonesuch: "),
    ],
)
def test_bad_options_are_refused_in_one_line_before_any_run(
    tmp_path: Path, capsys, options: list[str], message: str
) -> None:
    assert main(["--out", str(tmp_path / "out"), *options]) == 2
    error = capsys.readouterr().err
    assert error.startswith("ner-curve: ") and message in error, error
    assert error.count("\n") == 1, error
    assert not (tmp_path / "out").exists()


def ner_curve(folder: Path, *options: str) -> subprocess.CompletedProcess:
    """The console script in `folder` on its tiny corpus, fractions 1/4, 1/2, 1 and 2 seeds."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "NER_DATA_DIR": str(folder / "data")}
    return subprocess.run(
        [
            NER_CURVE, "data.name=tiny", *TINY, "--out", "curve",
            "--fractions", "0.25", "0.5", "1", "--seeds", "2", "--jobs", "2",
            "--resamples", "200", *options,
        ],
        cwd=folder, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip


@pytest.mark.slow
def test_a_tiny_curve_is_trained_reported_and_resumed(tmp_path: Path) -> None:
    write_corpus(tmp_path / "tiny")
    done = ner_curve(tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "6 run(s) to do of 6" in done.stdout
    assert "F1 at 2× your data (240 sentences):" in done.stdout
    assert "F1 at 4× your data (480 sentences):" in done.stdout
    assert "Check: fitted without the whole set" in done.stdout
    out = tmp_path / "curve"
    report = json.loads((out / "curve.json").read_text())
    assert [p["train_sentences"] for p in report["points"]] == [30, 60, 120]
    assert [p["seeds"] for p in report["points"]] == [[1, 2]] * 3
    assert [(t["fraction_a"], t["fraction_b"]) for t in report["tests"]] == [(0.5, 0.25), (1, 0.5)]
    assert all(t["paired"]["seeds"] == [1, 2] for t in report["tests"])
    for prediction in report["predictions"]:
        assert 0 <= prediction["low"] <= prediction["high"] <= 100
        assert 0 <= prediction["f1"] <= 100
    assert report["holdout"]["train_sentences"] == 120
    assert (out / "curve.png").stat().st_size > 0
    assert "| 0.25 | 30 |" in (out / "curve.md").read_text()

    again = ner_curve(tmp_path)
    assert "0 run(s) to do of 6" in again.stdout and "start " not in again.stdout
    assert json.loads((out / "curve.json").read_text())["points"] == report["points"]

    # A run without results (killed after its checkpoint) resumes from it; nothing else runs.
    (out / "runs" / "0.5" / "seed2" / "results.json").unlink()
    resumed = ner_curve(tmp_path)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-3000:]
    assert "1 run(s) to do of 6" in resumed.stdout and "start 0.5/seed2" in resumed.stdout
    assert "resume=" in (out / "runs" / "0.5" / "seed2.log").read_text()

    other = ner_curve(tmp_path, "model.hidden_size=16")
    assert other.returncode == 2 and "curve_settings.json: the runs there were made" in other.stderr
    shutil.rmtree(out / "runs" / "1")
    report_only = ner_curve(tmp_path, "--report-only")
    assert report_only.returncode == 2
    assert "needs finished runs at 3 fractions or more, 1 among them" in report_only.stderr
