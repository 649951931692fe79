"""Hyperparameter search: ``ner-train -m hparams_search=optuna`` on the tiny corpus with the
fixture biLM (every trial a normal run, one W&B group, resume without rerunning finished trials,
``ner-report`` and the best trial's command), and the resumable sweeper's own steps. The search
runs as a user runs it: the console scripts, from a folder that is not the repository root."""

import functools
import json
import re
import shlex
import sqlite3
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
from reliability.test_cli_errors import assert_one_line_user_error

from hydra_plugins.ner_sweeper._resumable import (
    ResumableSweeperImpl,
    SearchError,
    applies,
    check_record,
    settle_trials,
)
from hydra_plugins.ner_sweeper._space import search_space
from hydra_plugins.ner_sweeper._study_file import StudyFileError, check_study_file

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
    written = yaml.safe_load((sweep / "optimization_results.yaml").read_text())
    assert (written["best_value"], written["best_params"]) == (best.value, best.params)
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
    assert_one_line_user_error(done, "ner-train", f"{sweep / 'search.yaml'}: this folder holds")
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


@pytest.mark.parametrize(
    "override",
    [
        "a=choice(1, 2, 3)",
        "a=choice(x, true, 0.5)",
        "a=range(1, 10, 2)",
        "a=range(0.1, 1.0, 0.2)",
        "a=interval(0.1, 0.6)",
        "a=interval(1, 5)",
        "a=tag(log, interval(0.0003, 0.01))",
        "a=tag(log, interval(1, 100))",
        "a=5",
    ],
)
def test_the_search_space_is_read_as_the_stock_sweeper_reads_it(override):
    """The same distributions, in the same order, and the same fixed values as
    hydra-optuna-sweeper's own reading (an internal function, here only as the reference)."""
    from hydra_plugins.hydra_optuna_sweeper._impl import create_params_from_overrides

    arguments = ["z=interval(0, 1)", override, "b=choice(x, y)", "b=7"]
    stock_searched, stock_fixed = create_params_from_overrides(arguments)
    searched, fixed = search_space(arguments)
    assert fixed == stock_fixed
    expected = {k: v for k, v in stock_searched.items() if k not in stock_fixed}
    assert list(searched.items()) == list(expected.items())
    shuffled = search_space(["a=shuffle(range(1, 4))"])[0]["a"]  # in a random order, as stock
    assert sorted(shuffled.choices) == [1, 2, 3]


SETTINGS = {
    "sampler": None, "direction": "maximize", "storage": None, "study_name": "tagger",
    "n_trials": 1, "n_jobs": 1, "max_failure_rate": 0.0, "search_space": None,
    "custom_search_space": None, "params": None,
}  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"n_jobs": 0}, r"n_jobs=0: expected at least 1"),
        ({"search_space": {"a": {"type": "int"}}}, r"search_space: give the search as .*params"),
        ({"sampler": functools.partial(optuna.samplers.GridSampler)}, "GridSampler is not"),
        ({"max_failure_rate": 1.5}, r"max_failure_rate=1.5: expected 0 to 1"),
    ],
)
def test_settings_the_sweeper_does_not_take_are_refused(change, message):
    with pytest.raises(SearchError, match=message):
        ResumableSweeperImpl(**{**SETTINGS, **change}).sweep([])


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


def new_study_file(path: Path, trials: int = 0) -> Path:
    """A study database as a search creates it (study ``tagger``), with `trials` finished trials."""
    created = optuna.create_study(
        study_name="tagger", storage=f"sqlite:///{path}", direction="maximize"
    )
    for _ in range(trials):
        created.tell(created.ask(), 1.0)
    return path


def run_sql(path: Path, *statements: str) -> list[tuple]:
    """Run `statements` on the SQLite file `path`; the rows of the last one."""
    connection = sqlite3.connect(path)
    try:
        rows = [connection.execute(statement).fetchall() for statement in statements]
        connection.commit()
        return rows[-1]
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("craft", "found"),
    [
        (
            "CREATE TRIGGER spy AFTER INSERT ON trials BEGIN DELETE FROM studies; END",
            "trigger 'spy'",
        ),
        ("CREATE VIEW recent AS SELECT * FROM trials", "view 'recent'"),
        ("CREATE TABLE extra (x)", "table 'extra'"),
        ("ALTER TABLE trials ADD COLUMN x DEFAULT 1", "table 'trials'"),
    ],
)
def test_a_study_file_with_more_than_optunas_schema_is_refused(tmp_path, craft, found):
    path = new_study_file(tmp_path / "optuna.db", trials=1)
    check_study_file(f"sqlite:///{path}")  # as the search created it: resumed
    run_sql(path, craft)
    with pytest.raises(StudyFileError, match=rf"^{re.escape(str(path))}: not a study .*{found}"):
        check_study_file(f"sqlite:///{path}")


def test_a_study_file_that_is_a_link_or_not_a_database_is_refused(tmp_path):
    elsewhere = new_study_file(tmp_path / "elsewhere.db")
    path = tmp_path / "optuna.db"
    path.symlink_to(elsewhere)
    with pytest.raises(StudyFileError, match=rf"^{re.escape(str(path))}: a link or not a plain"):
        check_study_file(f"sqlite:///{path}")
    path.unlink()
    new_study_file(path)
    journal = tmp_path / "optuna.db-journal"
    journal.symlink_to(tmp_path / "victim.txt")
    with pytest.raises(StudyFileError, match=rf"^{re.escape(str(journal))}: a link"):
        check_study_file(f"sqlite:///{path}")
    journal.unlink()
    path.write_bytes(b"not a database " * 100)
    with pytest.raises(StudyFileError, match=rf"^{re.escape(str(path))}: not a study database \("):
        check_study_file(f"sqlite:///{path}")
    check_study_file(f"sqlite:///{tmp_path / 'new.db'}")  # created by the search that starts
    check_study_file("postgresql://optuna@localhost/studies")  # a server: not a file to check


@pytest.mark.slow
def test_a_search_does_not_resume_from_a_study_file_it_did_not_create(workspace, tmp_path):
    """A crafted optuna.db whose trigger would run on the first trial's insert."""
    sweep = tmp_path / "search"
    sweep.mkdir()
    crafted = new_study_file(sweep / "optuna.db")
    run_sql(
        crafted,
        "CREATE TABLE witness (x)",
        "CREATE TRIGGER spy AFTER INSERT ON trials BEGIN INSERT INTO witness VALUES (1); END",
    )
    done = run_command(workspace, "ner-train", *search_args(workspace, sweep, 1), check=False)
    assert_one_line_user_error(done, "ner-train", f"{crafted}: not a study database that a")
    assert "trigger 'spy'" in done.stderr and "hydra.sweep.dir=DIR" in done.stderr
    assert run_sql(crafted, "SELECT count(*) FROM witness") == [(0,)]
    assert not (sweep / "0").exists() and not (sweep / "search.yaml").exists()
