"""Hyperparameter search: ``ner-train -m hparams_search=optuna`` on the tiny corpus with the
fixture biLM (every trial a normal run, one W&B group, resume without rerunning finished trials,
``ner-report`` and the best trial's command), and the resumable sweeper's own steps. The search
runs as a user runs it: the console scripts, from a folder that is not the repository root."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

import optuna
import pytest
import yaml
from cli import test_train
from cli.test_train import compose_config, overrides
from omegaconf import OmegaConf
from optuna.trial import TrialState

from hydra_plugins.ner_sweeper._resumable import SearchError, applies, check_record, settle_trials

workspace = test_train.workspace  # the fixture: tiny corpus, GloVe file, environment


def search_args(
    workspace: dict,
    sweep: Path,
    trials: int,
    *extra: str,
    lr: str = "tag(log, interval(0.005, 0.02))",
) -> list[str]:
    """A tiny search: 1 epoch per trial, hidden size fixed (a plain value takes it out of the
    search space), the learning rate's range set on the command line, W&B on."""
    args = [a for a in overrides(workspace, sweep, epochs=1) if not a.startswith("hydra.run")]
    args = [a for a in args if not a.startswith(("model.hidden_size", "trainer.optimizer.lr"))]
    return [
        "-m",
        "hparams_search=optuna",
        *args,
        "model.hidden_size=16",
        f"trainer.optimizer.lr={lr}",
        "logger=wandb",
        f"hydra.sweeper.n_trials={trials}",
        f"hydra.sweep.dir={sweep}",
        *extra,
    ]


def run_command(
    workspace: dict, command: str, *args: str, check: bool = True
) -> subprocess.CompletedProcess:
    """A console script of this environment, run from an empty folder of the workspace."""
    elsewhere = workspace["root"] / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    done = subprocess.run(
        [Path(sys.executable).with_name(command), *args],
        cwd=elsewhere, env=workspace["env"], capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0 or not check, done.stderr[-3000:]
    return done


def study(sweep: Path) -> optuna.Study:
    return optuna.load_study(study_name="tagger", storage=f"sqlite:///{sweep}/optuna.db")


@pytest.mark.slow
def test_a_search_runs_resumes_and_reports_its_best_trial(workspace):
    sweep = workspace["root"] / "search"
    run_command(workspace, "ner-train", *search_args(workspace, sweep, 2))
    for trial in ("0", "1"):
        results = json.loads((sweep / trial / "results.json").read_text())
        assert results["config"]["model"]["hidden_size"] == 16
        assert (sweep / trial / "model" / "archive.json").is_file()
        [wandb_file] = (sweep / trial / "wandb").glob("offline-run-*/run-*.wandb")
        assert str(sweep).encode() in wandb_file.read_bytes(), "W&B group: the sweep folder"
    record = yaml.safe_load((sweep / "search.yaml").read_text())
    assert "model.hidden_size" not in record["search_space"]
    assert record["search_space"]["trainer.optimizer.lr"] == "tag(log, interval(0.005, 0.02))"
    assert "elmo.mix.l2" in record["search_space"]
    values = [t.value for t in study(sweep).trials]
    assert values == [
        json.loads((sweep / t / "results.json").read_text())["dev"]["f1"] for t in ("0", "1")
    ], "each trial's value is its dev F1"

    # A killed search leaves its current trial running in the study: resuming marks it failed,
    # keeps the finished trials and runs only what is missing, in the next folder.
    study(sweep).ask()
    finished = {t: (sweep / t / "results.json").stat().st_mtime_ns for t in ("0", "1")}
    run_command(workspace, "ner-train", *search_args(workspace, sweep, 3))
    trials = study(sweep).trials
    assert [t.state for t in trials] == [TrialState.COMPLETE] * 2 + [
        TrialState.FAIL,
        TrialState.COMPLETE,
    ]
    assert {t: (sweep / t / "results.json").stat().st_mtime_ns for t in ("0", "1")} == finished
    assert (sweep / "3" / "results.json").is_file() and not (sweep / "2").exists()
    assert trials[3].params != trials[0].params, "the resumed part draws anew"
    assert all(0.005 <= t.params["trainer.optimizer.lr"] <= 0.02 for t in trials if t.params)

    report = run_command(workspace, "ner-report", str(sweep), "--no-plots")
    best = max((t for t in trials if t.value is not None), key=lambda t: t.value)
    assert f"| 1 (best) | {best.number} | {best.value:.2f} |" in report.stdout
    best_command = report.stdout.split("```bash\n")[1].split("\n```")[0]
    args = shlex.split(best_command)
    assert args[0] == "ner-train" and not any(a.startswith(("hparams", "hydra.")) for a in args)
    composed = OmegaConf.to_container(compose_config(*args[1:]), resolve=True)
    expected = OmegaConf.load(sweep / str(best.number) / "config.yaml")
    assert OmegaConf.create(composed) == expected, "the command reproduces the best trial"


@pytest.mark.slow
def test_resuming_with_other_settings_is_refused(workspace, tmp_path):
    sweep = tmp_path / "search"
    sweep.mkdir()
    record = {"study_name": "tagger", "directions": ["maximize"], "search_space": {},
              "fixed_overrides": ["trainer.max_epochs=7"]}  # fmt: skip
    (sweep / "search.yaml").write_text(yaml.safe_dump(record))
    done = run_command(workspace, "ner-train", *search_args(workspace, sweep, 1), check=False)
    assert done.returncode != 0
    assert f"{sweep / 'search.yaml'}: this folder holds another search" in done.stderr
    assert "hydra.sweep.dir=DIR" in done.stderr and not (sweep / "0").exists()


@pytest.mark.slow
def test_a_diverged_trial_scores_zero_and_the_search_goes_on(workspace, tmp_path):
    sweep = tmp_path / "search"
    args = search_args(workspace, sweep, 1, "logger=none", lr="1e30")
    run_command(workspace, "ner-train", *args)
    [trial] = study(sweep).trials
    assert trial.state == TrialState.COMPLETE and trial.value == 0.0
    assert not (sweep / "0" / "results.json").exists()
    assert "this trial scores dev F1 0" in (sweep / "0" / "train.log").read_text()


def test_search_keys_under_a_null_node_do_not_apply():
    config = OmegaConf.create({"elmo": None, "model": {"dropout": 0.5}})
    assert not applies(config, "elmo.mix.l2") and not applies(config, "elmo.dropout")
    assert applies(config, "model.dropout") and applies(config, "hparams_search")


def test_the_record_is_written_once_and_compared_after(tmp_path):
    path = tmp_path / "search.yaml"
    record = {"study_name": "s", "directions": ["maximize"], "search_space": {"a": "choice(1, 2)"},
              "fixed_overrides": ["b=1"]}  # fmt: skip
    check_record(path, record)
    check_record(path, record)
    with pytest.raises(SearchError, match=r"search_space: \{'a': 'choice\(1, 2\)'\} before"):
        check_record(path, {**record, "search_space": {"a": "choice(1, 3)"}})


def test_trials_left_running_are_failed_and_finished_ones_counted():
    in_memory = optuna.create_study(direction="maximize")
    in_memory.tell(in_memory.ask(), 1.0)
    in_memory.ask()
    assert settle_trials(in_memory) == 1
    assert [t.state for t in in_memory.trials] == [TrialState.COMPLETE, TrialState.FAIL]
