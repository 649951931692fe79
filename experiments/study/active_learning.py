"""Active learning on CoNLL-2003: uncertainty sampling against random selection.

    nice -n 10 .venv/bin/python experiments/study/active_learning.py run [--jobs 1]
    .venv/bin/python experiments/study/active_learning.py status
    .venv/bin/python experiments/study/active_learning.py collect   # JSON and table only

Every seed starts from the same 1% of the training sentences (the first of an order fixed by the
seed, `ner.data.subsets.seeded_order`) and adds 1% a round, up to `--rounds` percent: ``random``
takes the next sentences of that order; ``uncertainty`` takes the `ner-predict --rank
uncertainty --distinct --budget N` choice of the last round's model over the sentences not yet
labelled (the pool, one tokenized sentence a line, ranked with one thread). Each round trains a
GloVe ⊕ char-CNN tagger (``experiment=conll2003_glove``) from scratch on the labelled sentences
(written as a CoNLL folder with the first `--dev-sentences` dev sentences and the whole test
split), for `--epoch-share` of the learning curve's epoch budget (`learning_curve.budget`: 40
epochs at 1% and 2%, 25 at 5% by default) capped at `--max-epochs`, Adam at `--lr` (the short
budget needs a larger step than the default 0.001), dev scored once at the end, one torch
thread, into ``outputs/active_learning/<strategy>/seed<S>/round<R>/``. A finished step is
skipped and a killed training resumes from its checkpoint, so rerunning the command continues.

Each finished run leaves a small record in ``experiments/results/active_learning_runs/``
(``<strategy>/seed<S>/round<R>.json``); `collect` writes
``experiments/results/active_learning.json``
(the runs and, per strategy, the mean test F1 by labelled share) and ``active_learning.md``: the
table and the smallest share at which uncertainty's mean reaches random's at the last round
(linear between rounds).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ner.reporting.learning_curve import budget
from ner.training.sweep import launch, log, run_state, run_sweep

ROOT = Path(__file__).resolve().parents[2]
RUNS_DIR = ROOT / "outputs" / "active_learning"
RESULTS = ROOT / "experiments" / "results"
STRATEGIES = ("random", "uncertainty")
STEP = 0.01  # the share of the training sentences labelled at first and added each round


@dataclass(frozen=True)
class Step:
    """One step of the simulation: train a round's tagger, or rank the pool with it."""

    kind: str  # "train" or "rank"
    strategy: str
    seed: int
    round: int

    @property
    def name(self) -> str:
        return f"{self.kind} {self.strategy}/seed{self.seed}/round{self.round}"


