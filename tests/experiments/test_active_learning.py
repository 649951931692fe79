"""The active-learning simulation (experiments/study/active_learning.py): its plan and what its
summary says (the CoNLL-2003 runs themselves are recorded in experiments/results/)."""

import importlib.util
import sys

from ner.common.paths import PROJECT_ROOT

RUNNER = PROJECT_ROOT / "experiments" / "study" / "active_learning.py"
spec = importlib.util.spec_from_file_location("active_learning", RUNNER)
active_learning = importlib.util.module_from_spec(spec)
sys.modules["active_learning"] = active_learning  # its dataclass looks its module up there
spec.loader.exec_module(active_learning)
Step = active_learning.Step


def test_the_plan_ranks_between_rounds_and_shares_the_first_round() -> None:
    steps = active_learning.plan(seeds=3, rounds=5)
    trains = [s for s in steps if s.kind == "train"]
    ranks = [s for s in steps if s.kind == "rank"]
    assert len(trains) == 3 + 3 * 2 * 4 and len(ranks) == 3 * 4
    assert {s.strategy for s in trains if s.round == 1} == {"random"}
    assert all(s.strategy == "uncertainty" and s.round < 5 for s in ranks)
    for step in steps:  # a ranking comes after the training it ranks with, before its use
        if step.kind == "train" and step.strategy == "uncertainty":
            assert steps.index(
                Step("rank", "uncertainty", step.seed, step.round - 1)
            ) < steps.index(step)
    last = [s for s in steps if s.strategy == "uncertainty" and s.round == 5]
    assert steps[-len(last) :] == last


def test_epoch_budget_shrinks_with_the_share_and_is_capped() -> None:
    epochs = [active_learning.epoch_budget(r / 100, 0.2, 40) for r in range(1, 6)]
    assert epochs == [40, 40, 33, 28, 25]
    assert active_learning.epoch_budget(0.01, 1.0, 40) == 40


def test_reaches_interpolates_between_rounds() -> None:
    reaches = active_learning.reaches
    assert reaches({1: 50.0, 2: 60.0, 3: 70.0}, 65.0) == 0.025
    assert reaches({1: 50.0, 2: 60.0}, 65.0) is None
    assert reaches({1: 70.0, 2: 60.0}, 65.0) == 0.01


def test_the_table_names_the_share_where_uncertainty_meets_random() -> None:
    grouped = {"random": {1: [50.0, 52.0], 2: [60.0]}, "uncertainty": {1: [50.0, 52.0]}}
    target = {"random_share": 0.02, "random_f1": 60.0, "uncertainty_reaches_at": None}
    text = active_learning.table(grouped, target)
    assert "| 1% | 51.00 ± 1.41 (2) | 51.00 ± 1.41 (2) |" in text
    assert "| 2% | 60.00 (1) | – |" in text
    assert "at 2%: 60.00; uncertainty's mean does not reach it" in text
