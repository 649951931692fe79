"""How long does a training epoch take, and how much memory does training need?

    # the main job's epoch with the biLM feature cache against rerunning the biLM per batch
    .venv/bin/python experiments/bench/train.py --experiment conll2003_elmo_glove \\
        --sentences 2000 --epochs 2 --compare elmo.cache=true elmo.cache=false \\
        --out experiments/results/bench/train_elmo_cache.json
    # peak memory of a whole-corpus GloVe-only epoch (and of the main job's: conll2003_elmo_glove)
    .venv/bin/python experiments/bench/train.py --experiment conll2003_glove \\
        --out experiments/results/bench/train_memory_glove.json
    # against an older version of the code (git worktree add --detach OLD_TREE <commit>)
    .venv/bin/python experiments/bench/train.py --old OLD_TREE --sentences 1000 --rounds 2

Each measurement is a fresh ``python -m ner.cli.train`` process (``logger=none``, seed 1,
``--epochs`` epochs without early stopping, ``--threads`` threads, the first ``--sentences``
sentences of each split, or all) run from the tree measured. It reports, from the run's
``results.json``, the seconds per epoch of training and of dev scoring, training tokens/s and the
time spent computing biLM features (building the feature cache, or nothing when it is found), and,
from the operating system, the process's peak resident memory (its maximum resident set size)
and CPU time. ``--bilm small|medium|original`` runs the ELMo experiments with an untrained biLM of
a published ELMo shape (speed does not depend on the weights), ``--bilm DIR`` with another biLM
folder. The set-ups (``--old`` and this checkout × the ``--compare`` overrides) take turns round
by round; the per-round ratios to the first set-up are the figures to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
import tempfile
from pathlib import Path

from harness import (
    REPO,
    alternate,
    bilm_files,
    bilm_folder,
    median,
    paired_ratios,
    run_measured,
    tree_label,
    write_record,
)

FIGURES = ("epoch_seconds", "train_seconds_per_epoch", "train_tokens_per_second", "peak_rss_mb")


def measure(tree: Path, overrides: list[str], run_dir: Path, threads: int) -> dict:
    """One ``ner.cli.train`` process in `tree` with `overrides`; its timings and peak memory."""
    command = [sys.executable, "-m", "ner.cli.train", *overrides, f"hydra.run.dir={run_dir}"]
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": str(threads)}
    env.setdefault("WANDB_SILENT", "true")
    done = run_measured(command, cwd=tree, env=env)
    if done["returncode"]:
        raise RuntimeError(f"{shlex.join(command)} in {tree}:\n{done['stderr'][-3000:]}")
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    seconds, epochs = results["time_seconds"], results["epochs_run"]
    train = seconds["train"] / epochs
    dev = seconds.get("dev_eval_during_training", 0.0) / epochs
    return {
        "epochs": epochs,
        "epoch_seconds": round(train + dev, 2),
        "train_seconds_per_epoch": round(train, 2),
        "dev_seconds_per_epoch": round(dev, 2),
        "elmo_features_seconds": round(seconds.get("elmo_features", 0.0), 2),
        "train_tokens_per_second": round(results["train_tokens_per_second"], 1),
        "total_seconds": round(seconds["total"], 2),
        "peak_rss_mb": round(done["peak_rss_mb"]),
        "cpu_seconds": round(done["cpu_seconds"], 1),
        "dev_f1_last": results["history"][-1].get("dev/f1") if results.get("history") else None,
        "sentences": results["sentences"],
    }


def parser() -> argparse.ArgumentParser:
    found = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    found.add_argument("--experiment", default="conll2003_elmo_glove")
    found.add_argument(
        "--sentences", type=int, help="first N sentences of each split (default all)"
    )
    found.add_argument("--epochs", type=int, default=1)
    found.add_argument("--threads", type=int, default=1)
    found.add_argument("--bilm", help="small | medium | original | DIR: the ELMo runs' biLM")
    found.add_argument("--compare", nargs="+", default=[], help="one set-up per override")
    found.add_argument("--old", type=Path, help="a checkout of the code to compare with")
    found.add_argument("--new", type=Path, default=REPO, help="the checkout measured (default .)")
    found.add_argument("--rounds", type=int, default=1)
    found.add_argument("--set", nargs="*", default=[], help="more ner.cli.train overrides")
    found.add_argument("--out", type=Path, help="write the record here")
    return found


def main() -> None:
    args = parser().parse_args()
    trees = {"new": args.new.resolve()}
    if args.old is not None:
        trees = {"old": args.old.resolve(), **trees}
    setups = {
        (side if not compared else f"{side} {compared}"): (tree, [compared] if compared else [])
        for side, tree in trees.items()
        for compared in (args.compare or [None])
    }
    names = list(setups)
    with tempfile.TemporaryDirectory() as folder:
        workdir = Path(folder)
        common = [
            f"experiment={args.experiment}",
            "seed=1",
            "logger=none",
            "progress=false",
            f"trainer.max_epochs={args.epochs}",
            f"trainer.patience={args.epochs + 1}",
            f"trainer.num_threads={args.threads}",
        ]
        if args.sentences:
            common.append(f"data.max_sentences={args.sentences}")
        if args.bilm:
            options, weights = bilm_files(bilm_folder(args.bilm, workdir).resolve())
            common += [
                f"elmo.name=bench-{Path(args.bilm).name}",
                f"elmo.options_file={options}",
                f"elmo.weight_file={weights}",
            ]
        common += args.set

        def run(name: str, number: int) -> dict:
            tree, extra = setups[name]
            run_dir = workdir / f"{re.sub(r'[^A-Za-z0-9.-]', '_', name)}-{number}"
            return measure(tree, [*common, *extra], run_dir, args.threads)

        measured = alternate(names, args.rounds, run)
    base = names[0]
    figures = {
        "overrides": common,
        "setups": {
            name: {"tree": tree_label(tree), "overrides": extra}
            for name, (tree, extra) in setups.items()
        },
        "runs": measured,
        "median": {
            n: {k: median(r[k] for r in runs) for k in FIGURES} for n, runs in measured.items()
        },
        f"paired_ratios_over_{base}": {k: paired_ratios(measured, base, k) for k in FIGURES},
    }
    write_record(args.out, figures)


if __name__ == "__main__":
    sys.exit(main())
