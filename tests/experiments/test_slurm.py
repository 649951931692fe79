"""Sweeps and searches through ``hydra/launcher=slurm`` (hydra_plugins/ner_launcher) on a real
SLURM cluster (scripts/slurm_test_cluster.sh): each sweep point is a SLURM job with its own run
folder, a cancelled or timed-out job is a failed run or trial and the finished ones are kept, and
a submission SLURM refuses ends the sweep with one line naming the setting to change."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import optuna
import pytest
from test_study import write_tiny_corpus

from hydra_plugins.ner_launcher._jobs import refusal
from ner.common.paths import PROJECT_ROOT

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "WANDB_SILENT": "true"}
# A tiny tagger (seconds per job) and jobs of one CPU each, so two run side by side.
TINY = [
    "experiment=quickstart", "elmo=fixture", "model.hidden_size=8", "model.num_layers=1",
    "embeddings.char.filters=8", "trainer.num_threads=1", "logger=none", "progress=false",
    "hydra/launcher=slurm", "hydra.launcher.cpus_per_task=1", "hydra.launcher.mem_gb=1",
]  # fmt: skip


def train_command(tmp_path: Path, *overrides: str) -> list[str]:
    """``ner-train -m`` on the tiny corpus into tmp_path/sweep."""
    corpus = tmp_path / "tiny"
    if not corpus.exists():
        write_tiny_corpus(corpus)
    return [
        sys.executable, "-m", "ner.cli.train", "-m", *TINY, f"data.name={corpus}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}", *overrides,
    ]  # fmt: skip


def ner_train(
    tmp_path: Path, *overrides: str, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run `train_command` from the repository (in an editable install Hydra finds this
    checkout's plugins through the working directory)."""
    return subprocess.run(
        train_command(tmp_path, *overrides), cwd=PROJECT_ROOT, env=env or ENV,
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def ner_report(folder: Path) -> dict:
    result = subprocess.run(
        [sys.executable, "-m", "ner.cli.report", str(folder), "--no-plots"],
        cwd=PROJECT_ROOT, env=ENV, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads((folder / "report.json").read_text())


def test_sbatch_refusals_name_the_setting_to_change():
    said = "sbatch: error: invalid partition specified: gpu\nsbatch: error: Batch job submission"
    assert "hydra.launcher.partition" in refusal(said + " failed: Invalid partition name specified")
    said = "sbatch: error: Batch job submission failed: Requested time limit is invalid (missing"
    assert "hydra.launcher.timeout_min" in refusal(said + " or exceeds some limit)")
    said = "sbatch: error: Batch job submission failed: Unable to contact slurm controller"
    assert "SLURM_CONF" in refusal(said)
    assert "(sbatch: error: no idea): check hydra.launcher.*" in refusal("sbatch: error: no idea")


def test_a_sweep_without_sbatch_says_so_in_one_line(tmp_path):
    bare = tmp_path / "bin"  # a PATH with Python but without SLURM's commands
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    result = ner_train(tmp_path, "seed=1", env={**ENV, "PATH": str(bare)})
    assert result.returncode != 0 and "Traceback" not in result.stderr
    [line] = [line for line in result.stderr.splitlines() if "not on PATH" in line]
    assert "sbatch, srun, sacct not on PATH" in line and "hydra/launcher=local" in line


@pytest.mark.slurm
def test_a_seed_sweep_runs_as_slurm_jobs_and_is_reported(slurm_cluster, tmp_path):
    result = ner_train(tmp_path, "seed=1,2")
    assert result.returncode == 0, result.stderr[-3000:]
    sweep = tmp_path / "sweep"
    for job in ("0", "1"):
        assert (sweep / job / "results.json").is_file() and (sweep / job / "model").is_dir()
    # One array job with its two tasks, each with its SLURM log.
    [array] = [path.name for path in (sweep / ".submitit").iterdir() if "_" not in path.name]
    for task in ("0", "1"):
        assert (sweep / ".submitit" / f"{array}_{task}" / f"{array}_{task}_0_log.err").is_file()
    [group] = ner_report(sweep)["groups"]
    assert group["seeds"] == [1, 2]


@pytest.mark.slurm
def test_an_optuna_search_runs_its_trials_as_slurm_jobs(slurm_cluster, tmp_path):
    search = ["hparams_search=optuna", "hydra.sweeper.n_trials=3", "hydra.sweeper.n_jobs=3"]
    result = ner_train(tmp_path, *search, "trainer.max_epochs=1")
    assert result.returncode == 0, result.stderr[-3000:]
    sweep = tmp_path / "sweep"
    assert all((sweep / str(n) / "results.json").is_file() for n in range(3))
    [report] = ner_report(sweep)["searches"]
    assert sorted(t["number"] for t in report["trials"]) == [0, 1, 2]
    assert all(t["rank"] is not None for t in report["trials"])


def wait_for_running(task: str, timeout: float = 120) -> str:
    """The SLURM id of the job whose array task ends with `task` once it runs."""
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        listed = subprocess.run(
            ["squeue", "-h", "-o", "%i %t"], capture_output=True, text=True, check=True
        ).stdout.split()
        for job, state in zip(listed[::2], listed[1::2], strict=True):
            if job.endswith(task) and state == "R":
                return job
        time.sleep(0.5)
    raise AssertionError(f"no job {task} ran within {timeout} s")


@pytest.mark.slurm
def test_a_cancelled_trial_is_failed_and_the_search_resumes(slurm_cluster, tmp_path):
    search = [
        "hparams_search=optuna", "hydra.sweeper.n_trials=2", "hydra.sweeper.n_jobs=2",
        "trainer.max_epochs=20", "trainer.patience=100",
    ]  # fmt: skip
    with subprocess.Popen(
        train_command(tmp_path, *search), cwd=PROJECT_ROOT, env=ENV, text=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    ) as search_run:  # fmt: skip
        subprocess.run(["scancel", wait_for_running("_1")], check=True)
        _, stderr = search_run.communicate(timeout=600)
    assert search_run.returncode != 0 and "Traceback" not in stderr, stderr[-2000:]
    assert "sweep job 1 (SLURM job" in stderr and "ended CANCELLED: it was cancelled" in stderr
    sweep = tmp_path / "sweep"
    study = optuna.load_study(study_name="tagger", storage=f"sqlite:///{sweep / 'optuna.db'}")
    assert [t.state.name for t in study.trials] == ["COMPLETE", "FAIL"]
    assert (sweep / "0" / "results.json").is_file()
    again = ner_train(tmp_path, *search)  # the same command resumes the search
    assert again.returncode == 0, again.stderr[-3000:]
    assert "1 trials finished, 1 to run, the next in" in again.stdout
    study = optuna.load_study(study_name="tagger", storage=f"sqlite:///{sweep / 'optuna.db'}")
    assert [t.state.name for t in study.trials] == ["COMPLETE", "FAIL", "COMPLETE"]
    [report] = ner_report(sweep)["searches"]
    assert [t["rank"] for t in report["trials"] if t["number"] in (0, 2)] == [1, 2]


@pytest.mark.slurm
def test_a_run_past_its_time_limit_fails_and_the_finished_one_is_kept(slurm_cluster, tmp_path):
    overrides = ["trainer.max_epochs=1,100000", "trainer.patience=100000"]
    # submitit asks SLURM for its warning signal signal_delay_s (120) before the limit: with a
    # 1-minute limit that is at once, and it would kill Python before the launcher ignores it.
    limit = ["hydra.launcher.timeout_min=1", "hydra.launcher.signal_delay_s=30"]
    result = ner_train(tmp_path, *overrides, *limit)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "sweep job 1 (SLURM job" in result.stderr, result.stderr[-2000:]
    assert "ended TIMEOUT: it reached its time limit" in result.stderr
    assert "timeout_min (now 1)" in result.stderr
    assert (tmp_path / "sweep" / "0" / "results.json").is_file()
    # The run can continue from its last checkpoint with resume=.
    killed = tmp_path / "sweep" / "1"
    assert (killed / "checkpoints" / "last.pt").is_file() and not (killed / "results.json").exists()


@pytest.mark.slurm
@pytest.mark.parametrize(
    ("settings", "named"),
    [
        (["hydra.launcher.partition=nonesuch"], "set hydra.launcher.partition to one that"),
        (["hydra.launcher.partition=short", "hydra.launcher.timeout_min=5"], "timeout_min"),
    ],
)
def test_a_refused_submission_names_the_setting_in_one_line(
    slurm_cluster, tmp_path, settings, named
):
    result = ner_train(tmp_path, "seed=1", *settings)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    [line] = [line for line in result.stderr.splitlines() if "SLURM refused" in line]
    assert named in line


@pytest.mark.slurm
def test_an_unreachable_controller_is_one_line(slurm_cluster, tmp_path):
    conf = Path(os.environ.get("SLURM_CONF", "/etc/slurm/slurm.conf")).read_text()
    away = tmp_path / "slurm.conf"  # the cluster's settings with the controller elsewhere
    away.write_text(conf + "SlurmctldPort=6999\n")
    result = ner_train(tmp_path, "seed=1", env={**ENV, "SLURM_CONF": str(away)})
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert (
        "Unable to contact slurm controller" in result.stderr and "scontrol ping" in result.stderr
    )
