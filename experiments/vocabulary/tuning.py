"""How the GloVe rows should train when the vocabulary comes from the training split alone.

    .venv/bin/python experiments/vocabulary/tuning.py [--epochs 0.02=25 0.05=15] [--seeds 1 2 3]
        [--batch-size 16] [--jobs 2]

Trains GloVe ⊕ char-CNN (``experiment=conll2003_glove``) on nested fractions of the CoNLL-2003
training split (``data.train_fraction``, the learning curve's subsets; dev and test whole), one
thread per run, `--jobs` at a time, with every ``embeddings.glove.tuning`` setting and, as the
reference, the train + dev + test vocabulary (``embeddings.vocabulary=all``, rows fine-tuned).
Every run of a fraction gets the same budget: `--epochs` (per fraction) of `--batch-size`
sentences a batch, dev scored once, after the last epoch (the model scored on test is the last
one; a short budget cannot afford a dev pass per epoch). Runs go to
``outputs/vocabulary_tuning/<fraction>/<setting>/seed<S>/`` through the study's runner
(`ner.training.sweep`): one with a ``results.json`` is skipped, one with a checkpoint
resumes, and stopping the script stops its runs at a checkpoint. The summary (every run's dev
and test F1, then mean, standard deviation and range over the seeds per fraction and setting) is
written to ``experiments/results/vocabulary/tuning.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from ner.common.files import write_json
from ner.training.sweep import launch, run_sweep

ROOT = Path(__file__).resolve().parents[2]

RUNS = ROOT / "outputs" / "vocabulary_tuning"
SUMMARY = ROOT / "experiments" / "results" / "vocabulary" / "tuning.json"
SETTINGS = {
    "fine_tune": ["embeddings.glove.tuning=fine_tune"],
    "frozen": ["embeddings.glove.tuning=frozen"],
    "anchored": ["embeddings.glove.tuning=anchored"],
    "projected": ["embeddings.glove.tuning=projected"],
    "all_vocabulary": ["embeddings.vocabulary=all", "embeddings.glove.tuning=fine_tune"],
}


@dataclass(frozen=True)
class Run:
    """One training run of the study: a fraction of the training split, a setting, a seed."""

    fraction: float
    setting: str
    seed: int
    runs: Path = RUNS

    @property
    def name(self) -> str:
        return f"{self.fraction} {self.setting} seed{self.seed}"

    @property
    def folder(self) -> Path:
        return self.runs / str(self.fraction) / self.setting / f"seed{self.seed}"

    def overrides(self, budget: list[str]) -> list[str]:
        return [
            "experiment=conll2003_glove", *SETTINGS[self.setting], *budget,
            f"data.train_fraction={self.fraction}", f"seed={self.seed}", "trainer.num_threads=1",
            "logger=none", "progress=false",
        ]  # fmt: skip


def summarise(
    runs_folder: Path, fractions: list[float], seeds: list[int], budget: dict[float, list[str]]
) -> dict:
    """Every finished run's scores and, per fraction and setting, their spread over seeds."""
    runs, table = [], []
    for fraction in fractions:
        for setting in SETTINGS:
            scores = []
            for seed in seeds:
                results_file = Run(fraction, setting, seed, runs_folder).folder / "results.json"
                if not results_file.is_file():
                    continue
                results = json.loads(results_file.read_text())
                run = {
                    "fraction": fraction,
                    "setting": setting,
                    "seed": seed,
                    "dev_f1": results["dev"]["f1"],
                    "test_f1": results["test"]["f1"],
                    "epochs": len(results.get("history", [])) or None,
                }
                runs.append(run)
                scores.append(run)
            if scores:
                test = [run["test_f1"] for run in scores]
                dev = [run["dev_f1"] for run in scores]
                table.append(
                    {
                        "fraction": fraction,
                        "setting": setting,
                        "seeds": [run["seed"] for run in scores],
                        "test_f1_mean": statistics.mean(test),
                        "test_f1_std": statistics.stdev(test) if len(test) > 1 else 0.0,
                        "test_f1_range": max(test) - min(test),
                        "dev_f1_mean": statistics.mean(dev),
                    }
                )
    return {
        "experiment": "conll2003_glove",
        "budget": {str(fraction): values for fraction, values in budget.items()},
        "runs": runs,
        "table": table,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", nargs="+", default=["0.02=25", "0.05=15"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=SETTINGS)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--runs", type=Path, default=RUNS, help="the runs' folder")
    parser.add_argument("--out", type=Path, default=SUMMARY, help="the summary's file")
    args = parser.parse_args()
    epochs = {float(f): int(n) for f, n in (item.split("=") for item in args.epochs)}
    budget = {
        fraction: [
            f"trainer.max_epochs={count}",
            f"trainer.eval_every={count}",
            "trainer.patience=null",
            f"data.batch_size={args.batch_size}",
        ]
        for fraction, count in epochs.items()
    }
    queue = [
        run
        for seed in args.seeds
        for fraction in epochs
        for setting in args.settings
        if not ((run := Run(fraction, setting, seed, args.runs)).folder / "results.json").is_file()
    ]
    failed = run_sweep(
        queue,
        jobs=args.jobs,
        start=lambda run: launch(
            run.folder, run.seed, run.overrides(budget[run.fraction]), name=run.name, cwd=ROOT
        ),
        finished=lambda run: (run.folder / "results.json").is_file(),
        on_done=lambda run: None,
    )
    summary = summarise(args.runs, list(epochs), args.seeds, budget)
    write_json(args.out, summary, indent=1)
    for row in summary["table"]:
        print(
            f"{row['fraction']:>5} {row['setting']:<15} test F1 {row['test_f1_mean']:6.2f} "
            f"± {row['test_f1_std']:.2f} (range {row['test_f1_range']:.2f}; dev "
            f"{row['dev_f1_mean']:.2f})"
        )
    if failed:
        sys.exit(f"{len(failed)} run(s) failed: {', '.join(run.name for run in failed)}")


if __name__ == "__main__":
    main()
