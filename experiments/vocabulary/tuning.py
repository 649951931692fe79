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
``outputs/vocabulary_tuning/<fraction>/<setting>/seed<S>/``; one with a ``results.json`` is
skipped. The summary (every run's dev and test F1, then mean, standard deviation and range over
the seeds per fraction and setting) is written to ``experiments/results/vocabulary/tuning.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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


def train(fraction: float, setting: str, seed: int, budget: list[str]) -> Path:
    """One run (skipped when its results.json exists); its folder."""
    folder = RUNS / str(fraction) / setting / f"seed{seed}"
    if (folder / "results.json").is_file():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    command = [
        "nice", "-n", "5", sys.executable, "-m", "ner.cli.train",
        "experiment=conll2003_glove", *SETTINGS[setting], *budget,
        f"data.train_fraction={fraction}", f"seed={seed}", "trainer.num_threads=1",
        "logger=none", "progress=false", f"hydra.run.dir={folder}",
    ]  # fmt: skip
    started = time.time()
    with open(folder.parent / f"seed{seed}.log", "w") as log:
        subprocess.run(
            command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=True,
            env={**os.environ, "OMP_NUM_THREADS": "1", "WANDB_SILENT": "true"},
        )  # fmt: skip
    print(f"{fraction} {setting} seed{seed}: {time.time() - started:.0f} s", flush=True)
    return folder


def summarise(fractions: list[float], seeds: list[int], budget: dict[float, list[str]]) -> dict:
    """Every finished run's scores and, per fraction and setting, their spread over seeds."""
    runs, table = [], []
    for fraction in fractions:
        for setting in SETTINGS:
            scores = []
            for seed in seeds:
                results_file = RUNS / str(fraction) / setting / f"seed{seed}" / "results.json"
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
        (fraction, setting, seed)
        for seed in args.seeds
        for fraction in epochs
        for setting in args.settings
    ]
    with ThreadPoolExecutor(args.jobs) as pool:
        for future in [pool.submit(train, *item, budget[item[0]]) for item in queue]:
            future.result()
    SUMMARY.parent.mkdir(parents=True, exist_ok=True)
    summary = summarise(list(epochs), args.seeds, budget)
    SUMMARY.write_text(json.dumps(summary, indent=1) + "\n")
    for row in summary["table"]:
        print(
            f"{row['fraction']:>5} {row['setting']:<15} test F1 {row['test_f1_mean']:6.2f} "
            f"± {row['test_f1_std']:.2f} (range {row['test_f1_range']:.2f}; dev "
            f"{row['dev_f1_mean']:.2f})"
        )


if __name__ == "__main__":
    main()
