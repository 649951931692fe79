"""`ner-curve`'s report: from the records of a learning curve's runs (one per training fraction and
seed, `ner.reporting.learning_curve.run_record`), the points, the paired tests between each
fraction and the next, the power law fitted to them with F1 predicted at 2× and 4× the whole
training set, and the held-out check of that prediction. JSON-ready, and as Markdown."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from ner.reporting.extrapolation import (
    DEFAULT_FORM,
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    extrapolate,
    holdout,
)
from ner.reporting.learning_curve import mean_and_spread, paired_records
from ner.reporting.runs import ReportError
from ner.reporting.significance import SIGNIFICANCE_LEVEL, compare_scores

FACTORS = (2, 4)  # "F1 with 2× and 4× your data"
MIN_FRACTIONS = 3  # the held-out check fits the others: two sizes at least


def points(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per fraction (ascending): training sentences, seeds, mean and std of test F1."""
    found = []
    for fraction in sorted({r["fraction"] for r in records}):
        chosen = [r for r in records if r["fraction"] == fraction]
        mean, spread = mean_and_spread([r["test_f1"] for r in chosen])
        found.append(
            {
                "fraction": fraction,
                "train_sentences": chosen[0]["train_sentences"],
                "seeds": sorted(r["seed"] for r in chosen),
                "mean_f1": mean,
                "std_f1": spread,
            }
        )
    return found


def neighbour_tests(
    records: Sequence[dict[str, Any]], resamples: int, where: str
) -> list[dict[str, Any]]:
    """Does the next fraction still help? For each fraction and the next larger one, the paired
    test over test sentences of the seeds both ran and the seed-level permutation test
    (`ner.reporting.significance.compare_scores`, A = the larger fraction)."""
    by_fraction: dict[float, dict[int, dict]] = {}
    for record in records:
        by_fraction.setdefault(record["fraction"], {})[record["seed"]] = record
    tests = []
    for small, large in itertools.pairwise(sorted(by_fraction)):
        a, b = by_fraction[large], by_fraction[small]
        pairs = paired_records(a, b, f"{where} (fractions {large:g} and {small:g})")
        result = compare_scores(
            [r["test_f1"] for r in a.values()], [r["test_f1"] for r in b.values()], pairs, resamples
        )
        tests.append({"fraction_a": large, "fraction_b": small, **result})
    return tests


def curve_report(
    records: Sequence[dict[str, Any]],
    form: str = DEFAULT_FORM,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    where: str = "the curve",
) -> dict[str, Any]:
    """The whole report of a curve's records (each with fraction, seed, train_sentences, test_f1
    and the counts of `run_record`); the fractions must include 1, the whole training set.

    # Parameters
    records: one per finished run.
    form: the power law's form (`ner.reporting.extrapolation`).
    resamples: of the bootstrap and of the paired tests; level: the interval's coverage.
    where: names the curve in errors (its folder).
    """
    found = points(records)
    if len(found) < MIN_FRACTIONS or found[-1]["fraction"] != 1:
        raise ReportError(
            f"{where}: needs finished runs at {MIN_FRACTIONS} fractions or more, 1 among them; "
            f"has {[p['fraction'] for p in found]}"
        )
    whole = found[-1]["train_sentences"]
    sizes = [r["train_sentences"] for r in records]
    scores = [r["test_f1"] for r in records]
    factors = (1, *FACTORS)
    fitted = extrapolate(sizes, scores, [whole * f for f in factors], form, resamples, level)
    check = holdout(sizes, scores, form, resamples, level)
    return {
        "metric": "f1",
        "form": form,
        "level": level,
        "resamples": resamples,
        "train_sentences": whole,
        "runs": [
            {k: v for k, v in r.items() if not k.startswith("test_") or k == "test_f1"}
            for r in records
        ],
        "points": found,
        "tests": neighbour_tests(records, resamples, where),
        "fit": vars(fitted.law),
        "predictions": [
            {"factor": f, "train_sentences": size, "f1": f1, "low": low, "high": high}
            for f, size, f1, low, high in zip(
                factors, fitted.sizes, fitted.f1, fitted.low, fitted.high, strict=True
            )
        ],
        "holdout": {
            "fraction": found[-1]["fraction"],
            "train_sentences": check.size,
            "observed_f1": check.observed_f1,
            "predicted_f1": check.predicted.f1[0],
            "low": check.predicted.low[0],
            "high": check.predicted.high[0],
            "error": check.error,
            "covered": check.covered,
            "fit": vars(check.predicted.law),
        },
    }


