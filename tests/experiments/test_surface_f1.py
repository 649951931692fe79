"""experiments/study/surface_f1.py: every run's entity and surface-form F1 from its test
predictions, and each variant's mean over seeds."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ner.common.paths import PROJECT_ROOT

SCRIPT = PROJECT_ROOT / "experiments" / "study" / "surface_f1.py"
# Paris twice, found once: 1 of 2 mentions but the one distinct form; Rome missed.
RUN = "Paris B-LOC B-LOC\nand O O\nParis B-LOC O\n\nRome B-LOC O\n"


def test_each_variant_gets_its_seeds_entity_and_surface_f1(tmp_path: Path) -> None:
    for seed in (1, 2):
        run = tmp_path / "runs" / "glove" / f"seed{seed}"
        run.mkdir(parents=True)
        (run / "predictions_test.txt").write_text(RUN)
    (tmp_path / "runs" / "unfinished" / "seed1").mkdir(parents=True)
    out = tmp_path / "surface.json"
    shown = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "runs"), "--out", str(out)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    found = json.loads(out.read_text())
    assert list(found["runs"]) == ["glove"]
    seed = found["runs"]["glove"]["seed1"]
    assert seed["entity_f1"] == pytest.approx(50.0)  # P 1/1, R 1/3
    assert seed["surface_f1"] == pytest.approx(200.0 / 3)  # P 1/1, R 1/2 (Paris, Rome)
    assert found["mean_std"]["glove"]["surface_f1"] == {"mean": seed["surface_f1"], "std": 0.0}
    assert "| glove | 2 | 50.00 ± 0.00 | 66.67 ± 0.00 |" in shown
