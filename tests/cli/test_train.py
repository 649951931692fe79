"""End-to-end training runs (``python -m ner.cli.train``) on a tiny corpus with the fixture biLM:
the run's files, W&B offline, kill + resume, multirun, re-evaluation; and config composition."""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

import ner.training.run  # noqa: F401  (registers the config schema)
from ner.common.checkpoints import load_checkpoint
from ner.common.paths import PROJECT_ROOT
from ner.embeddings.pretrained import load_pretrained_words
from ner.tagger.dataset import Split, Vocabularies, check_label_sets
from ner.training.reevaluate import evaluate_run

PEOPLE = ["John Smith", "Mary", "Peter Jones", "Anna Karenina", "Bob"]
PLACES = ["Paris", "New York", "Berlin", "Rome", "Tokyo"]
ORGS = ["Acme Corp", "the United Nations", "Reuters", "Siemens"]


def write_corpus(folder: Path, seed: int = 0) -> Path:
    """Column files (token tag, IOB2) of template sentences with PER/LOC/ORG chunks."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)

    def chunk(text: str, kind: str) -> list[tuple[str, str]]:
        words = text.split()
        if kind == "O":
            return [(w, "O") for w in words]
        return [(w, ("B-" if i == 0 else "I-") + kind) for i, w in enumerate(words)]

    for name, count in [("train", 120), ("dev", 30), ("test", 30)]:
        lines = []
        for _ in range(count):
            parts = [
                chunk(rng.choice(PEOPLE), "PER"),
                chunk(rng.choice(["visited", "works for", "left"]), "O"),
                chunk(rng.choice(PLACES), "LOC")
                if rng.random() < 0.5
                else chunk(rng.choice(ORGS), "ORG"),
                chunk(rng.choice(["on Monday .", ".", "again ."]), "O"),
            ]
            lines += [f"{w} {t}" for part in parts for w, t in part] + [""]
        (folder / f"{name}.txt").write_text("\n".join(lines) + "\n")
    return folder


def glove_file(path: Path) -> Path:
    rng = random.Random(1)
    words = {w.lower() for text in PEOPLE + PLACES + ORGS for w in text.split()} | {"visited", "."}
    path.write_text(
        "".join(
            f"{w} " + " ".join(f"{rng.uniform(-1, 1):.4f}" for _ in range(50)) + "\n"
            for w in sorted(words)
        )
    )
    return path


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("train")
    return {
        "root": root,
        "corpus": write_corpus(root / "tiny"),
        "glove": glove_file(root / "glove.txt"),
        "env": {
            **os.environ,
            "NER_DATA_DIR": str(root / "data"),
            "OMP_NUM_THREADS": "1",
            "WANDB_SILENT": "true",
        },
    }


def overrides(workspace: dict, run_dir: Path, epochs: int = 4) -> list[str]:
    return [
        f"data.name={workspace['corpus']}",
        f"embeddings.glove.source={workspace['glove']}",
        "elmo=fixture",  # its folder: $NER_ELMO_FIXTURE (tests/conftest.py)
        f"trainer.max_epochs={epochs}",
        "data.batch_size=16",
        "model.hidden_size=32",
        "trainer.optimizer.lr=0.01",
        "progress=false",
        f"hydra.run.dir={run_dir}",
    ]


def run_train(workspace: dict, args: list[str], timeout: int = 240) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "ner.cli.train", *args],
        cwd=PROJECT_ROOT,
        env=workspace["env"],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.fixture(scope="module")
def full_run(workspace) -> Path:
    run_dir = workspace["root"] / "full"
    run_train(workspace, [*overrides(workspace, run_dir), "logger=wandb"])
    return run_dir


@pytest.mark.slow
def test_run_writes_results_predictions_checkpoints_and_wandb(full_run):
    results = json.loads((full_run / "results.json").read_text())
    for split in ("dev", "test"):
        assert {"f1", "precision", "recall", "per_type", "strict"} <= set(results[split])
        assert 0 <= results[split]["f1"] <= 100
    assert results["epochs_run"] == 4 and 1 <= results["best_epoch"] <= 4 and results["seed"] == 1
    assert results["test"]["f1"] > 50, "the template corpus is easy; the tagger must learn it"
    assert set(results["test"]["per_type"]) == {
        "LOC",
        "ORG",
        "PER",
    }
    assert {"train", "elmo_features", "total"} <= set(results["time_seconds"])
    assert results["train_tokens_per_second"] > 0
    assert len(results["elmo_mix"]["weights"]) == 3 and results["elmo_mix"]["gamma"] > 0
    assert results["git_commit"] and results["config"]["trainer"]["max_epochs"] == 4
    assert results["corpus_scheme"] == "iob2" and results["model_scheme"] == "bioes"
    # predictions: token gold pred, sentences separated by blank lines, corpus (IOB2) tags.
    lines = (full_run / "predictions_test.txt").read_text().split("\n")
    assert lines.count("") == 30 + 1
    rows = [line.split(" ") for line in lines if line]
    assert all(len(row) == 3 for row in rows)
    assert not {tag[0] for row in rows for tag in row[1:]} - {"O", "B", "I"}
    assert (full_run / "checkpoints" / "best.pt").is_file() and (
        full_run / "checkpoints" / "last.pt"
    ).is_file()
    assert list((full_run / "wandb").glob("offline-run-*/run-*.wandb"))
    assert (full_run / "config.yaml").is_file()


@pytest.mark.slow
def test_saved_model_tags_like_the_run(full_run, workspace, tmp_path):
    """model/ through ner-predict: the run's test predictions and F1 again (the run's final
    scores come from the same `Tagger`), and raw text with character offsets into the input."""

    def predict(*args: str) -> str:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "ner.cli.predict",
                str(full_run / "model"),
                *args,
                "--threads",
                "1",
            ],
            cwd=PROJECT_ROOT,
            env=workspace["env"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    scores = tmp_path / "scores.json"
    test_file = str(workspace["corpus"] / "test.txt")
    out = predict(
        test_file, "--input-format", "conll", "--format", "conll", "--scores", str(scores)
    )
    predicted = [line.split() for line in out.split("\n") if line]
    saved = (full_run / "predictions_test.txt").read_text().split("\n")
    expected = [line.split() for line in saved if line]
    assert predicted == expected
    run_f1 = json.loads((full_run / "results.json").read_text())["test"]["f1"]
    assert json.loads(scores.read_text())["f1"] == run_f1
    source = tmp_path / "raw.txt"
    source.write_text("Mary visited Berlin on Monday. John Smith works for Reuters.\n\nBob left.\n")
    records = [json.loads(line) for line in predict(str(source)).splitlines()]
    lines = source.read_text().split("\n")
    assert [r["line"] for r in records] == [1, 2, 3]
    for record in records:
        line = lines[record["line"] - 1]
        assert all(line[t["start"] : t["end"]] == t["text"] for t in record["tokens"])
        assert all(line[e["start"] : e["end"]] == e["text"] for e in record["entities"])
    assert {e["type"] for e in records[0]["entities"]} <= {"PER", "LOC", "ORG"}
    assert records[0]["entities"], "a model with test F1 > 50 finds entities in template text"


@pytest.mark.slow
def test_evaluate_reproduces_the_test_score(full_run, workspace, monkeypatch):
    monkeypatch.setenv("NER_DATA_DIR", workspace["env"]["NER_DATA_DIR"])
    results = json.loads((full_run / "results.json").read_text())
    scores = evaluate_run(full_run, split="test")
    assert scores["f1"] == pytest.approx(results["test"]["f1"])
    assert (full_run / "eval_tiny_test.txt").read_text() == (
        full_run / "predictions_test.txt"
    ).read_text()


@pytest.mark.slow
def test_evaluate_and_predict_score_a_file_alike(full_run, workspace, monkeypatch, capsys):
    """ner-evaluate and ner-predict --scores run one model one way: on the run's test file they
    give the identical scores and predictions."""
    from ner.cli import evaluate, predict

    monkeypatch.setenv("NER_DATA_DIR", workspace["env"]["NER_DATA_DIR"])
    evaluate.main([str(full_run), "--split", "test", "--threads", "1", "--batch-size", "7"])
    evaluated = json.loads(capsys.readouterr().out)
    scores, tagged = full_run / "predict_scores.json", full_run / "predict_test.conll"
    test_file = workspace["corpus"] / "test.txt"
    arguments = ["--input-format", "conll", "--format", "conll", "--threads", "1", "-o"]
    status = predict.main(
        [str(full_run / "model"), str(test_file), *arguments, str(tagged), "--scores", str(scores)]
    )
    assert status == 0
    predicted = json.loads(scores.read_text())
    for key in ("f1", "precision", "recall", "support", "per_type", "strict"):
        assert predicted[key] == evaluated[key], key
    assert predicted["scheme"] == "iob2" and predicted["sentences"] == 30
    rows = [line.split() for line in tagged.read_text().splitlines() if line]
    saved = (full_run / "eval_tiny_test.txt").read_text().splitlines()
    assert [(row[0], row[-1]) for row in rows] == [
        (row[0], row[2]) for row in map(str.split, saved) if row
    ]


@pytest.mark.slow
def test_a_checkpoint_is_scored_as_the_model_folder(full_run, workspace, monkeypatch, tmp_path):
    """A run stopped before it wrote model/ is scored from its checkpoint, restored into the
    same `Tagger` with its GloVe words rebuilt: the scores of the model folder again."""
    monkeypatch.setenv("NER_DATA_DIR", workspace["env"]["NER_DATA_DIR"])
    stopped = tmp_path / "stopped"
    shutil.copytree(full_run, stopped, ignore=shutil.ignore_patterns("model", "wandb"))
    results = json.loads((full_run / "results.json").read_text())
    assert evaluate_run(stopped, split="test")["f1"] == results["test"]["f1"]
    assert (stopped / "eval_tiny_test.txt").read_text() == (
        full_run / "predictions_test.txt"
    ).read_text()
    last = evaluate_run(full_run, split="validation", checkpoint="last")
    assert last == {
        **evaluate_run(stopped, split="validation", checkpoint="last"),
        **{key: last[key] for key in ("seconds", "tokens_per_second")},
    }


@pytest.mark.slow
def test_killed_run_resumes_to_the_same_result(full_run, workspace):
    run_dir = workspace["root"] / "killed"
    process = subprocess.Popen(
        [sys.executable, "-m", "ner.cli.train", *overrides(workspace, run_dir), "logger=none"],
        cwd=PROJECT_ROOT,
        env=workspace["env"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    last = run_dir / "checkpoints" / "last.pt"
    deadline = time.monotonic() + 240
    while not last.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert not (run_dir / "results.json").exists(), "the run finished before it could be killed"
    assert load_checkpoint(last)["loop"]["epoch"] < 4
    run_train(workspace, [f"resume={run_dir}", f"hydra.run.dir={workspace['root'] / 'resume-log'}"])
    resumed = json.loads((run_dir / "results.json").read_text())
    reference = json.loads((full_run / "results.json").read_text())
    assert resumed["epochs_run"] == 4
    assert [h["dev/f1"] for h in resumed["history"]] == [h["dev/f1"] for h in reference["history"]]
    assert resumed["test"]["f1"] == reference["test"]["f1"]
    resumed_weights = load_checkpoint(run_dir / "checkpoints" / "last.pt")["model"]
    reference_weights = load_checkpoint(full_run / "checkpoints" / "last.pt")["model"]
    assert all(torch.equal(resumed_weights[k], reference_weights[k]) for k in reference_weights)


@pytest.mark.slow
def test_multirun_over_seeds(workspace):
    sweep = workspace["root"] / "multirun"
    args = [a for a in overrides(workspace, sweep, epochs=1) if not a.startswith("hydra.run")]
    run_train(
        workspace,
        [
            "-m",
            *args,
            "seed=1,2",
            "logger=wandb",
            "trainer/scheduler=plateau",
            f"hydra.sweep.dir={sweep}",
        ],
    )
    seeds = [json.loads((sweep / job / "results.json").read_text())["seed"] for job in ("0", "1")]
    assert seeds == [1, 2]
    assert all(list((sweep / job / "wandb").glob("offline-run-*")) for job in ("0", "1"))


def compose_config(*extra: str):
    with initialize_config_module("ner.conf", version_base="1.3"):
        return compose(config_name="train", overrides=list(extra))


@pytest.mark.parametrize("experiment", ["conll2003_elmo_glove", "conll2003_glove"])
def test_experiments_compose(experiment):
    cfg = compose_config(
        f"experiment={experiment}", "seed=3", "logger=none", "data.max_sentences=10"
    )
    assert cfg.seed == 3 and cfg.data.max_sentences == 10 and cfg.data.name == "conll2003"
    assert cfg.model._target_ == "ner.tagger.model.TaggerModel"
    assert cfg.logger is None
    assert cfg.trainer.optimizer._target_ == "torch.optim.Adam" and cfg.trainer.max_epochs == 75
    if experiment == "conll2003_glove":
        assert cfg.elmo is None
        return
    elmo = OmegaConf.to_container(cfg.elmo, resolve=True)
    # The default biLM is the shipped one: package data, no download.
    assert elmo["name"] == "small_news" and elmo["expected"]["options_file"] == elmo["options_file"]
    assert Path(elmo["options_file"]).is_file() and Path(elmo["weight_file"]).is_file()


def test_overrides_named_in_the_docs_exist():
    cfg = compose_config(
        "trainer.max_epochs=2",
        "logger=wandb",
        "embeddings=char",
        "trainer/scheduler=plateau",
        "elmo.options_file=https://example.org/o.json",
        "elmo.weight_file=/x/w.hdf5",
    )
    assert cfg.trainer.max_epochs == 2 and cfg.logger.mode == "offline"
    assert cfg.embeddings.glove is None and cfg.embeddings.char.filters == 128
    assert cfg.trainer.scheduler._target_.endswith("ReduceLROnPlateau")
    assert cfg.elmo.options_file.startswith("https://")


def test_glove_member_of_a_zip_with_several_files(tmp_path):
    """Stanford's glove.6B.zip holds four files: `embeddings.glove.member` picks one, and a
    `dim` that does not match the file is an error that says what to set."""
    archive = tmp_path / "glove.6B.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for dim in (3, 5):
            rows = [f"{word} " + " ".join([str(dim)] * dim) for word in ("paris", "rome")]
            bundle.writestr(f"glove.6B.{dim}d.txt", "\n".join(rows) + "\n")
    vocabularies = Vocabularies.build([["Paris", "Oslo"]], ["O"])
    cfg = compose_config(
        f"embeddings.glove.source={archive}",
        "embeddings.glove.member=glove.6B.5d.txt",
        "embeddings.glove.dim=5",
    )
    glove = cfg.embeddings.glove
    rows = load_pretrained_words(
        glove.source, vocabularies.words, dim=glove.dim, seed=1, member=glove.member
    ).initial
    assert rows.shape == (len(vocabularies.words.items), 5)
    assert rows[vocabularies.words.items.index("paris")].tolist() == [5.0] * 5
    wrong = compose_config(
        f"embeddings.glove.source={archive}", "embeddings.glove.member=glove.6B.3d.txt"
    )
    with pytest.raises(ValueError, match=r"set embeddings\.glove\.dim=3"):
        glove = wrong.embeddings.glove
        load_pretrained_words(
            glove.source, vocabularies.words, dim=glove.dim, seed=1, member=glove.member
        )


def test_label_types_missing_from_train_are_an_error():
    splits = {
        "train": Split("train", [["a"]], [["B-PER"]]),
        "validation": Split("validation", [["b"]], [["B-LOC"]]),
        "test": Split("test", [["c"]], [["O"]]),
    }
    with pytest.raises(ValueError, match=r"validation split has tag types .*'LOC'"):
        check_label_sets(splits)


def test_a_missing_elmo_file_is_a_clear_error(workspace, tmp_path):
    missing = tmp_path / "nowhere" / "weights.hdf5"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ner.cli.train",
            *overrides(workspace, tmp_path / "run"),
            f"elmo.weight_file={missing}",
            "logger=none",
        ],
        cwd=PROJECT_ROOT,
        env=workspace["env"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert str(missing) in result.stderr


@pytest.mark.slow
def test_evaluate_applies_the_runs_max_sentences(workspace, monkeypatch):
    """A run trained and scored with data.max_sentences: ner-evaluate scores the same sentences
    (and gives results.json's test F1) unless --max-sentences says otherwise."""
    run_dir = workspace["root"] / "capped"
    args = [a for a in overrides(workspace, run_dir, epochs=2) if a != "elmo=fixture"]
    run_train(workspace, [*args, "elmo=none", "logger=none", "data.max_sentences=12"])
    monkeypatch.setenv("NER_DATA_DIR", workspace["env"]["NER_DATA_DIR"])
    results = json.loads((run_dir / "results.json").read_text())
    assert results["sentences"]["test"] == 12
    scores = evaluate_run(run_dir, split="test")
    assert scores["f1"] == results["test"]["f1"]
    predictions = (run_dir / "eval_tiny_test.txt").read_text()
    assert predictions == (run_dir / "predictions_test.txt").read_text()
    evaluate_run(run_dir, split="test", max_sentences=5)
    assert (run_dir / "eval_tiny_test.txt").read_text().count("\n\n") == 5
