"""Is one variant better than another? Paired tests on test-set predictions and over seeds.

Sentence level: approximate randomisation (Noreen 1989; the test of Riezler & Maxwell 2005 and of
Dror et al. 2018's NLP guide). Under the null hypothesis that the two systems are exchangeable,
swapping their predictions for any sentence leaves the F1 difference's distribution unchanged; the
p-value is the share of random swaps (each sentence swapped with probability 1/2) whose absolute
span-F1 difference (token-accuracy difference for per-token labels) is at least the observed one,
counted with +1 in numerator and denominator so that it is never 0. Identical systems get p = 1.
Runs of the same seed are paired sentence by sentence; several seeds are tested together (every
(seed, sentence) is one swappable unit).

Seed level: the exact permutation test of the difference of mean test F1 (or accuracy) over every
way of splitting the pooled seed scores into two groups of the original sizes (seeds need not be
paired).
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ner.common.chunks import conlleval_chunks
from ner.reporting.runs import ReportError, Run, metric

PREDICTIONS_FILE = "predictions_test.txt"  # `token gold predicted` per line, written by training
DEFAULT_RESAMPLES = 10_000
SIGNIFICANCE_LEVEL = 0.05  # bold in the tables
MAX_SEED_PERMUTATIONS = 200_000  # exact seed-level test up to this many splits


class PredictionsError(ReportError):
    """A predictions file that cannot be read or paired; the message names the file (and line)."""


@dataclass(frozen=True)
class Predictions:
    """The gold and predicted tags of every sentence of one split, in file order."""

    path: Path
    tokens: list[list[str]]
    gold: list[list[str]]
    predicted: list[list[str]]


def read_predictions(path: Path) -> Predictions:
    """Read a `token gold predicted` file (blank line between sentences), as training writes it.

    The tags are the last two fields and the token everything before them, so a token may hold
    spaces (``New York`` from a tab-separated corpus); lines end at "\\n" only, not at the
    other characters `str.splitlines` breaks at (U+0085, U+2028), which a token may hold too."""
    tokens: list[list[str]] = [[]]
    gold: list[list[str]] = [[]]
    predicted: list[list[str]] = [[]]
    try:
        lines = Path(path).read_bytes().decode("utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as error:
        raise PredictionsError(f"{path}: cannot read it ({error})") from error
    for number, line in enumerate(lines, start=1):
        fields = line.rsplit(maxsplit=2)
        if not fields:
            if tokens[-1]:
                tokens.append([])
                gold.append([])
                predicted.append([])
            continue
        if len(fields) != 3:
            raise PredictionsError(
                f"{path}:{number}: expected 3 fields (token gold predicted), got {len(fields)}"
            )
        tokens[-1].append(fields[0])
        gold[-1].append(fields[1])
        predicted[-1].append(fields[2])
    if not tokens[-1]:
        tokens.pop(), gold.pop(), predicted.pop()
    if not tokens:
        raise PredictionsError(f"{path}: no sentences")
    return Predictions(Path(path), tokens, gold, predicted)


def sentence_counts(
    gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]
) -> np.ndarray:
    """Per sentence: [true positive, predicted, gold] span counts, read like conlleval (as
    `ner.metrics.span_scores` reads them by default): (n_sentences, 3) int64."""
    counts = np.zeros((len(gold), 3), dtype=np.int64)
    for row, (g, p) in enumerate(zip(gold, predicted, strict=True)):
        gold_spans, predicted_spans = set(conlleval_chunks(g)), set(conlleval_chunks(p))
        counts[row] = len(gold_spans & predicted_spans), len(predicted_spans), len(gold_spans)
    return counts


def f1(counts: np.ndarray) -> np.ndarray:
    """Micro span F1 in percent of summed counts (..., 3) → (...); 0 without any span."""
    true_positive, predicted, gold = np.moveaxis(counts, -1, 0)
    total = predicted + gold
    return np.where(total > 0, 200.0 * true_positive / np.maximum(total, 1), 0.0)


def sentence_token_counts(
    gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]
) -> np.ndarray:
    """Per sentence: [correct tokens, tokens], for token accuracy: (n_sentences, 2) int64."""
    counts = np.zeros((len(gold), 2), dtype=np.int64)
    for row, (g, p) in enumerate(zip(gold, predicted, strict=True)):
        counts[row] = sum(a == b for a, b in zip(g, p, strict=True)), len(g)
    return counts


def accuracy(counts: np.ndarray) -> np.ndarray:
    """Token accuracy in percent of summed counts (..., 2) → (...); 0 without any token."""
    correct, tokens = np.moveaxis(counts, -1, 0)
    return np.where(tokens > 0, 100.0 * correct / np.maximum(tokens, 1), 0.0)


# Per metric: the per-sentence counts and the statistic of their sums.
STATISTICS: dict[str, tuple[Callable, Callable[[np.ndarray], np.ndarray]]] = {
    "f1": (sentence_counts, f1),
    "accuracy": (sentence_token_counts, accuracy),
}


def paired_counts(
    a: Predictions, b: Predictions, score: str = "f1"
) -> tuple[np.ndarray, np.ndarray]:
    """Per-sentence counts of two systems on the same split (span counts for ``f1``, token
    counts for ``accuracy``); the gold text must agree."""
    if a.tokens != b.tokens or a.gold != b.gold:
        raise PredictionsError(
            f"{a.path} and {b.path} are not predictions for the same sentences and gold tags"
        )
    counts = STATISTICS[score][0]
    return counts(a.gold, a.predicted), counts(b.gold, b.predicted)


@dataclass(frozen=True)
class PairedTest:
    """Approximate randomisation over sentences: F1 (or accuracy) of both systems, difference,
    p-value."""

    f1_a: float
    f1_b: float
    sentences: int
    resamples: int
    p_value: float

    @property
    def difference(self) -> float:
        return self.f1_a - self.f1_b


def approximate_randomization(
    counts_a: np.ndarray,
    counts_b: np.ndarray,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    statistic: Callable[[np.ndarray], np.ndarray] = f1,
) -> PairedTest:
    """Two-sided test of the difference in `statistic` (span F1 of (n, 3) counts, or `accuracy`
    of (n, 2) counts) of paired per-sentence counts."""
    if counts_a.shape != counts_b.shape:
        raise ValueError(f"unpaired counts: {counts_a.shape} vs {counts_b.shape}")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    total_a, total_b = counts_a.sum(0), counts_b.sum(0)  # (C,)
    observed = abs(float(statistic(total_a) - statistic(total_b)))
    delta = (counts_b - counts_a).astype(np.float64)  # (n, C): what a swap moves from b to a
    rng = np.random.default_rng(seed)
    at_least = 0
    chunk = max(1, 2**22 // max(1, len(delta)))  # bounds the (chunk, n) swap matrix
    for start in range(0, resamples, chunk):
        swaps = rng.random((min(chunk, resamples - start), len(delta))) < 0.5  # (k, n)
        moved = swaps.astype(np.float64) @ delta  # (k, C)
        differences = statistic(total_a + moved) - statistic(total_b - moved)  # (k,)
        # A tolerance so that float noise never ranks an equal difference below the observed one.
        at_least += int(np.count_nonzero(np.abs(differences) >= observed - 1e-9))
    return PairedTest(
        f1_a=float(statistic(total_a)),
        f1_b=float(statistic(total_b)),
        sentences=len(delta),
        resamples=resamples,
        p_value=(at_least + 1) / (resamples + 1),
    )


@dataclass(frozen=True)
class SeedTest:
    """Exact permutation test of mean test F1 over the seeds of two variants."""

    mean_a: float
    mean_b: float
    seeds_a: int
    seeds_b: int
    permutations: int
    p_value: float

    @property
    def difference(self) -> float:
        return self.mean_a - self.mean_b


def seed_permutation_test(scores_a: Sequence[float], scores_b: Sequence[float]) -> SeedTest:
    """Two-sided: the share of splits of the pooled scores whose |mean difference| reaches the
    observed one. All C(n_a + n_b, n_a) splits when there are at most `MAX_SEED_PERMUTATIONS`
    (exact; with few seeds p cannot be small: 2 vs 2 seeds give at least 1/3), else that many
    random ones (counted with +1 like the sentence-level test)."""
    if not scores_a or not scores_b:
        raise ValueError("both variants need at least one seed")
    pooled = np.array([*scores_a, *scores_b], dtype=np.float64)
    size = len(scores_a)
    observed = abs(statistics.fmean(scores_a) - statistics.fmean(scores_b))
    splits = math.comb(len(pooled), size)
    if splits <= MAX_SEED_PERMUTATIONS:
        chosen = np.array(list(itertools.combinations(range(len(pooled)), size)))  # (splits, n_a)
        in_a = np.zeros((splits, len(pooled)), dtype=bool)
        np.put_along_axis(in_a, chosen, True, axis=1)
    else:
        rng = np.random.default_rng(0)
        ranks = rng.random((MAX_SEED_PERMUTATIONS, len(pooled))).argsort(axis=1)
        in_a = ranks < size
    sums = in_a @ pooled  # (k,) each split's sum of group A
    differences = np.abs(sums / size - (pooled.sum() - sums) / (len(pooled) - size))
    at_least = int(np.count_nonzero(differences >= observed - 1e-9))
    exact = splits <= MAX_SEED_PERMUTATIONS
    return SeedTest(
        mean_a=statistics.fmean(scores_a),
        mean_b=statistics.fmean(scores_b),
        seeds_a=len(scores_a),
        seeds_b=len(scores_b),
        permutations=len(in_a),
        p_value=at_least / splits if exact else (at_least + 1) / (len(in_a) + 1),
    )


def compare_variants(
    runs_a: Sequence[Run], runs_b: Sequence[Run], resamples: int = DEFAULT_RESAMPLES
) -> dict[str, Any]:
    """Both tests for two variants of one corpus: the seed-level test on their test F1 (token
    accuracy for per-token labels), and the sentence-level test pooled over the seeds both ran
    that left `predictions_test.txt` (None when no seed has predictions on both sides).
    JSON-ready."""
    score = metric(runs_a[0].results)
    if any(metric(run.results) != score for run in [*runs_a, *runs_b]):
        raise ReportError(
            f"cannot compare runs scored by F1 with runs scored by accuracy: "
            f"{runs_a[0].directory} and {runs_b[0].directory}"
        )
    by_seed_b = {run.seed: run for run in runs_b}
    pairs = [
        (run, by_seed_b[run.seed])
        for run in runs_a
        if run.seed in by_seed_b
        and (run.directory / PREDICTIONS_FILE).is_file()
        and (by_seed_b[run.seed].directory / PREDICTIONS_FILE).is_file()
    ]
    paired = {
        a.seed: paired_counts(
            read_predictions(a.directory / PREDICTIONS_FILE),
            read_predictions(b.directory / PREDICTIONS_FILE),
            score,
        )
        for a, b in pairs
    }
    return compare_scores(
        [run.results["test"][score] for run in runs_a],
        [run.results["test"][score] for run in runs_b],
        paired,
        resamples,
        score,
    )


def compare_scores(
    scores_a: Sequence[float],
    scores_b: Sequence[float],
    paired: dict[int, tuple[np.ndarray, np.ndarray]],
    resamples: int = DEFAULT_RESAMPLES,
    score: str = "f1",
) -> dict[str, Any]:
    """`compare_variants` on numbers: the test F1 (`score` ``accuracy``: token accuracy) of every
    seed of each variant, and, for the seeds paired sentence by sentence, both systems'
    per-sentence counts (`sentence_counts`, or `sentence_token_counts`) keyed by seed.
    ``paired`` is None in the result when no seed is paired. JSON-ready; the differences and
    means are in the units of `score`, named under ``metric``."""
    seed_test = seed_permutation_test(scores_a, scores_b)
    paired_result = None
    if paired:
        seeds = sorted(paired)
        test = approximate_randomization(
            np.concatenate([paired[seed][0] for seed in seeds]),
            np.concatenate([paired[seed][1] for seed in seeds]),
            resamples,
            statistic=STATISTICS[score][1],
        )
        paired_result = {
            "test": "approximate randomisation over sentences (two-sided)",
            "seeds": seeds,
            "sentences": test.sentences,
            "resamples": test.resamples,
            "f1_a": test.f1_a,
            "f1_b": test.f1_b,
            "difference": test.difference,
            "p_value": test.p_value,
        }
    name = "F1" if score == "f1" else score
    return {
        "metric": score,
        "seed_level": {
            "test": f"exact permutation test of mean test {name} (two-sided)",
            "seeds_a": seed_test.seeds_a,
            "seeds_b": seed_test.seeds_b,
            "mean_a": seed_test.mean_a,
            "mean_b": seed_test.mean_b,
            "difference": seed_test.difference,
            "permutations": seed_test.permutations,
            "p_value": seed_test.p_value,
        },
        "paired": paired_result,
    }


def compare_all(
    groups: dict[tuple[str, str], list[Run]], resamples: int = DEFAULT_RESAMPLES
) -> list[dict[str, Any]]:
    """`compare_variants` for every two variants of each corpus (variant names in sorted order)."""
    comparisons = []
    for (corpus, a), (other, b) in itertools.combinations(sorted(groups), 2):
        if corpus == other:
            result = compare_variants(groups[corpus, a], groups[corpus, b], resamples)
            comparisons.append({"corpus": corpus, "variant_a": a, "variant_b": b, **result})
    return comparisons


def _p(value: float) -> str:
    """A p-value for a table, bold when significant at 0.05."""
    text = f"{value:.3g}" if value >= 1e-3 else f"{value:.1e}"
    return f"**{text}**" if value < SIGNIFICANCE_LEVEL else text


def markdown(comparisons: Sequence[dict[str, Any]], corpus: str) -> list[str]:
    """The significance table of one corpus (no lines when it has fewer than two variants)."""
    rows = [c for c in comparisons if c["corpus"] == corpus]
    if not rows:
        return []
    name = "accuracy" if rows[0].get("metric") == "accuracy" else "F1"
    lines = [
        f"Significance (p < {SIGNIFICANCE_LEVEL} in bold): test {name} of A − B; seed level: exact "
        "permutation test over seeds; paired: approximate randomisation over test sentences of "
        "the seeds both ran (resamples in brackets).",
        "",
        "| A | B | seeds A/B | mean A − B | p (seeds) | paired seeds | paired A − B | p (paired) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in rows:
        seed, paired = c["seed_level"], c["paired"]
        paired_cells = (
            ["–", "–", "no predictions_test.txt"]
            if paired is None
            else [
                ", ".join(map(str, paired["seeds"])),
                f"{paired['difference']:+.2f}",
                f"{_p(paired['p_value'])} ({paired['resamples']:,})",
            ]
        )
        lines.append(
            f"| `{c['variant_a']}` | `{c['variant_b']}` | {seed['seeds_a']}/{seed['seeds_b']} | "
            f"{seed['difference']:+.2f} | {_p(seed['p_value'])} | "
            + " | ".join(paired_cells)
            + " |"
        )
    return [*lines, ""]
