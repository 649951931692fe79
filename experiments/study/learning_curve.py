"""Learning curves on CoNLL-2003: where does the biLM help, by training-set size?

    .venv/bin/python experiments/study/learning_curve.py run --new-bilm BILM_DIR [--jobs 2]
        [--old-bilm OLD_DIR]   # once BILM_DIR has replaced the shipped biLM
    .venv/bin/python experiments/study/learning_curve.py status
    .venv/bin/python experiments/study/learning_curve.py collect   # JSON, table and plot only
    # the same comparison on CoNLL-2000 chunking, whole training set:
    .venv/bin/python experiments/study/learning_curve.py run --corpus conll2000 --fractions 1 ...

`run` trains, for every training fraction (`data.train_fraction`: nested subsets picked by
`data.subset_seed`, the same for every variant and seed; dev and test whole) × variant × seed,
with the epoch budget of `budget`, one `ner.cli.train` run into
``outputs/learning_curve/<corpus>/<fraction>/<variant>/seed<S>/``, `--jobs` at a time with one
torch thread each. A run with a ``results.json`` is skipped; a killed one resumes from its
checkpoint. The variants: ``glove`` (GloVe ⊕ char-CNN), ``elmo_glove_old`` (⊕ the biLM in
`--old-bilm`, by default the one shipped in the package) and ``elmo_glove_new`` (⊕ the biLM
exported to `--new-bilm`: options.json + weights.hdf5; left out without it); ``--bilm NAME=DIR``
adds ``elmo_glove_NAME`` for one more biLM (repeatable), ``--adapt`` adds ``elmo_glove_task``
(the old biLM adapted to each run's training sentences, ``elmo.adapt=task``),
``--adapt-lr-scale S`` the same as ``elmo_glove_task_lr<S>`` with the biLM at S times the
adaptation's learning rate (``elmo.adapt_lr_scale``; repeatable) and ``--adapt-text TEXT``
``elmo_glove_domain``, adapted on TEXT too (``elmo.adapt=domain``: a file or a named
pretraining source such as ``reuters``; repeatable). Seeds:
`SEEDS_SMALL` at fractions up to 10%, `SEEDS_LARGE` above.

Every finished run leaves a record in ``experiments/results/learning_curve_runs/`` (``<stem>_runs``
for another corpus), ``<fraction>/<variant>/seed<S>.json``: its scores and the per-sentence test
span counts the paired test needs. The records are small and committed; a run with a record is
done, so the study goes on after its run folders are lost (a run folder without test predictions
leaves ``test_counts: null``, and such a run joins the seed-level test only).

`collect` (also run after every finished run) writes, from the records,
``experiments/results/learning_curve.json`` (``learning_curve_<corpus>.json`` etc. for a corpus
other than CoNLL-2003): ``runs`` ({fraction, variant, seed, test_f1, dev_f1, epochs}) and
``tests`` (for every fraction and two variants, the paired approximate-randomisation test over
test sentences of the seeds both ran with counts, and the seed-level permutation test, from
`ner.reporting.significance`; ``p_value`` is the paired one), plus ``learning_curve.md`` (mean ±
std, significant differences marked) and ``learning_curve.png`` (test F1 against training
sentences).

The old biLM of the study is the first shipped one; its folder is recreated from git with
``git show 044ab7b:ner/pretrained/elmo-small-news/weights.hdf5 > OLD_DIR/weights.hdf5`` (and the
same for options.json).
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ner.reporting.learning_curve import (
    budget,
    mean_and_spread,
    mean_text,
    paired_records,
    run_record,
    seed_rounds,
)
from ner.training.sweep import launch, log, run_state, run_sweep

ROOT = Path(__file__).resolve().parents[2]
RUNS_DIR = ROOT / "outputs" / "learning_curve"
RESULTS = ROOT / "experiments" / "results"
FRACTIONS = (0.02, 0.05, 0.1, 0.25, 0.5, 1.0)
SEEDS_SMALL = (1, 2, 3, 4, 5)  # fractions <= 10%: small subsets vary more
SEEDS_LARGE = (1, 2, 3)
# At 100% the study's budget (experiments/study/study.py): 20 epochs, patience 5. A subset has
# fewer batches per epoch, so it gets more epochs (2% of CoNLL-2003 is 5 batches an epoch: 20
# epochs are 100 updates, and dev F1 was still 0 after 10 epochs): `budget`, whose default
# whole-set budget is the study's.


@dataclass(frozen=True)
class Run:
    """One training run of the learning curve."""

    fraction: float
    variant: str
    seed: int

    def directory(self, runs_dir: Path) -> Path:
        return runs_dir / f"{self.fraction:g}" / self.variant / f"seed{self.seed}"

    def record(self, records_dir: Path) -> Path:
        """Its record once finished: scores and per-sentence test counts, kept in the repo."""
        return self.directory(records_dir).with_suffix(".json")

    @property
    def name(self) -> str:
        return f"{self.fraction:g}/{self.variant}/seed{self.seed}"


def bilm_overrides(name: str, folder: Path) -> list[str]:
    """`ner.cli.train` overrides that run the biLM exported to `folder` (options.json +
    weights.hdf5) under `name` (the feature cache is keyed by the weights' sha256)."""
    return [
        "elmo=small_news",
        f"elmo.name={name}",
        f"elmo.options_file={folder.resolve() / 'options.json'}",
        f"elmo.weight_file={folder.resolve() / 'weights.hdf5'}",
    ]


def variants(
    new_bilm: Path | None,
    old_bilm: Path | None = None,
    corpus: str = "conll2003",
    more: dict[str, Path] | None = None,
    adapt: bool = False,
    adapt_lr_scales: Sequence[float] = (),
    adapt_texts: Sequence[str] = (),
) -> dict[str, list[str]]:
    """Variant name → its `ner.cli.train` overrides (the experiments `<corpus>_glove` and
    `<corpus>_elmo_glove`). `old_bilm`: the folder of the earlier biLM (default: the one shipped
    in the package, `elmo=small_news`), needed once a newer biLM has replaced it there; `more`:
    further biLMs by name, each the variant ``elmo_glove_<name>``; `adapt`: the variant
    ``elmo_glove_task``, the shipped biLM adapted to each run's training sentences
    (``elmo.adapt=task``, its defaults); `adapt_lr_scales`: for each scale S the variant
    ``elmo_glove_task_lr<S>``, adapted with ``elmo.adapt_lr_scale=S``; `adapt_texts` (files or
    named pretraining sources): the variant ``elmo_glove_domain``, adapted on them and the
    training sentences (``elmo.adapt=domain``)."""
    old = ["elmo=small_news"] if old_bilm is None else bilm_overrides("old", old_bilm)
    found = {
        "glove": [f"experiment={corpus}_glove"],
        "elmo_glove_old": [f"experiment={corpus}_elmo_glove", *old],
    }
    bilms = {"new": new_bilm} if new_bilm is not None else {}
    for name, folder in {**bilms, **(more or {})}.items():
        found[f"elmo_glove_{name}"] = [
            f"experiment={corpus}_elmo_glove",
            *bilm_overrides(name, folder),
        ]
    task = [f"experiment={corpus}_elmo_glove", *old, "elmo.adapt=task"]
    if adapt:
        found["elmo_glove_task"] = task
    for scale in adapt_lr_scales:
        found[f"elmo_glove_task_lr{scale:g}"] = [*task, f"elmo.adapt_lr_scale={scale}"]
    if adapt_texts:
        texts = f"elmo.adapt_text=[{','.join(adapt_texts)}]"
        found["elmo_glove_domain"] = [*task[:-1], "elmo.adapt=domain", texts]
    return found


def named_folder(text: str) -> tuple[str, Path]:
    """``NAME=DIR`` of `--bilm` → (NAME, DIR)."""
    name, separator, folder = text.partition("=")
    if not separator or not name.isidentifier() or name in ("new", "old"):
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected NAME=DIR with NAME a word other than new or old"
        )
    return name, Path(folder)


