"""The learning-curve protocol that `ner-curve` and the study's learning curves
(experiments/study/learning_curve.py) share: the epoch budget of a training fraction, the order of
the runs, the record a finished run leaves (scores and the per-sentence counts of the paired test)
and the pairing of two sets of records by seed.

Fractions are nested subsets of the training split (``data.train_fraction``, picked by
``data.subset_seed``, the same for every seed); dev and test stay whole, so every run of a
corpus is scored on the same test sentences and two runs of one seed can be tested sentence by
sentence.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ner.reporting.runs import ReportError, load_run
from ner.reporting.significance import PREDICTIONS_FILE, read_predictions, sentence_counts

FULL_EPOCHS = 20  # the study's budget at 100%
MOST_EPOCHS_FACTOR = 10  # a fraction gets at most this many times the epochs of the whole set


def budget(fraction: float, full_epochs: int = FULL_EPOCHS) -> dict[str, int]:
    """Epochs, patience and dev-scoring interval of a run on `fraction` of the training set, when
    the whole set gets `full_epochs`.

    Epochs grow as fraction^-0.6 (with 20 at 100%: 46 at 25%, 80 at 10%, 200 at 2%; at most 10×
    the whole set's), so a smaller subset gets fewer updates in all but many more passes;
    patience is a quarter of the epochs; dev is scored every round(0.1 / fraction) epochs (every
    5th at 2%), since on a small subset the dev pass costs more than the epoch.
    """
    epochs = min(MOST_EPOCHS_FACTOR * full_epochs, math.ceil(full_epochs * fraction**-0.6 - 1e-9))
    return {
        "max_epochs": epochs,
        "patience": math.ceil(epochs / 4),
        "eval_every": max(1, round(0.1 / fraction)),
    }


def seed_rounds(
    fractions: Sequence[float], seeds_of: Callable[[float], Sequence[int]]
) -> list[tuple[float, int]]:
    """(fraction, seed) of every run, in rounds: the first seed of every fraction (small fractions
    first), then the second seed of every fraction, and so on, so that a partial curve already
    spans every fraction."""
    rounds: dict[int, list[tuple[float, int]]] = {}
    for fraction in sorted(fractions):
        for number, seed in enumerate(seeds_of(fraction)):
            rounds.setdefault(number, []).append((fraction, seed))
    return [run for number in sorted(rounds) for run in rounds[number]]


def run_record(results_file: Path) -> dict[str, Any]:
    """What a finished run (its ``results.json``) keeps for the curve: test and dev F1, epochs,
    training sentences and, from the ``predictions_test.txt`` beside it, the per-sentence
    [true positive, predicted, gold] span counts the paired test needs, with a digest of the test
    tokens and gold tags to pair them safely (both None without the file)."""
    results = load_run(results_file).results
    if "f1" not in results.get("test", {}):
        raise ReportError(f"{results_file}: no test F1 (a learning curve needs span labels)")
    record = {
        "test_f1": results["test"]["f1"],
        "dev_f1": results["dev"]["f1"],
        "epochs": results["epochs_run"],
        "train_sentences": results["sentences"]["train"],
        "test_gold_sha256": None,
        "test_counts": None,
    }
    predictions_file = results_file.parent / PREDICTIONS_FILE
    if predictions_file.is_file():
        predictions = read_predictions(predictions_file)
        gold = json.dumps([predictions.tokens, predictions.gold], ensure_ascii=False)
        record["test_gold_sha256"] = hashlib.sha256(gold.encode()).hexdigest()
        record["test_counts"] = sentence_counts(predictions.gold, predictions.predicted).tolist()
    return record


def paired_records(
    records_a: dict[int, dict], records_b: dict[int, dict], where: str
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Seed → (counts A, counts B) for the seeds whose records on both sides keep test counts;
    an error naming `where` when a seed's two records were scored on different test data."""
    paired = {}
    for seed, a in records_a.items():
        b = records_b.get(seed)
        if b is None or a["test_counts"] is None or b["test_counts"] is None:
            continue
        if a["test_gold_sha256"] != b["test_gold_sha256"]:
            raise ReportError(f"{where}: seed {seed}'s records were scored on different test data")
        paired[seed] = (np.array(a["test_counts"]), np.array(b["test_counts"]))
    return paired


def mean_and_spread(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value)."""
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return statistics.fmean(values), spread


def mean_text(values: Sequence[float]) -> str:
    """``mean ± std`` with two decimals, or the value alone."""
    mean, spread = mean_and_spread(values)
    return f"{mean:.2f}" if len(values) == 1 else f"{mean:.2f} ± {spread:.2f}"
