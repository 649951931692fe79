"""The plan of `ner-curve` (ner.training.curve): its runs, each run's overrides as ``ner-train``
composes them, and the settings file that keeps two configs out of one curve."""

from pathlib import Path

import pytest

from ner.common.errors import InputError
from ner.training.api import compose_config
from ner.training.curve import SETTINGS_FILE, CurvePlan, CurveRun, check_settings


def plan(tmp_path: Path, *overrides: str) -> CurvePlan:
    return CurvePlan(tmp_path, list(overrides), [1.0, 0.25, 0.5], seeds=2, full_epochs=8)


def test_the_runs_span_every_fraction_before_the_second_seed(tmp_path: Path) -> None:
    runs = [(run.fraction, run.seed) for run in plan(tmp_path).runs()]
    assert runs == [(0.25, 1), (0.5, 1), (1.0, 1), (0.25, 2), (0.5, 2), (1.0, 2)]
    run = CurveRun(0.25, 2)
    assert run.directory(tmp_path) == tmp_path / "runs" / "0.25" / "seed2"
    assert run.name == "0.25/seed2"


def test_a_run_gets_the_users_overrides_its_fraction_seed_and_a_scaled_budget(
    tmp_path: Path,
) -> None:
    chosen = plan(tmp_path, "data.batch_size=16", "seed=9", "trainer.max_epochs=8")
    config = compose_config(chosen.run_overrides(CurveRun(0.25, 2)))
    assert config.data.batch_size == 16
    assert (config.seed, config.data.train_fraction) == (2, 0.25)
    # 8 epochs on the whole set: 8 · 0.25^-0.6 → 19 on a quarter, patience a quarter of that
    assert (config.trainer.max_epochs, config.trainer.patience) == (19, 5)
    assert str(config.trainer.num_threads) == "1"  # a number or "auto"
    whole = compose_config(chosen.run_overrides(CurveRun(1.0, 1)))
    assert (whole.trainer.max_epochs, whole.trainer.patience, whole.trainer.eval_every) == (8, 2, 1)


def test_runs_of_other_settings_are_not_added_to_a_curve(tmp_path: Path) -> None:
    check_settings(plan(tmp_path, "data.name=a"))
    assert (tmp_path / SETTINGS_FILE).is_file()
    check_settings(plan(tmp_path, "data.name=a"))  # the same: fine
    with pytest.raises(InputError, match=f"{SETTINGS_FILE}: the runs there were made with"):
        check_settings(plan(tmp_path, "data.name=b"))
