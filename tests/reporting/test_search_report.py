"""`ner-report` on a hyperparameter search folder (``search.yaml`` and one folder per trial, as
``ner-train -m hparams_search=optuna`` writes them): ranking, the best trial's command, trials
without results, and searches kept apart from the seed tables."""

import json
import shlex
from pathlib import Path

import pytest
import yaml
from test_report import config, write_run
from test_token_report import token_scores

from ner.cli.report import main
from ner.reporting.search import command, is_search_setup, load_search

SPACE = {
    "trainer.optimizer.lr": "tag(log, interval(0.0003, 0.01))",
    "model.dropout": "interval(0.1, 0.6)",
}
FIXED = ["data.name=/corpora/shop", "hparams_search=optuna", "trainer.max_epochs=2"]


def write_trial(sweep: Path, number: int, lr: str, dropout: str, dev: float | None) -> Path:
    """A trial folder: Hydra's record of the job, and results.json when `dev` is given."""
    folder = sweep / str(number)
    overrides = [f"trainer.optimizer.lr={lr}", f"model.dropout={dropout}", *FIXED]
    overrides += ["hydra.sweeper.n_trials=9"]  # never on a command line, but must be dropped
    (folder / ".hydra").mkdir(parents=True)
    hydra = {"hydra": {"job": {"num": number}, "overrides": {"task": overrides}}}
    (folder / ".hydra" / "hydra.yaml").write_text(yaml.safe_dump(hydra))
    if dev is not None:
        write_run(folder, 1, dev, 50.0, config(corpus="shop", variant=None))
    return folder


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    """Four trials: three finished (dev 80, 90, 85) and one interrupted."""
    folder = tmp_path / "multirun" / "optuna" / "tagger"
    folder.mkdir(parents=True)
    record = {
        "study_name": "tagger",
        "directions": ["maximize"],
        "search_space": SPACE,
        "fixed_overrides": FIXED,
    }
    (folder / "search.yaml").write_text(yaml.safe_dump(record))
    write_trial(folder, 0, "0.001", "0.5", 80.0)
    write_trial(folder, 1, "0.0045678901", "0.25", 90.0)
    write_trial(folder, 2, "0.0003", "0.4", None)
    write_trial(folder, 3, "0.002", "0.3", 85.0)
    return folder


def test_trials_are_ranked_by_dev_f1_with_unfinished_ones_last(sweep):
    search = load_search(sweep)
    assert [t.number for t in search.trials] == [1, 3, 0, 2]
    assert search.best.number == 1 and search.best.objective == 90.0
    assert search.trials[-1].results is None


def test_the_report_marks_the_best_and_prints_its_command(sweep, capsys):
    assert main([str(sweep), "--no-plots"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ")][1:]
    assert rows[0].startswith("| 1 (best) | 1 | 90.00 | ")
    assert "0.00457" in rows[0] and rows[1].startswith("| 2 | 3 | 85.00 |")
    assert rows[3].startswith("| – | 2 | no results |")
    best_command = out.split("```bash\n")[1].split("\n```")[0]
    assert shlex.split(best_command) == [
        "ner-train",
        "trainer.optimizer.lr=0.0045678901",
        "model.dropout=0.25",
        "data.name=/corpora/shop",
        "trainer.max_epochs=2",
    ]
    assert "never pick a trial by its test score" in out
    assert "Warnings" not in out, "trials of one search are not seeds run twice"
    content = json.loads((sweep / "report.json").read_text())
    [search] = content["searches"]
    assert search["best"] == {"number": 1, "command": best_command}
    assert [t["number"] for t in search["trials"]] == [1, 3, 0, 2]
    assert search["trials"][0]["params"] == {
        "trainer.optimizer.lr": "0.0045678901",
        "model.dropout": "0.25",
    }
    assert search["trials"][0]["folder"] == "1" and search["trials"][3]["rank"] is None
    assert content["groups"] == []


def test_a_search_is_reported_apart_from_the_runs_beside_it(sweep, capsys):
    root = sweep.parents[1]
    for seed in (1, 2):
        write_run(root / "seeds" / str(seed), seed, 93.0, 90.0, config())
    assert main([str(root), "--no-plots"]) == 0
    content = json.loads((root / "report.json").read_text())
    assert [(g["corpus"], len(g["runs"])) for g in content["groups"]] == [("conll2003", 2)]
    assert content["searches"][0]["folder"] == "optuna/tagger"
    assert not content["warnings"]


def test_values_needing_quotes_are_quoted_in_the_command():
    class Trial:
        overrides = ("data.options.columns=[tokens,_,tags]", "data.name=my corpus")

    assert (
        command(Trial()) == "ner-train 'data.options.columns=[tokens,_,tags]' 'data.name=my corpus'"
    )


@pytest.mark.parametrize(
    ("override", "setup"),
    [
        ("hparams_search=optuna", True),
        ("hydra/launcher=local", True),
        ("hydra.launcher.n_jobs=2", True),
        ("hydra.sweep.dir=multirun/x", True),
        ("hydra/sweeper/sampler=random", True),
        ("hydra.sweeper.n_trials=3", True),
        ("hydra.searchpath=[file://conf]", False),
        ("hydra.sweeping=1", False),
        ("data.name=x", False),
    ],
)
def test_only_the_search_setup_is_left_out_of_the_command(override, setup):
    assert is_search_setup(override) is setup


def test_a_malformed_search_record_is_an_error_naming_it(sweep, capsys):
    (sweep / "search.yaml").write_text("study_name: [unclosed\n")
    assert main([str(sweep), "--no-plots"]) == 2
    assert f"{sweep / 'search.yaml'}: cannot read it as YAML" in capsys.readouterr().err


def test_a_search_over_per_token_labels_is_ranked_by_dev_accuracy(sweep, capsys):
    """Its trials have ``accuracy``, not ``f1``: one such search among the folders used to stop
    the whole report."""
    for number, dev in ((0, 91.0), (1, 95.0), (3, 93.0)):
        folder = sweep / str(number)
        results = json.loads((folder / "results.json").read_text())
        results.update(dev=token_scores(dev), test=token_scores(dev - 1), metric="accuracy")
        (folder / "results.json").write_text(json.dumps(results))
    assert main([str(sweep.parents[1]), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "| rank | trial | dev accuracy |" in out
    assert "| 1 (best) | 1 | 95.00 |" in out and "Best: trial 1, dev accuracy 95.00" in out
    assert "report the chosen trial's test accuracy" in out
    [search] = json.loads((sweep.parents[1] / "report.json").read_text())["searches"]
    assert search["metric"] == "accuracy"
    assert [t["dev_score"] for t in search["trials"]] == [95.0, 93.0, 91.0, None]
