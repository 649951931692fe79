"""`ner-curve`'s report (ner.reporting.curve_report) on records of known scores: the points, the
paired tests between neighbouring fractions, the predictions at 2× and 4× the data, the held-out
check, the Markdown, and the refusals."""

import numpy as np
import pytest

from ner.reporting.curve_report import curve_report, markdown
from ner.reporting.extrapolation import PowerLaw
from ner.reporting.runs import ReportError

TRUTH = PowerLaw(a=180.0, b=0.35)
FRACTIONS = {0.125: 250, 0.25: 500, 0.5: 1000, 1.0: 2000}


def records(fractions: dict[float, int] = FRACTIONS, seeds: int = 3) -> list[dict]:
    """Runs on a known law with a little noise; 10 test sentences whose counts give the F1
    roughly (the paired test only needs them to be paired)."""
    rng = np.random.default_rng(3)
    found = []
    for fraction, size in fractions.items():
        for seed in range(1, seeds + 1):
            f1 = float(TRUTH.f1(size) + rng.normal(0, 0.5))
            hits = round(f1 / 10)
            counts = [[1, 1, 1]] * hits + [[0, 1, 1]] * (10 - hits)
            found.append(
                {
                    "fraction": fraction, "seed": seed, "train_sentences": size,
                    "test_f1": f1, "dev_f1": f1, "epochs": 3,
                    "test_gold_sha256": "a" * 64, "test_counts": counts,
                }
            )  # fmt: skip
    return found


def test_the_report_predicts_twice_and_four_times_the_data_near_the_law() -> None:
    report = curve_report(records(), "power", resamples=300)
    assert [p["train_sentences"] for p in report["points"]] == [250, 500, 1000, 2000]
    assert [p["seeds"] for p in report["points"]] == [[1, 2, 3]] * 4
    assert report["train_sentences"] == 2000
    factors = [(p["factor"], p["train_sentences"]) for p in report["predictions"]]
    assert factors == [(1, 2000), (2, 4000), (4, 8000)]
    for prediction in report["predictions"]:
        truth = TRUTH.f1(prediction["train_sentences"])
        assert prediction["low"] < truth < prediction["high"]
        assert abs(prediction["f1"] - truth) < 1.0
    assert report["fit"]["b"] == pytest.approx(0.35, abs=0.05)
    holdout = report["holdout"]
    assert holdout["train_sentences"] == 2000 and abs(holdout["error"]) < 2.0
    assert holdout["predicted_f1"] - holdout["observed_f1"] == pytest.approx(holdout["error"])
    assert not any("test_counts" in run for run in report["runs"])


def test_each_fraction_is_tested_against_the_previous_one_seed_by_seed() -> None:
    report = curve_report(records(), resamples=300)
    pairs = [(t["fraction_a"], t["fraction_b"]) for t in report["tests"]]
    assert pairs == [(0.25, 0.125), (0.5, 0.25), (1.0, 0.5)]
    for test in report["tests"]:
        assert test["paired"]["seeds"] == [1, 2, 3] and test["paired"]["sentences"] == 30
        assert test["seed_level"]["difference"] > 0  # more data, higher F1
    text = markdown(report)
    assert text.startswith("- F1 with your data (2,000 sentences): the runs ")
    assert "- F1 at 2× your data (4,000 sentences): " in text
    assert "| 0.125 | 250 |" in text and "| 1 | 2,000 |" in text
    assert "- Check: fitted without the whole set, the law predicts" in text


def test_a_curve_without_three_fractions_or_the_whole_set_is_refused() -> None:
    with pytest.raises(ReportError, match="here: needs finished runs at 3 fractions or more"):
        curve_report(records({0.5: 1000, 1.0: 2000}), where="here")
    with pytest.raises(ReportError, match=r"1 among them; has \[0.125, 0.25, 0.5\]"):
        curve_report(records({0.125: 250, 0.25: 500, 0.5: 1000}))


def test_runs_scored_on_different_test_data_are_not_paired() -> None:
    found = records()
    found[-1]["test_gold_sha256"] = "b" * 64
    with pytest.raises(ReportError, match=r"here \(fractions 1 and 0.5\): seed 3's records"):
        curve_report(found, resamples=50, where="here")
