"""`ner-report` on per-token runs (results.json with ``accuracy``): mean ± std of accuracy, the
per-label table, and both significance tests computed on token accuracy."""

import json
import random
from pathlib import Path

import numpy as np
import pytest

from ner.cli.report import main
from ner.reporting.runs import corpus_name
from ner.reporting.significance import (
    accuracy,
    approximate_randomization,
    read_predictions,
    sentence_token_counts,
)

LABELS = ("DT", "NN", "VBZ", ".")


def token_scores(value: float) -> dict:
    per_label = {
        label: {"precision": value, "recall": value, "f1": value - i, "support": 10}
        for i, label in enumerate(LABELS)
    }
    return {"accuracy": value, "correct": 0, "support": 40, "per_label": per_label,
            "confusions": []}  # fmt: skip


def gold_sentences(count: int = 60) -> list[list[str]]:
    rng = random.Random(0)
    return [[rng.choice(LABELS) for _ in range(rng.randint(2, 9))] for _ in range(count)]


def write_token_run(folder: Path, variant: str, seed: int, dev: float, test: float, wrong: float):
    """A per-token results.json and a predictions_test.txt whose predictions miss a share
    `wrong` of the tokens (the same gold sentences for every run)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed * 100 + len(variant))
    lines = []
    for index, sentence in enumerate(gold_sentences()):
        for position, label in enumerate(sentence):
            predicted = "NN" if label != "NN" and rng.random() < wrong else label
            lines.append(f"w{index}_{position} {label} {predicted}")
        lines.append("")
    (folder / "predictions_test.txt").write_text("\n".join(lines) + "\n")
    history = [{"epoch": e, "dev/accuracy": dev - 2 + e, "train/loss_per_token": 1.0 / e}
               for e in (1, 2)]  # fmt: skip
    results = {
        "dev": token_scores(dev), "test": token_scores(test), "best_epoch": 2, "epochs_run": 2,
        "stopped_early": False, "seed": seed, "corpus_scheme": "tokens",
        "model_scheme": "tokens", "labels": "tokens", "metric": "accuracy",
        "time_seconds": {"total": 60.0}, "history": history,
        "elmo_mix": {"layers": [0, 1, 2], "weights": [0.2, 0.5, 0.3], "gamma": 1.0}
        if "elmo" in variant else {},
        "config": {"data": {"name": "ptb_sample", "options": {}}, "variant": variant,
                   "seed": seed, "trainer": {"max_epochs": 2}},
    }  # fmt: skip
    (folder / "results.json").write_text(json.dumps(results))


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    for seed, (glove, elmo) in enumerate([(95.0, 96.0), (95.5, 96.4), (95.2, 96.1)], start=1):
        write_token_run(root / "glove" / f"seed{seed}", "glove", seed, 94.0, glove, 0.3)
        write_token_run(root / "elmo" / f"seed{seed}", "elmo_glove", seed, 95.0, elmo, 0.05)
    return root


def test_report_aggregates_accuracy_and_tests_it(runs, tmp_path, capsys):
    out = tmp_path / "report"
    assert main([str(runs), "--out", str(out), "--study-json", str(out), "--resamples",
                 "2000"]) == 0  # fmt: skip
    report = json.loads((out / "report.json").read_text())
    groups = {g["variant"]: g for g in report["groups"]}
    assert groups["glove"]["metric"] == "accuracy"
    assert groups["glove"]["test_accuracy"]["mean"] == pytest.approx(95.2333333)
    assert groups["elmo_glove"]["per_type_test_f1"]["NN"]["mean"] == pytest.approx(95.1666666)
    assert groups["glove"]["dev_accuracy_per_epoch"][0] == [93.0, 94.0]
    (comparison,) = report["comparisons"]
    assert comparison["metric"] == "accuracy"
    assert comparison["seed_level"]["mean_a"] == pytest.approx(96.1666666)  # elmo_glove
    # Paired on token accuracy recomputed from the predictions: 5% against 30% wrong.
    paired = comparison["paired"]
    assert paired["seeds"] == [1, 2, 3] and paired["f1_a"] > paired["f1_b"] + 10
    assert paired["p_value"] < 0.01
    text = (out / "report.md").read_text()
    assert "| variant | seeds | dev accuracy | test accuracy | best epoch" in text
    assert "Test F1 per label:" in text and "test accuracy of A − B" in text
    assert (out / "plots" / "dev_accuracy_ptb_sample.png").is_file()
    study = json.loads((out / "ptb_sample.json").read_text())
    assert study["variants"]["glove"]["test_accuracy"] == [95.0, 95.5, 95.2]


def test_token_counts_give_the_accuracy(runs):
    predictions = read_predictions(runs / "glove" / "seed1" / "predictions_test.txt")
    counts = sentence_token_counts(predictions.gold, predictions.predicted)
    tokens = sum(map(len, predictions.gold))
    correct = sum(g == p for gs, ps in zip(predictions.gold, predictions.predicted, strict=True)
                  for g, p in zip(gs, ps, strict=True))  # fmt: skip
    assert counts.sum(0).tolist() == [correct, tokens]
    assert float(accuracy(counts.sum(0))) == pytest.approx(100 * correct / tokens)
    same = approximate_randomization(counts, counts, 500, statistic=accuracy)
    assert same.p_value == 1.0 and same.difference == 0
    assert accuracy(np.zeros(2, dtype=np.int64)) == 0.0


def test_a_label_column_names_its_own_corpus():
    config = {"data": {"name": "conll2000", "options": {"label_column": "pos"}}}
    assert corpus_name(config) == "conll2000-pos"
    assert corpus_name({"data": {"name": "conll2000", "options": {}}}) == "conll2000"