def result_stem(corpus: str) -> str:
    """File name (without suffix) of a corpus's results: CoNLL-2003's is the plain one."""
    return "learning_curve" if corpus == "conll2003" else f"learning_curve_{corpus}"


def plan(
    names: list[str], fractions: tuple[float, ...] = FRACTIONS, seeds: int | None = None
) -> list[Run]:
    """Every run, in rounds (`seed_rounds`), every variant of a (fraction, seed) together."""

    def seeds_of(fraction: float) -> tuple[int, ...]:
        return (SEEDS_SMALL if fraction <= 0.1 else SEEDS_LARGE)[:seeds]

    return [
        Run(fraction, variant, seed)
        for fraction, seed in seed_rounds(fractions, seeds_of)
        for variant in names
    ]


def overrides(run: Run, variant_overrides: list[str], extra: list[str]) -> list[str]:
    return [
        *variant_overrides,
        f"variant={run.variant}",
        f"seed={run.seed}",
        f"data.train_fraction={run.fraction}",
        *(f"trainer.{key}={value}" for key, value in budget(run.fraction).items()),
        "trainer.num_threads=1",
        "embeddings.glove.tuning=fine_tune",  # as the recorded runs (before the setting existed)
        "logger=none",
        "progress=false",
        *extra,
    ]