class Simulation:
    """The folders, the corpus and the labelled sets of one simulation."""

    def __init__(self, runs_dir: Path, records_dir: Path, args: argparse.Namespace) -> None:
        from ner.data import prepare_corpus
        from ner.tagger.dataset import read_splits

        self.runs_dir, self.records_dir, self.args = runs_dir, records_dir, args
        corpus, _ = prepare_corpus("conll2003")
        self.splits = read_splits(corpus, None)
        self.count = len(self.splits["train"].tokens)
        self.step_size = max(1, round(self.count * STEP))

    def folder(self, strategy: str, seed: int, round_: int) -> Path:
        """A round's run folder; the first round is random's for both strategies."""
        strategy = "random" if round_ == 1 else strategy
        return self.runs_dir / strategy / f"seed{seed}" / f"round{round_}"

    def record(self, strategy: str, seed: int, round_: int) -> Path:
        return self.records_dir / strategy / f"seed{seed}" / f"round{round_}.json"

    def ranking(self, seed: int, round_: int) -> Path:
        """The ranked pool after `round_` (the next round's choice): ``ner-predict``'s jsonl."""
        return self.folder("uncertainty", seed, round_) / "ranked.jsonl"

    def labelled(self, strategy: str, seed: int, round_: int) -> list[int]:
        """The training sentences (corpus indices) labelled in a round, in the order added."""
        from ner.data.subsets import seeded_order

        if strategy == "random" or round_ == 1:
            return seeded_order(self.count, seed, "active_learning")[: round_ * self.step_size]
        before = self.labelled(strategy, seed, round_ - 1)
        pool = self.pool(before)
        with self.ranking(seed, round_ - 1).open(encoding="utf-8") as ranked:
            chosen = [pool[json.loads(line)["line"] - 1] for line in ranked]
        return before + chosen

    def pool(self, labelled: list[int]) -> list[int]:
        """The sentences not labelled, in corpus order (line i of the pool file is pool[i-1])."""
        taken = set(labelled)
        return [i for i in range(self.count) if i not in taken]

    def write_data(self, folder: Path, indices: list[int]) -> None:
        """A CoNLL folder: the labelled training sentences, the whole dev and test splits."""
        folder.mkdir(parents=True, exist_ok=True)
        for split, name, chosen in (
            ("train", "train", indices),
            ("dev", "validation", range(self.args.dev_sentences)),
            ("test", "test", range(len(self.splits["test"].tokens))),
        ):
            source = self.splits[name]
            blocks = [
                "".join(f"{t} {g}\n" for t, g in zip(source.tokens[i], source.tags[i], strict=True))
                for i in chosen
            ]
            (folder / f"{split}.txt").write_text("\n".join(blocks), encoding="utf-8")

    def state(self, step: Step) -> str:
        if step.kind == "rank":
            return "done" if self.ranking(step.seed, step.round).is_file() else "todo"
        folder = self.folder(step.strategy, step.seed, step.round)
        return run_state(folder, self.record(step.strategy, step.seed, step.round).is_file())

    def ready(self, step: Step) -> bool:
        """A step waits for the ranking that picks its sentences, or the model it ranks with."""
        if step.kind == "rank":
            trained = Step("train", "uncertainty", step.seed, step.round)
            return self.state(trained) == "done"
        if step.strategy == "random" or step.round == 1:
            return True
        return self.state(Step("rank", "uncertainty", step.seed, step.round - 1)) == "done"

    def start(self, step: Step) -> subprocess.Popen:
        if step.kind == "rank":
            return self.start_ranking(step)
        folder = self.folder(step.strategy, step.seed, step.round)
        data = folder.parent / f"round{step.round}_data"
        self.write_data(data, self.labelled(step.strategy, step.seed, step.round))
        epochs = epoch_budget(step.round * STEP, self.args.epoch_share, self.args.max_epochs)
        values = [
            f"trainer.max_epochs={epochs}",
            f"trainer.patience={epochs}",
            f"trainer.eval_every={epochs}",  # dev is scored once, after the last epoch
            f"trainer.optimizer.lr={self.args.lr}",
            "experiment=conll2003_glove",
            f"data.name={data}",
            f"variant=al_{step.strategy}",
            f"seed={step.seed}",
            "trainer.num_threads=1",
            "logger=none",
            "progress=false",
        ]
        return launch(folder, step.seed, values, name=step.name)

    def start_ranking(self, step: Step) -> subprocess.Popen:
        """``ner-predict --rank`` over the pool left after the step's round."""
        folder = self.folder("uncertainty", step.seed, step.round)
        pool = self.pool(self.labelled("uncertainty", step.seed, step.round))
        pool_file = folder / "pool.txt"
        tokens = self.splits["train"].tokens
        pool_file.write_text("".join(" ".join(tokens[i]) + "\n" for i in pool), encoding="utf-8")
        command = [
            str(Path(sys.executable).parent / "ner-predict"),
            str(folder / "model"),
            str(pool_file),
            "--input-format=tokens",
            "--rank=uncertainty",
            f"--budget={self.step_size}",
            "--distinct",
            "--threads=1",
            f"--output={self.ranking(step.seed, step.round)}",
        ]
        log(f"start {step.name}")
        output = (folder / "rank.log").open("a")
        return subprocess.Popen(command, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)

    def archive(self, step: Step) -> None:
        """Keep a finished training's scores as its record (once)."""
        from ner.common.files import write_text
        from ner.reporting.runs import load_run

        results_file = self.folder(step.strategy, step.seed, step.round) / "results.json"
        target = self.record(step.strategy, step.seed, step.round)
        if step.kind != "train" or target.is_file() or not results_file.is_file():
            return
        results = load_run(results_file).results
        record = {
            "strategy": step.strategy,
            "seed": step.seed,
            "round": step.round,
            "share": round(step.round * STEP, 4),
            "train_sentences": results["sentences"]["train"],
            "test_f1": results["test"]["f1"],
            "dev_f1": results["dev"]["f1"],
            "epochs": results["epochs_run"],
        }
        write_text(target, json.dumps(record, separators=(",", ":")) + "\n")


def epoch_budget(share: float, scale: float, cap: int) -> int:
    """Epochs of a run on `share` of the training sentences: `scale` × the learning curve's
    (`learning_curve.budget`: more passes over a smaller set), at most `cap`."""
    return min(cap, math.ceil(scale * budget(share)["max_epochs"]))


def plan(seeds: int, rounds: int) -> list[Step]:
    """Every step, round by round, so that a partial simulation already compares the two;
    uncertainty's last round comes last (its target is random's last round, met earlier)."""
    steps = []
    for round_ in range(1, rounds + 1):
        for seed in range(1, seeds + 1):
            if round_ > 1:
                steps += [Step("train", strategy, seed, round_) for strategy in STRATEGIES]
            else:
                steps.append(Step("train", "random", seed, 1))
            if round_ < rounds:
                steps.append(Step("rank", "uncertainty", seed, round_))
    last = [step for step in steps if step.strategy == "uncertainty" and step.round == rounds]
    return [step for step in steps if step not in last] + last


