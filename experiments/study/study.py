"""The CoNLL study: every training run of the plan, run resumably in the background.

    bash experiments/study/study.sh                      # nohup study.py run; log in outputs/study
    .venv/bin/python experiments/study/study.py status   # done / partial / to do, and the budget
    .venv/bin/python experiments/study/study.py commands # the same runs as Hydra multirun commands
    .venv/bin/python experiments/study/study.py time     # epoch times on a subset (budget input)

`run` trains every job of the plan that has no results yet, `--jobs` at a time (one torch
thread each), into ``outputs/study/<corpus>/<variant>/seed<S>/``: a finished run is skipped, a
killed one continues from its ``checkpoints/last.pt`` (``resume=``). Each finished run's
``results.json`` (~10 KB: scores, per-type scores, history, config) is copied to
``experiments/results/study/runs/<corpus>/<variant>/seed<S>/`` and the report is rebuilt from
them (``ner.cli.report``: tables and plots in ``experiments/results/study/report/``, per-corpus
F1 lists in ``experiments/results/study/corpora/``, the table in
``experiments/results/study/RESULTS.md``). The runner only writes files; committing these small
summaries is left to you. Checkpoints, predictions and the ELMo feature cache stay in the
ignored ``outputs/`` and ``data/``.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ner.training.sweep import launch, log, run_state, run_sweep

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import harness

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "experiments" / "results" / "study"
RESULTS_PAGE = RESULTS / "RESULTS.md"
RUNS_DIR = ROOT / "outputs" / "study"
TIMING_FILE = RESULTS / "epoch_timing.json"

# The budget (experiments/results/study/RESULTS.md, "Budget"): epochs and early-stopping
# patience of every run of the plan, chosen so that the study fits ~6 h of a 2-core machine with two
# single-thread jobs at a time. `run --max-epochs/--patience` change them (the report then warns
# about seeds run with different settings).
MAX_EPOCHS = 20
PATIENCE = 5
SHIPPED_ELMO = "small_news"
FULL_SCHEDULE_EPOCHS = 75  # conf/trainer/default.yaml, for the budget estimate of those runs


@dataclass(frozen=True)
class Job:
    """One training run of the plan."""

    experiment: str
    corpus: str
    variant: str
    seed: int
    uses_elmo: bool
    # True: the experiment's own schedule (AllenNLP's 75 epochs, patience 25) instead of the
    # budget's MAX_EPOCHS / PATIENCE; the variant name then says so (e.g. ``glove_75ep``).
    full_schedule: bool = False

    @property
    def name(self) -> str:
        return f"{self.corpus}/{self.variant}/seed{self.seed}"


def _jobs(
    experiment: str, corpus: str, variant: str, seeds: range, elmo: bool, full: bool = False
) -> list[Job]:
    return [Job(experiment, corpus, variant, seed, elmo, full) for seed in seeds]


MAIN = [  # CoNLL-2003, ≥ 3 seeds each; elmo_glove is also the "mix of all layers" choice
    ("conll2003_glove", "conll2003", "glove", False),
    ("conll2003_elmo_glove", "conll2003", "elmo_glove", True),
    ("conll2003_elmo", "conll2003", "elmo", True),
]
LAYERS = [  # ELMo layer choices, ≥ 2 seeds each
    ("conll2003_elmo_glove_top", "conll2003", "elmo_glove_top", True),
    ("conll2003_elmo_glove_average", "conll2003", "elmo_glove_average", True),
    ("conll2003_elmo_glove_layers01", "conll2003", "elmo_glove_layers01", True),
]
OTHER = [  # other corpora, one seed each after the CoNLL-2003 study
    ("conll2002_es_words", "conll2002_es", "words", False),
    ("conll2002_nl_words", "conll2002_nl", "words", False),
    ("conll2000_elmo_glove", "conll2000", "elmo_glove", True),
]
FULL_SCHEDULE = [  # beyond the budget: the two main variants as the main job trains, 3 seeds
    ("conll2003_glove", "conll2003", "glove_75ep", False),
    ("conll2003_elmo_glove", "conll2003", "elmo_glove_75ep", True),
]


def plan() -> list[Job]:
    """All jobs, ordered so that every session adds whole comparisons: seed 1 of the main
    variants first, then seed 2 with the layer choices, then seed 3, then the other corpora,
    then the runs with AllenNLP's full schedule."""
    jobs = []
    for seed in (1, 2, 3):
        for spec in MAIN:
            jobs += _jobs(*spec[:3], range(seed, seed + 1), spec[3])
        if seed >= 2:
            for spec in LAYERS:
                jobs += _jobs(*spec[:3], range(seed - 1, seed), spec[3])
    for spec in OTHER:
        jobs += _jobs(*spec[:3], range(1, 2), spec[3])
    for spec in FULL_SCHEDULE:
        jobs += _jobs(*spec[:3], range(1, 4), spec[3], full=True)
    return jobs


