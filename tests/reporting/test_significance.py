"""Significance tests in `ner-report`: on prediction files written by the trainer's own writer from
CoNLL-2003 test sentences, the paired test gives p = 1 for identical systems and a small p for a
clearly better one; the seed-level permutation test gives its exact, known p-values."""

import json
import random
from pathlib import Path

import pytest
from test_report import config, write_run  # results.json in the trainer's schema

from ner.cli.report import main
from ner.data import load_corpus
from ner.metrics import span_scores
from ner.model.evaluation import write_predictions
from ner.reporting.significance import (
    PredictionsError,
    approximate_randomization,
    f1,
    paired_counts,
    read_predictions,
    seed_permutation_test,
    sentence_counts,
)

SENTENCES = 300


@pytest.fixture(scope="module")
def gold() -> tuple[list[list[str]], list[list[str]]]:
    """Tokens and IOB2 tags of the first CoNLL-2003 test sentences."""
    test = load_corpus("conll2003")["test"].select(range(SENTENCES))
    names = test.features["tags"].feature.names
    return [list(t) for t in test["tokens"]], [[names[i] for i in tags] for tags in test["tags"]]


def degrade(tags: list[list[str]], share: float, seed: int) -> list[list[str]]:
    """A worse system: every entity tag of a `share` of the sentences becomes O."""
    rng = random.Random(seed)
    return [["O"] * len(sentence) if rng.random() < share else list(sentence) for sentence in tags]


def predictions_file(folder: Path, gold, predicted) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_predictions(folder / "predictions_test.txt", gold[0], gold[1], predicted)
    return folder / "predictions_test.txt"


def test_f1_of_sentence_counts_is_the_report_f1(gold) -> None:
    predicted = degrade(gold[1], 0.3, seed=1)
    counts = sentence_counts(gold[1], predicted)
    assert f1(counts.sum(0)) == pytest.approx(span_scores(gold[1], predicted)["f1"], abs=1e-9)


def test_identical_systems_have_p_one(gold, tmp_path: Path) -> None:
    predicted = degrade(gold[1], 0.2, seed=1)
    a = read_predictions(predictions_file(tmp_path / "a", gold, predicted))
    counts = sentence_counts(a.gold, a.predicted)
    result = approximate_randomization(counts, counts.copy(), resamples=2000)
    assert result.difference == 0 and result.p_value == 1.0


def test_a_clearly_better_system_has_a_small_p(gold) -> None:
    better = sentence_counts(gold[1], degrade(gold[1], 0.05, seed=1))
    worse = sentence_counts(gold[1], degrade(gold[1], 0.4, seed=2))
    result = approximate_randomization(better, worse, resamples=2000)
    assert result.difference > 10 and result.p_value == pytest.approx(1 / 2001)


def test_a_one_sentence_difference_is_not_significant(gold) -> None:
    predicted = [list(s) for s in gold[1]]
    changed = next(i for i, s in enumerate(predicted) if s.count("B-PER") == 1)
    predicted[changed] = ["O"] * len(predicted[changed])
    result = approximate_randomization(
        sentence_counts(gold[1], gold[1]), sentence_counts(gold[1], predicted), resamples=2000
    )
    assert 0 < result.difference < 0.5 and result.p_value > 0.4


def test_seed_permutation_test_is_exact() -> None:
    # 3 vs 3 seeds: 20 splits; only the observed one and its mirror reach |difference| 3.
    separated = seed_permutation_test([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert separated.permutations == 20 and separated.p_value == pytest.approx(2 / 20)
    assert separated.difference == pytest.approx(-3.0)
    assert seed_permutation_test([90.0, 91.0], [90.0, 91.0]).p_value == 1.0


def test_predictions_of_other_sentences_are_refused(gold, tmp_path: Path) -> None:
    a = read_predictions(predictions_file(tmp_path / "a", gold, gold[1]))
    shorter = (gold[0][:-1], gold[1][:-1])
    b = read_predictions(predictions_file(tmp_path / "b", shorter, shorter[1]))
    with pytest.raises(PredictionsError, match="not predictions for the same sentences"):
        paired_counts(a, b)


def test_a_malformed_line_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "predictions_test.txt"
    path.write_text("EU B-ORG B-ORG\nrejects O\n", encoding="utf-8")
    with pytest.raises(PredictionsError, match=r"predictions_test.txt:2: expected 3 fields"):
        read_predictions(path)


def test_tokens_with_spaces_and_line_separators(tmp_path: Path) -> None:
    """Training writes `token gold predicted` lines for whatever tokens the corpus has: a token
    with a space (a tab-separated corpus) or with U+0085/U+2028 (a hub corpus) reads back."""
    tokens = [["New York", "a\u2028b", "c\x85d", "e"], ["Rome"]]
    tags = [["B-LOC", "O", "O", "B-PER"], ["B-LOC"]]
    predicted = [["B-LOC", "O", "B-PER", "O"], ["O"]]
    path = tmp_path / "predictions_test.txt"
    write_predictions(path, tokens, tags, predicted)
    read = read_predictions(path)
    assert (read.tokens, read.gold, read.predicted) == (tokens, tags, predicted)


def test_report_prints_p_values_for_every_two_variants(gold, tmp_path: Path, capsys) -> None:
    root = tmp_path / "runs"
    systems = {"strong": 0.05, "weak": 0.4, "strong_again": 0.05}
    for index, (variant, share) in enumerate(systems.items()):
        for seed in (1, 2, 3):
            predicted = degrade(gold[1], share, seed=100 * index + seed)
            f1_test = span_scores(gold[1], predicted)["f1"]
            folder = write_run(
                root / variant / f"seed{seed}", seed, 90.0, f1_test, config(variant=variant)
            )
            predictions_file(folder, gold, predicted)
    assert main([str(root), "--no-plots", "--resamples", "999"]) == 0
    report = json.loads((root / "report.json").read_text())
    tests = {(c["variant_a"], c["variant_b"]): c for c in report["comparisons"]}
    assert set(tests) == {("strong", "strong_again"), ("strong", "weak"), ("strong_again", "weak")}
    strong_weak = tests["strong", "weak"]
    assert strong_weak["paired"]["seeds"] == [1, 2, 3]
    assert strong_weak["paired"]["sentences"] == 3 * SENTENCES
    assert strong_weak["paired"]["p_value"] == pytest.approx(1 / 1000)
    assert strong_weak["seed_level"]["p_value"] == pytest.approx(0.1)
    # Same share of degraded sentences, different sentences: no real difference.
    assert tests["strong", "strong_again"]["paired"]["p_value"] > 0.05
    table = capsys.readouterr().out
    assert "p (paired)" in table and "**0.001** (999)" in table
