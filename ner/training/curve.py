"""How much more data? A learning curve of the user's own training config: `ner-curve`.

For every training fraction (``data.train_fraction``: nested subsets of the training split, the
same for every seed; dev and test whole) and seed 1..S, one ``ner-train`` run with the user's
overrides into ``OUT/runs/<fraction>/seed<S>/`` (its log beside it, ``seed<S>.log``), `jobs` at a
time with one torch thread each (`ner.training.sweep`). A run with a ``results.json`` is skipped;
one with a checkpoint resumes from it; stopping ``ner-curve`` stops its runs at a checkpoint.
Each fraction gets the epoch budget of `ner.reporting.learning_curve.budget`, scaled from the
config's ``trainer.max_epochs`` (the whole set's). The runs' records then give the report
(`ner.reporting.curve_report`): ``OUT/curve.json``, ``OUT/curve.md`` and ``OUT/curve.png``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ner.common.errors import InputError
from ner.common.files import write_json, write_text
from ner.reporting.curve_plot import plot_curve
from ner.reporting.curve_report import curve_report, markdown
from ner.reporting.extrapolation import DEFAULT_FORM, DEFAULT_LEVEL, DEFAULT_RESAMPLES
from ner.reporting.learning_curve import budget, run_record, seed_rounds
from ner.training.sweep import launch, log, run_state, run_sweep

SETTINGS_FILE = "curve_settings.json"  # the overrides the runs in OUT were made with
RESULT = "results.json"


@dataclass(frozen=True)
class CurveRun:
    """One training run of the curve."""

    fraction: float
    seed: int

    def directory(self, out: Path) -> Path:
        return out / "runs" / f"{self.fraction:g}" / f"seed{self.seed}"

    @property
    def name(self) -> str:
        return f"{self.fraction:g}/seed{self.seed}"


@dataclass(frozen=True)
class CurvePlan:
    """What to run and how to report it.

    # Parameters
    out: the curve's folder (runs and report).
    overrides: ``ner-train`` overrides of every run (corpus, embeddings, model...).
    fractions: training fractions, 1 among them; seeds: seeds 1..`seeds` of every fraction.
    full_epochs: the epochs of the whole training set (the config's ``trainer.max_epochs``).
    form, resamples, level: the power law and its interval (`ner.reporting.extrapolation`).
    """

    out: Path
    overrides: Sequence[str]
    fractions: Sequence[float]
    seeds: int
    full_epochs: int
    form: str = DEFAULT_FORM
    resamples: int = DEFAULT_RESAMPLES
    level: float = DEFAULT_LEVEL

    def runs(self) -> list[CurveRun]:
        """Every run, the first seed of every fraction first (`seed_rounds`)."""
        seeds = range(1, self.seeds + 1)
        return [CurveRun(f, s) for f, s in seed_rounds(self.fractions, lambda _: seeds)]

    def run_overrides(self, run: CurveRun) -> list[str]:
        """The user's overrides, then the run's fraction, seed and budget."""
        return [
            *self.overrides,
            f"seed={run.seed}",
            f"data.train_fraction={run.fraction}",
            *(f"trainer.{k}={v}" for k, v in budget(run.fraction, self.full_epochs).items()),
            "trainer.num_threads=1",
            "logger=none",
            "progress=false",
        ]

    def done(self, run: CurveRun) -> bool:
        return run_state(run.directory(self.out)) == "done"


def check_settings(plan: CurvePlan) -> None:
    """Keep the overrides and budget of `plan.out`'s runs in its settings file; refuse to add runs
    of other settings to them, since the curve would mix two configs."""
    settings = {"overrides": list(plan.overrides), "full_epochs": plan.full_epochs}
    path = plan.out / SETTINGS_FILE
    if path.is_file():
        kept = json.loads(path.read_text(encoding="utf-8"))
        if kept != settings:
            raise InputError(
                f"{path}: the runs there were made with {kept}, not {settings}; "
                "give another --out, or the same overrides"
            )
        return
    write_json(path, settings)


def train_runs(plan: CurvePlan, jobs: int, poll: float = 5.0) -> list[CurveRun]:
    """Train the runs that are not done, `jobs` at a time (after `check_settings`); the failed
    ones."""
    check_settings(plan)
    runs = plan.runs()
    queue = [run for run in runs if not plan.done(run)]
    log(f"{len(queue)} run(s) to do of {len(runs)}")
    return run_sweep(
        queue,
        jobs=jobs,
        start=lambda run: launch(
            run.directory(plan.out), run.seed, plan.run_overrides(run), name=run.name
        ),
        finished=plan.done,
        on_done=lambda _run: None,
        poll=poll,
    )


def collect(plan: CurvePlan) -> dict[str, Any]:
    """The report of the plan's finished runs, written to ``curve.json``, ``.md`` and ``.png``."""
    records = [
        {"fraction": run.fraction, "seed": run.seed, **run_record(run.directory(plan.out) / RESULT)}
        for run in plan.runs()
        if plan.done(run)
    ]
    report = curve_report(records, plan.form, plan.resamples, plan.level, where=str(plan.out))
    write_json(plan.out / "curve.json", report)
    write_text(plan.out / "curve.md", markdown(report))
    plot_curve(report, plan.out / "curve.png")
    return report