def overrides(
    job: Job, elmo: str, extra: list[str], epochs: int = MAX_EPOCHS, patience: int = PATIENCE
) -> list[str]:
    """The `ner.cli.train` overrides of a job (without its run dir)."""
    values = [f"experiment={job.experiment}", f"seed={job.seed}"]
    if job.full_schedule:
        values.append(f"variant={job.variant}")
    else:
        values += [f"trainer.max_epochs={epochs}", f"trainer.patience={patience}"]
    values += [
        "trainer.num_threads=1",
        "logger=none",
        "progress=false",
    ]
    if "glove" in job.experiment:  # as the recorded runs (before the setting existed)
        values.append("embeddings.glove.tuning=fine_tune")
    if job.uses_elmo:
        values.append(f"elmo={elmo}")
    return values + extra


def run_dir(runs_dir: Path, job: Job) -> Path:
    return runs_dir / job.corpus / job.variant / f"seed{job.seed}"


def job_state(runs_dir: Path, job: Job) -> str:
    """``done`` (results.json), ``published`` (no run dir here, but its summary is in
    experiments/results/study/runs/: it ran on an earlier machine), ``partial`` (a checkpoint to
    resume) or ``todo``."""
    state = run_state(run_dir(runs_dir, job))
    if state != "done" and runs_dir == RUNS_DIR and summary_path(RESULTS, job).is_file():
        return "published"
    return state


FINISHED = ("done", "published")


def start(job: Job, runs_dir: Path, args: argparse.Namespace) -> subprocess.Popen:
    """Launch (or resume) one job as a child process."""
    values = overrides(job, args.elmo, args.set, args.max_epochs, args.patience)
    return launch(run_dir(runs_dir, job), job.seed, values, name=job.name, cwd=ROOT)


def features_pending(runs_dir: Path, job: Job, running: dict[Job, subprocess.Popen]) -> bool:
    """Whether another running job of the same corpus may still be building the ELMo feature
    cache (it has no checkpoint yet): then `job` waits instead of building it a second time."""
    return any(
        other.uses_elmo
        and other.corpus == job.corpus
        and not (run_dir(runs_dir, other) / "checkpoints" / "last.pt").is_file()
        for other in running
    )


def summary_path(results_dir: Path, job: Job) -> Path:
    return results_dir / "runs" / job.corpus / job.variant / f"seed{job.seed}" / "results.json"


def publish(job: Job, runs_dir: Path, results_dir: Path) -> None:
    """Copy the run's results.json into ``<results_dir>/runs/`` and rebuild the report there
    (and the table of the results page for the real results dir)."""
    from ner.cli.report import main as report
    from ner.reporting.runs import BILM_SHA256, Run, bilm_weights_sha256

    directory = run_dir(runs_dir, job)
    results = json.loads((directory / "results.json").read_text())
    # The weights file of a preset can change (a retrained biLM): record which weights ran.
    results[BILM_SHA256] = bilm_weights_sha256(
        Run(directory, job.corpus, job.variant, job.seed, results)
    )
    target = summary_path(results_dir, job)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(results, indent=1) + "\n")
    report_args = [str(results_dir / "runs"), "--out", str(results_dir / "report")]
    report_args += ["--study-json", str(results_dir / "corpora")]
    if results_dir == RESULTS:
        report_args += ["--insert-into", str(RESULTS_PAGE)]
    with open(os.devnull, "w") as quiet:
        stdout, sys.stdout = sys.stdout, quiet
        try:
            status = report(report_args)
        finally:
            sys.stdout = stdout
    if status != 0:
        log(f"ner.cli.report failed (status {status}); {job.name} is saved in {target}")
    log(
        f"published {job.name}: test F1 {results['test']['f1']:.2f} "
        f"(dev {results['dev']['f1']:.2f}, best epoch {results['best_epoch']}) in {target}"
    )


def run(args: argparse.Namespace) -> int:
    """Train the plan's unfinished jobs, `args.jobs` at a time, publishing each as it ends."""
    official = not args.set and args.runs_dir == RUNS_DIR
    results_dir = RESULTS if official else args.runs_dir / "results"
    if not official:
        log(f"--set or --runs-dir given: summaries go to {results_dir}")
    jobs = [j for j in plan() if args.only is None or any(p in j.name for p in args.only)]
    for job in jobs:  # finished before a previous session could publish them
        if job_state(args.runs_dir, job) == "done" and not summary_path(results_dir, job).is_file():
            publish(job, args.runs_dir, results_dir)
    queue = [j for j in jobs if job_state(args.runs_dir, j) not in FINISHED]
    if any(job.uses_elmo for job in queue):
        check_elmo_preset(args.elmo)
    log(f"{len(queue)} job(s) to run of {len(jobs)}; {args.jobs} at a time")
    failed = run_sweep(
        queue,
        jobs=args.jobs,
        start=lambda job: start(job, args.runs_dir, args),
        finished=lambda job: job_state(args.runs_dir, job) == "done",
        on_done=lambda job: publish(job, args.runs_dir, results_dir),
        ready=lambda job, running: (
            not (job.uses_elmo and features_pending(args.runs_dir, job, running))
        ),
        poll=args.poll,
        max_minutes=args.max_minutes,
    )
    log(f"finished; {len(failed)} failed: {', '.join(j.name for j in failed) or 'none'}")
    return 1 if failed else 0