def state(run: Run, runs_dir: Path, records_dir: Path) -> str:
    """``done`` (a record, or a results.json), ``partial`` (a checkpoint) or ``todo``."""
    return run_state(run.directory(runs_dir), run.record(records_dir).is_file())


def train(runs: list[Run], runs_dir: Path, options: dict[str, list[str]], args) -> int:
    """Run the unfinished runs, `args.jobs` at a time; collect after each; 1 if any failed."""
    queue = [run for run in runs if state(run, runs_dir, args.records) != "done"]
    log(f"{len(queue)} run(s) to do of {len(runs)}")

    def start(run: Run) -> subprocess.Popen:
        values = overrides(run, options[run.variant], args.set)
        return launch(run.directory(runs_dir), run.seed, values, name=run.name)

    failed = run_sweep(
        queue,
        jobs=args.jobs,
        start=start,
        finished=lambda run: state(run, runs_dir, args.records) == "done",
        on_done=lambda _run: collect(runs, runs_dir, args.records, args.out, args.stem),
        poll=args.poll,
    )
    return 1 if failed else 0


def archive(run: Run, runs_dir: Path, records_dir: Path) -> None:
    """Keep a finished run's record (`run_record`, with its fraction, variant and seed) in
    `records_dir` (once). The records are small and committed, so the study survives the loss
    of its run folders."""
    from ner.common.files import write_text

    results_file = run.directory(runs_dir) / "results.json"
    if run.record(records_dir).is_file() or not results_file.is_file():
        return
    record = {
        "fraction": run.fraction,
        "variant": run.variant,
        "seed": run.seed,
        **run_record(results_file),
    }
    write_text(run.record(records_dir), json.dumps(record, separators=(",", ":")) + "\n")


def collect(
    runs: list[Run], runs_dir: Path, records_dir: Path, out: Path, stem: str = "learning_curve"
) -> dict:
    """<stem>.json, .md and .png from the records of the plan's finished runs (archived first)."""
    from ner.reporting.significance import compare_scores

    for run in runs:
        archive(run, runs_dir, records_dir)
    finished = {
        run: json.loads(run.record(records_dir).read_text(encoding="utf-8"))
        for run in runs
        if run.record(records_dir).is_file()
    }
    records = [
        {
            key: value
            for key, value in record.items()
            if not key.startswith("test_") or key == "test_f1"
        }
        for record in finished.values()
    ]
    tests = []
    for fraction in sorted({run.fraction for run in finished}):
        groups: dict[str, dict[int, dict]] = {}
        for run, record in finished.items():
            if run.fraction == fraction:
                groups.setdefault(run.variant, {})[run.seed] = record
        for a, b in itertools.combinations(sorted(groups), 2):
            where = f"{records_dir / f'{fraction:g}'} ({a} vs {b})"
            result = compare_scores(
                [record["test_f1"] for record in groups[a].values()],
                [record["test_f1"] for record in groups[b].values()],
                paired_records(groups[a], groups[b], where),
                resamples=10_000,
            )
            paired = result["paired"]
            tests.append(
                {
                    "fraction": fraction,
                    "variant_a": a,
                    "variant_b": b,
                    "p_value": None if paired is None else paired["p_value"],
                    **result,
                }
            )
    content = {"runs": records, "tests": tests}
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(content, indent=1) + "\n")
    (out / f"{stem}.md").write_text(table(records, tests))
    if records:
        plot(records, out / f"{stem}.png")
    return content


def table(records: list[dict], tests: list[dict]) -> str:
    """Markdown: test F1 (mean ± std, seeds) per fraction and variant, then the tests."""
    names = sorted({r["variant"] for r in records})
    lines = [
        "| fraction | " + " | ".join(f"`{n}` test F1" for n in names) + " |",
        "|---" * (len(names) + 1) + "|",
    ]
    for fraction in sorted({r["fraction"] for r in records}):
        cells = []
        for name in names:
            values = [
                r["test_f1"] for r in records if r["fraction"] == fraction and r["variant"] == name
            ]
            cells.append(f"{mean_text(values)} ({len(values)})" if values else "–")
        lines.append(f"| {fraction:.0%} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Mean ± std of test F1 over seeds (number of seeds). Paired tests over test sentences "
        "(approximate randomisation, 10,000 resamples) of the seeds both variants ran whose "
        "records keep per-sentence counts (their number in brackets); * marks p < 0.05. The "
        "seed-level test needs 2 seeds a side (–: fewer).",
        "",
        "| fraction | A | B | mean A − B | p (paired) | p (seeds) |",
        "|---|---|---|---|---|---|",
    ]
    for test in tests:
        seed = test["seed_level"]
        paired = "–"
        if test["paired"] is not None:
            mark = " *" if test["p_value"] < 0.05 else ""
            paired = f"{test['p_value']:.4f}{mark} ({len(test['paired']['seeds'])})"
        seeds = f"{seed['p_value']:.3f}" if min(seed["seeds_a"], seed["seeds_b"]) >= 2 else "–"
        lines.append(
            f"| {test['fraction']:.0%} | `{test['variant_a']}` | `{test['variant_b']}` | "
            f"{seed['difference']:+.2f} | {paired} | {seeds} |"
        )
    return "\n".join(lines) + "\n"