def _p(test: dict[str, Any] | None) -> str:
    if test is None:
        return "–"
    mark = " *" if test["p_value"] < SIGNIFICANCE_LEVEL else ""
    return f"{test['p_value']:.3g}{mark}"


def headline(report: dict[str, Any]) -> list[str]:
    """The answer in words: F1 now (the runs' and the law's), at 2× and 4× the data with the
    interval, and the held-out check."""
    level = f"{report['level']:.0%}"
    now = report["points"][-1]
    lines = []
    for p in report["predictions"]:
        size = f"{p['train_sentences']:,.0f} sentences"
        interval = f"{p['f1']:.1f} ({level} interval {p['low']:.1f}–{p['high']:.1f})"
        if p["factor"] == 1:
            runs = f"{now['mean_f1']:.1f} ± {now['std_f1']:.1f}"
            lines.append(f"F1 with your data ({size}): the runs {runs}, the law {interval}")
        else:
            lines.append(f"F1 at {p['factor']}× your data ({size}): {interval}")
    check = report["holdout"]
    lines.append(
        f"Check: fitted without the whole set, the law predicts {check['predicted_f1']:.1f} "
        f"({check['low']:.1f}–{check['high']:.1f}) at {check['train_sentences']:,.0f} sentences, "
        f"where the runs reached {check['observed_f1']:.1f} (error {check['error']:+.1f} points)"
    )
    return lines


def markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: the headline, then the points and the tests."""
    fit = report["fit"]
    law = f"err(n) = {fit['a']:.4g}·n^−{fit['b']:.3f}"
    if report["form"] == "offset":
        law += f" + {fit['c']:.3g}"
    tests = {t["fraction_a"]: t for t in report["tests"]}
    lines = [
        *(f"- {line}" for line in headline(report)),
        "",
        f"Fitted law ({report['form']}, err = 100 − test F1, n = training sentences): {law}. "
        f"Intervals: {report['resamples']:,} bootstrap resamples of the fit's residuals.",
        "",
        "| fraction | sentences | test F1 (mean ± std) | seeds | gain over the previous | "
        "p (paired) | p (seeds) |",
        "|---|---|---|---|---|---|---|",
    ]
    for point in report["points"]:
        test = tests.get(point["fraction"])
        gain = "–" if test is None else f"{test['seed_level']['difference']:+.2f}"
        seeds = None  # a seed-level p-value needs two seeds a side
        if test is not None and min(test["seed_level"][k] for k in ("seeds_a", "seeds_b")) >= 2:
            seeds = test["seed_level"]
        lines.append(
            f"| {point['fraction']:g} | {point['train_sentences']:,} | "
            f"{point['mean_f1']:.2f} ± {point['std_f1']:.2f} | {len(point['seeds'])} | {gain} | "
            f"{_p(test and test['paired'])} | {_p(seeds)} |"
        )
    lines += [
        "",
        "Gain: mean test F1 of the fraction minus that of the previous one. p (paired): "
        "approximate randomisation over the test sentences of the seeds both ran; p (seeds): "
        f"exact permutation test over the seeds' F1; * marks p < {SIGNIFICANCE_LEVEL}.",
    ]
    return "\n".join(lines) + "\n"
