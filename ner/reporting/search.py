"""Ranking the trials of a hyperparameter search (``ner-train -m hparams_search=optuna``).

A search folder holds ``search.yaml``, which the sweeper writes when the search starts (study,
direction, search space, fixed overrides), and one folder per trial with Hydra's
``.hydra/hydra.yaml`` (the trial's number and overrides) and, once the trial has finished, its
``results.json``. Trials are ranked by the objective, dev F1 (dev accuracy for a model of
per-token labels); trials without results (failed, interrupted or still running) come after
them. The best trial's overrides, less those that set up the search, are a ready-to-run
``ner-train`` command.
"""

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ner.reporting.aggregate import METRIC_NAMES, run_seconds
from ner.reporting.runs import RESULTS_FILE, ReportError, load_run, metric

SEARCH_RECORD = "search.yaml"
# Overrides that set up the search rather than the trial: not part of the best trial's command.
SEARCH_SETUP = ("hparams_search", "hydra/sweeper", "hydra/launcher", "hydra.sweeper", "hydra.sweep",
                "hydra.launcher")  # fmt: skip
TEST_WARNING = (
    "Trials are ranked by their dev {name}, the search's objective. Choose on dev only: report "
    "the chosen trial's test {name} (in its results.json) and never pick a trial by its test "
    "score."
)


@dataclass(frozen=True)
class Trial:
    """One trial: its number, folder, command-line overrides and results (None: unfinished)."""

    number: int
    directory: Path
    overrides: tuple[str, ...]
    results: dict[str, Any] | None

    @property
    def objective(self) -> float | None:
        """Dev F1 (dev accuracy for per-token labels), the value the trial returned to the
        sweeper; None without results."""
        return None if self.results is None else float(self.results["dev"][metric(self.results)])

    def value(self, key: str) -> str | None:
        """The value the trial's overrides give `key` (as written on the command line)."""
        for override in self.overrides:
            name, _, value = override.partition("=")
            if name == key:
                return value
        return None


@dataclass(frozen=True)
class Search:
    """A search folder: its record and its trials, best first."""

    directory: Path
    record: dict[str, Any]
    trials: list[Trial]

    @property
    def params(self) -> list[str]:
        """The searched keys."""
        return list(self.record.get("search_space") or {})

    @property
    def metric(self) -> str:
        """What the trials are ranked on: ``f1``, or ``accuracy`` for per-token labels."""
        return metric(self.trials[0].results) if self.best is not None else "f1"

    @property
    def best(self) -> Trial | None:
        """The finished trial with the best objective."""
        return self.trials[0] if self.trials and self.trials[0].results is not None else None


def find_searches(roots: list[Path]) -> list[Path]:
    """Every search folder (one with ``search.yaml``) among or under `roots`."""
    found: list[Path] = []
    for root in map(Path, roots):
        if root.is_dir():
            found += [path.parent for path in sorted(root.rglob(SEARCH_RECORD))]
    return sorted(set(found))


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise ReportError(f"{path}: cannot read it as YAML ({error})") from error


def load_trial(hydra_file: Path) -> Trial:
    """The trial whose Hydra record is `hydra_file` (``<trial>/.hydra/hydra.yaml``)."""
    content = _read_yaml(hydra_file)
    try:
        hydra = content["hydra"]
        number = int(hydra["job"]["num"])
        overrides = tuple(str(o) for o in hydra["overrides"]["task"])
    except (TypeError, KeyError, ValueError) as error:
        raise ReportError(f"{hydra_file}: no hydra.job.num or hydra.overrides.task") from error
    directory = hydra_file.parent.parent
    results_file = directory / RESULTS_FILE
    results = load_run(results_file).results if results_file.is_file() else None
    return Trial(number, directory, overrides, results)


def rank(trials: list[Trial], maximize: bool = True) -> list[Trial]:
    """Finished trials by objective (best first, ties by number), then unfinished by number."""
    finished = [t for t in trials if t.objective is not None]
    finished.sort(key=lambda t: (-t.objective if maximize else t.objective, t.number))
    return finished + sorted((t for t in trials if t.objective is None), key=lambda t: t.number)