def plot(records: list[dict], path: Path) -> None:
    """Test F1 (mean ± std over seeds) against the number of training sentences, per variant."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.5, 4.2))
    for name in sorted({r["variant"] for r in records}):
        points = []
        for fraction in sorted({r["fraction"] for r in records if r["variant"] == name}):
            chosen = [r for r in records if r["variant"] == name and r["fraction"] == fraction]
            values = [r["test_f1"] for r in chosen]
            points.append((chosen[0]["train_sentences"], *mean_and_spread(values)))
        sizes, means, spreads = zip(*points, strict=True)
        axis.errorbar(sizes, means, yerr=spreads, marker="o", capsize=3, label=name)
    axis.set_xscale("log")
    axis.set_xlabel("training sentences (log scale)")
    axis.set_ylabel("test F1 (mean ± std over seeds)")
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("run", "status", "collect"))
    parser.add_argument("--new-bilm", type=Path, help="folder of the new biLM's options/weights")
    parser.add_argument(
        "--old-bilm", type=Path, help="folder of the old biLM (default: the shipped one)"
    )
    parser.add_argument(
        "--bilm",
        type=named_folder,
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="one more biLM (options/weights folder), as the variant elmo_glove_NAME",
    )
    parser.add_argument(
        "--adapt", action="store_true", help="add elmo_glove_task: the old biLM, elmo.adapt=task"
    )
    parser.add_argument(
        "--adapt-lr-scale",
        type=float,
        action="append",
        default=[],
        metavar="S",
        help="add elmo_glove_task_lr<S>: as elmo_glove_task, elmo.adapt_lr_scale=S",
    )
    parser.add_argument(
        "--adapt-text",
        action="append",
        default=[],
        metavar="TEXT",
        help="add elmo_glove_domain: the old biLM, elmo.adapt=domain on TEXT (a file of one "
        "sentence per line or a named pretraining source such as reuters; repeatable)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time (1 thread each)")
    parser.add_argument(
        "--corpus", default="conll2003", help="runs experiment=<corpus>_glove / _elmo_glove"
    )
    parser.add_argument("--runs-dir", type=Path, help="default: outputs/learning_curve/<corpus>")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the JSON/MD/PNG go")
    parser.add_argument("--fractions", type=float, nargs="+", default=list(FRACTIONS))
    parser.add_argument("--variants", nargs="+", help="a subset of the variants")
    parser.add_argument("--seeds", type=int, help="only the first N seeds of each fraction")
    parser.add_argument("--set", nargs="*", default=[], help="extra overrides for every run")
    parser.add_argument("--poll", type=float, default=10.0, help="seconds between checks")
    args = parser.parse_args()
    more = dict(args.bilm)
    flags = [("--new-bilm", args.new_bilm), ("--old-bilm", args.old_bilm)]
    for flag, folder in [*flags, *(("--bilm", folder) for folder in more.values())]:
        # status and collect read the records alone: the biLM folders only name the variants
        if args.command == "run" and folder is not None and not (folder / "weights.hdf5").is_file():
            parser.error(f"{flag} {folder}: no weights.hdf5 there")
    options = variants(
        *(args.new_bilm, args.old_bilm, args.corpus, more),
        *(args.adapt, args.adapt_lr_scale, args.adapt_text),
    )
    args.runs_dir = args.runs_dir or RUNS_DIR / args.corpus
    args.stem = result_stem(args.corpus)
    args.records = args.out / f"{args.stem}_runs"
    names = args.variants or list(options)
    unknown = sorted(set(names) - set(options))
    if unknown:
        parser.error(
            f"unknown variant(s) {unknown}; have {sorted(options)}"
            " (with --new-bilm, --bilm, --adapt, --adapt-lr-scale, --adapt-text)"
        )
    runs = plan(names, tuple(args.fractions), args.seeds)
    if args.command == "status":
        for run in runs:
            print(f"{state(run, args.runs_dir, args.records):8} {run.name}")
        return 0
    if args.command == "collect":
        collect(runs, args.runs_dir, args.records, args.out, args.stem)
        return 0
    status = train(runs, args.runs_dir, options, args)
    collect(runs, args.runs_dir, args.records, args.out, args.stem)
    return status


if __name__ == "__main__":
    sys.exit(main())