def check_elmo_preset(name: str) -> None:
    """Exit with a clear message when the preset or its local biLM files are missing (every
    ELMo job would fail on them); URLs are left to the download code."""
    from omegaconf import OmegaConf

    import ner.training.config  # noqa: F401  (registers the ${shipped_bilm:} resolver)

    path = ROOT / "conf" / "elmo" / f"{name}.yaml"
    if not path.is_file():
        sys.exit(f"study: no ELMo preset {path}")
    preset = OmegaConf.load(path)
    for key in ("options_file", "weight_file"):
        value = str(preset[key])
        if "://" not in value and not Path(value).is_file():
            sys.exit(f"study: {path.name} {key} {value} does not exist (is the biLM shipped?)")


def timing(args: argparse.Namespace) -> int:
    """Time `--epochs` epochs of each `--variants` on `--sentences` sentences per split (0: the
    whole corpus) and extrapolate one full-corpus epoch (train + dev evaluation) and the ELMo
    cache build; the record goes to `--output`."""
    from omegaconf import OmegaConf

    from ner.data import load_corpus

    corpus = load_corpus("conll2003")
    full = {split: sum(map(len, corpus[split]["tokens"])) for split in corpus}
    extra = [f"data.max_sentences={args.sentences or 'null'}", f"trainer.max_epochs={args.epochs}"]
    import ner.training.config  # noqa: F401  (registers the ${shipped_bilm:} resolver)

    elmo_preset = OmegaConf.load(ROOT / "conf" / "elmo" / f"{args.elmo}.yaml")
    bilm_note = f"conf/elmo/{args.elmo}.yaml"
    if not Path(elmo_preset.weight_file).is_file():
        extra += random_bilm(elmo_preset)
        bilm_note += " shape, random weights (the trained weights were not there yet)"
    measured = {}
    for variant in args.variants:
        job = Job(f"conll2003_{variant}", "conll2003", variant, 1, "elmo" in variant)
        directory = args.runs_dir.with_name(args.runs_dir.name + "-timing") / variant
        command = [sys.executable, "-m", "ner.cli.train", *overrides(job, args.elmo, extra)]
        command.append(f"hydra.run.dir={directory}")
        log(f"timing {variant}: {shlex.join(command[3:])}")
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)
        results = json.loads((directory / "results.json").read_text())
        seconds, tokens = results["time_seconds"], results["tokens"]
        train_rate = results["train_tokens_per_second"]
        dev_rate = (
            tokens["validation"] * results["epochs_run"] / seconds["dev_eval_during_training"]
        )
        measured[variant] = {
            "subset_sentences": args.sentences,
            "epochs": results["epochs_run"],
            "train_tokens_per_second": train_rate,
            "dev_tokens_per_second": dev_rate,
            "full_epoch_minutes": (full["train"] / train_rate + full["validation"] / dev_rate) / 60,
            "elmo_cache_minutes_full": seconds["elmo_features"]
            * sum(full.values())
            / sum(tokens.values())
            / 60
            if job.uses_elmo
            else 0.0,
        }
        log(f"{variant}: {json.dumps(measured[variant])}")
    load = os.getloadavg()[0]
    record = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": harness.machine(),
        "load_average_1min_at_end": load,
        "bilm": bilm_note,
        "command": "experiments/study/study.py time " + shlex.join(sys.argv[2:]),
        "full_tokens": full,
        "variants": measured,
    }
    args.output.write_text(json.dumps(record, indent=1) + "\n")
    log(f"written {args.output}")
    return 0


def random_bilm(preset) -> list[str]:
    """Options + random weights of the preset's shape in a temp folder (same compute as the
    trained model), as ``elmo.options_file=`` / ``elmo.weight_file=`` overrides."""
    options = json.loads(Path(preset.options_file).read_text())
    folder = Path(tempfile.mkdtemp(prefix="study-timing-bilm-"))
    options_file, weights = harness.random_bilm(options, folder)
    return [f"elmo.options_file={options_file}", f"elmo.weight_file={weights}"]