def records(simulation: Simulation, steps: list[Step]) -> list[dict]:
    """The records of the finished trainings (the first round counts for both strategies)."""
    found = []
    for step in steps:
        if step.kind != "train":
            continue
        path = simulation.record(step.strategy, step.seed, step.round)
        if path.is_file():
            record = json.loads(path.read_text(encoding="utf-8"))
            chosen = STRATEGIES if step.round == 1 else (step.strategy,)
            found += [{**record, "strategy": strategy} for strategy in chosen]
    return found


def means(runs: list[dict]) -> dict[str, dict[int, list[float]]]:
    """Strategy → round → the seeds' test F1."""
    grouped: dict[str, dict[int, list[float]]] = {}
    for run in runs:
        grouped.setdefault(run["strategy"], {}).setdefault(run["round"], []).append(run["test_f1"])
    return grouped


def reaches(curve: dict[int, float], target: float) -> float | None:
    """The smallest share (linear between rounds) at which a mean curve reaches `target`."""
    points = sorted(curve.items())
    for (r0, f0), (r1, f1) in zip([(0, -1.0), *points], points, strict=False):
        if f1 >= target:
            if r0 == 0 or f0 >= target:
                return r1 * STEP
            return (r0 + (target - f0) / (f1 - f0) * (r1 - r0)) * STEP
    return None


def collect(simulation: Simulation, steps: list[Step], out: Path) -> dict:
    """active_learning.json and .md from the records."""
    for step in steps:
        simulation.archive(step)
    runs = records(simulation, steps)
    grouped = means(runs)
    curves = {s: {r: statistics.fmean(v) for r, v in c.items()} for s, c in grouped.items()}
    summary = {"runs": runs, "mean_test_f1": curves, "target": None}
    random_curve = curves.get("random", {})
    if random_curve and "uncertainty" in curves:
        last = max(random_curve)
        target = random_curve[last]
        summary["target"] = {
            "random_share": last * STEP,
            "random_f1": target,
            "uncertainty_reaches_at": reaches(curves["uncertainty"], target),
        }
    out.mkdir(parents=True, exist_ok=True)
    (out / "active_learning.json").write_text(json.dumps(summary, indent=1) + "\n")
    (out / "active_learning.md").write_text(table(grouped, summary["target"]))
    return summary


def table(grouped: dict[str, dict[int, list[float]]], target: dict | None) -> str:
    """Markdown: test F1 (mean ± std over seeds, their number) per labelled share."""
    lines = [
        "| labelled | " + " | ".join(f"`{s}` test F1" for s in STRATEGIES) + " |",
        "|---|---|---|",
    ]
    for round_ in sorted({r for curve in grouped.values() for r in curve}):
        cells = []
        for strategy in STRATEGIES:
            values = grouped.get(strategy, {}).get(round_, [])
            spread = f" ± {statistics.stdev(values):.2f}" if len(values) > 1 else ""
            cells.append(
                f"{statistics.fmean(values):.2f}{spread} ({len(values)})" if values else "–"
            )
        lines.append(f"| {round_ * STEP:.0%} | " + " | ".join(cells) + " |")
    if target is not None:
        at = target["uncertainty_reaches_at"]
        reached = "does not reach it" if at is None else f"reaches it at {at:.1%}"
        lines += [
            "",
            f"Random selection's mean test F1 at {target['random_share']:.0%}: "
            f"{target['random_f1']:.2f}; uncertainty's mean {reached} (linear between rounds).",
        ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("run", "status", "collect"))
    parser.add_argument("--jobs", type=int, default=1, help="steps at a time (1 thread each)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5, help="the last round labels this many %%")
    parser.add_argument(
        "--epoch-share", type=float, default=0.2, help="of the learning curve's epoch budget"
    )
    parser.add_argument("--max-epochs", type=int, default=40, help="cap on the epoch budget")
    parser.add_argument("--lr", type=float, default=0.005, help="Adam's learning rate")
    parser.add_argument(
        "--dev-sentences", type=int, default=500, help="the first N dev sentences (scored once)"
    )
    parser.add_argument("--runs-dir", type=Path, default=RUNS_DIR)
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the JSON and MD go")
    parser.add_argument("--poll", type=float, default=10.0, help="seconds between checks")
    args = parser.parse_args()
    simulation = Simulation(args.runs_dir, args.out / "active_learning_runs", args)
    steps = plan(args.seeds, args.rounds)
    if args.command == "status":
        for step in steps:
            print(f"{simulation.state(step):8} {step.name}")
        return 0
    if args.command == "run":
        queue = [step for step in steps if simulation.state(step) != "done"]
        log(f"{len(queue)} step(s) to do of {len(steps)}")
        failed = run_sweep(
            queue,
            jobs=args.jobs,
            start=simulation.start,
            finished=lambda step: simulation.state(step) == "done",
            on_done=lambda _step: collect(simulation, steps, args.out),
            ready=lambda step, _running: simulation.ready(step),
            poll=args.poll,
        )
    collect(simulation, steps, args.out)
    return 1 if args.command == "run" and failed else 0


if __name__ == "__main__":
    sys.exit(main())