def load_search(folder: Path) -> Search:
    """The search in `folder`: its ``search.yaml`` and every trial folder under it."""
    record = _read_yaml(folder / SEARCH_RECORD)
    if not isinstance(record, dict) or not isinstance(record.get("search_space"), dict):
        raise ReportError(f"{folder / SEARCH_RECORD}: not a search record (no search_space)")
    trials = [load_trial(path) for path in sorted(folder.rglob(".hydra/hydra.yaml"))]
    maximize = (record.get("directions") or ["maximize"])[0] == "maximize"
    return Search(folder, record, rank(trials, maximize))


def is_search_setup(override: str) -> bool:
    """Whether `override` sets up the search (sweeper, launcher, sweep folder)."""
    key = override.lstrip("+~").partition("=")[0]
    return any(key == name or key.startswith((f"{name}.", f"{name}/")) for name in SEARCH_SETUP)


def command(trial: Trial) -> str:
    """``ner-train`` with the trial's overrides: one run with the trial's settings."""
    overrides = [o for o in trial.overrides if not is_search_setup(o)]
    return " ".join(["ner-train", *map(shlex.quote, overrides)])


def _number(text: str | None) -> str:
    """A searched value for the table: floats to 3 significant digits, others as written."""
    if text is None:
        return "–"
    try:
        value = float(text)
    except ValueError:
        return text
    return text if value.is_integer() and "." not in text else f"{value:.3g}"


def _relative(path: Path, to: Path) -> str:
    return Path(os.path.relpath(path, to)).as_posix()


def search_json(search: Search, relative_to: Path) -> dict[str, Any]:
    """The ranking as JSON: record, trials in rank order with their values, the best command."""
    trials = []
    for position, trial in enumerate(search.trials, 1):
        results = trial.results or {}
        seconds = run_seconds(results.get("time_seconds", {})) if results else None
        trials.append(
            {
                "rank": position if trial.results is not None else None,
                "number": trial.number,
                "folder": _relative(trial.directory, relative_to),
                "dev_score": trial.objective,
                "params": {key: trial.value(key) for key in search.params},
                "best_epoch": results.get("best_epoch"),
                "epochs_run": results.get("epochs_run"),
                "minutes": None if seconds is None else seconds / 60,
            }
        )
    best = search.best
    return {
        "folder": _relative(search.directory, relative_to),
        "metric": search.metric,
        **search.record,
        "trials": trials,
        "best": None if best is None else {"number": best.number, "command": command(best)},
    }


def markdown(search: Search, relative_to: Path) -> list[str]:
    """The ranking as Markdown lines: a table of trials, the best trial and its command (folders
    named as given; `relative_to` is for the JSON part)."""
    content = search_json(search, relative_to)
    finished = sum(t["dev_score"] is not None for t in content["trials"])
    name = METRIC_NAMES[search.metric]
    fixed = " ".join(f"`{o}`" for o in content.get("fixed_overrides") or []) or "none"
    lines = [
        f"## Search {search.directory.as_posix()} (study {content.get('study_name')})",
        "",
        f"{len(content['trials'])} trials: {finished} finished, "
        f"{len(content['trials']) - finished} without results (failed, interrupted or running). "
        f"Fixed overrides: {fixed}.",
        "",
        f"| rank | trial | dev {name} | " + " | ".join(search.params) + " | best epoch | minutes |",
        "|---|---|---|" + "---|" * len(search.params) + "---|---|",
    ]
    for trial in content["trials"]:
        best = content["best"] and trial["number"] == content["best"]["number"]
        values = " | ".join(_number(trial["params"][key]) for key in search.params)
        if trial["dev_score"] is None:
            lines.append(f"| – | {trial['number']} | no results | {values} | – | – |")
            continue
        epochs = f"{trial['best_epoch']}/{trial['epochs_run']}"
        minutes = "–" if trial["minutes"] is None else f"{trial['minutes']:.1f}"
        lines.append(
            f"| {trial['rank']}{' (best)' if best else ''} | {trial['number']} | "
            f"{trial['dev_score']:.2f} | {values} | {epochs} | {minutes} |"
        )
    lines.append("")
    if content["best"] is None:
        lines += ["No trial has finished yet.", ""]
    else:
        best = search.best
        lines += [
            f"Best: trial {best.number}, dev {name} {best.objective:.2f} "
            f"({best.directory.as_posix()}). To train it again:",
            "",
            "```bash",
            content["best"]["command"],
            "```",
            "",
        ]
    return [*lines, TEST_WARNING.format(name=name), ""]