def budget_lines(runs_dir: Path, epochs: int) -> list[str]:
    """Job-hours left (every unfinished run going to `epochs`, CoNLL-2003-sized epochs), at the
    measured rate and at the rate a job would have with a core to itself (the measured rate
    scaled by load / 2: a one-thread job on 2 cores gets about 2 / load of a core)."""
    if not TIMING_FILE.is_file():
        return ["no timing yet: run `experiments/study/study.py time`"]
    timing_record = json.loads(TIMING_FILE.read_text())
    measured = timing_record["variants"]
    share = min(1.0, 2.0 / max(timing_record["load_average_1min_at_end"], 1e-9))
    load = timing_record["load_average_1min_at_end"]
    glove, elmo = (measured[v]["full_epoch_minutes"] for v in ("glove", "elmo_glove"))
    lines = [
        f"timing {timing_record['date']} at load {load:.1f} (one job ≈ {share:.2f} of a core): "
        f"a full epoch takes {glove:.1f} (glove) / {elmo:.1f} (elmo_glove) minutes"
    ]
    parts = {
        "CoNLL-2003 study": lambda j: j.corpus == "conll2003" and not j.full_schedule,
        "other corpora": lambda j: j.corpus != "conll2003",
        "AllenNLP's schedule": lambda j: j.full_schedule,
    }
    for title, belongs in parts.items():
        jobs = [j for j in plan() if belongs(j)]
        job_epochs = FULL_SCHEDULE_EPOCHS if title == "AllenNLP's schedule" else epochs
        minutes = 0.0
        for job in jobs:
            rate = measured["elmo_glove" if job.uses_elmo else "glove"]
            if job_state(runs_dir, job) not in FINISHED:
                minutes += job_epochs * rate["full_epoch_minutes"]
        caches = {j.corpus for j in jobs if j.uses_elmo and job_state(runs_dir, j) == "todo"}
        minutes += len(caches) * measured["elmo_glove"]["elmo_cache_minutes_full"]
        hours = minutes / 60
        lines.append(
            f"{title}: {len(jobs)} runs, ≤ {hours:.1f} job-hours left at {job_epochs} epochs: "
            f"{hours / 2:.1f} h with 2 jobs at that load, {hours * share / 2:.1f} h on free cores"
        )
    return lines


def status(args: argparse.Namespace) -> int:
    for job in plan():
        state = job_state(args.runs_dir, job)
        detail = ""
        if state in FINISHED:
            folder = run_dir(args.runs_dir, job)
            path = folder / "results.json" if state == "done" else summary_path(RESULTS, job)
            results = json.loads(path.read_text())
            detail = f"test F1 {results['test']['f1']:.2f}, {results['epochs_run']} epochs"
        print(f"{state:8} {job.name:40} {detail}")
    print("\n".join(budget_lines(args.runs_dir, args.max_epochs)))
    return 0


def commands(args: argparse.Namespace) -> int:
    """The plan as Hydra multirun commands (e.g. for a cluster: add hydra/launcher=slurm)."""
    groups: dict[Job, list[int]] = {}
    for job in plan():
        groups.setdefault(Job(**{**vars(job), "seed": 0}), []).append(job.seed)
    for job, seeds in groups.items():
        values = [v for v in overrides(job, args.elmo, []) if not v.startswith("seed=")]
        seed_list = ",".join(map(str, sorted(seeds)))
        print(f".venv/bin/python -m ner.cli.train -m {' '.join(values)} seed={seed_list} \\")
        print(f"    hydra.sweep.dir=multirun/study/{job.corpus}/{job.variant} hydra/launcher=local")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["run", "status", "commands", "time"])
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time (1 thread each)")
    parser.add_argument("--elmo", default=SHIPPED_ELMO, help="conf/elmo preset of ELMo runs")
    parser.add_argument("--only", nargs="+", help="jobs whose name contains one of these")
    parser.add_argument("--max-minutes", type=float, help="start no job after this long")
    parser.add_argument("--runs-dir", type=Path, default=RUNS_DIR)
    parser.add_argument(
        "--set", nargs="*", default=[], help="extra ner.cli.train overrides (own results dir)"
    )
    parser.add_argument("--max-epochs", type=int, default=MAX_EPOCHS, help="per run")
    parser.add_argument("--patience", type=int, default=PATIENCE, help="early stopping")
    parser.add_argument("--poll", type=float, default=10.0, help="seconds between checks")
    parser.add_argument("--sentences", type=int, default=2000, help="time: per split; 0 = all")
    parser.add_argument("--variants", nargs="+", default=["glove", "elmo_glove"], help="time")
    parser.add_argument("--output", type=Path, default=TIMING_FILE, help="time: record file")
    parser.add_argument("--epochs", type=int, default=1, help="time: epochs")
    args = parser.parse_args()
    return {"run": run, "status": status, "commands": commands, "time": timing}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
