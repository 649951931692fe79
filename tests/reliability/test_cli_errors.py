"""Console scripts on bad arguments and signals: one clear message, never a traceback."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ner.cli.train import resume_in_place
from ner.common.paths import PROJECT_ROOT


def test_predict_with_an_unknown_encoding_is_a_one_line_error():
    done = subprocess.run(
        [sys.executable, "-m", "ner.cli.predict", "model", "-", "--encoding", "bogus"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "ner-predict: error: argument --encoding: unknown text encoding 'bogus'"
    )


def test_a_resumed_run_logs_into_the_folder_it_resumes():
    assert resume_in_place(["resume=/runs/a", "seed=2"]) == [
        "resume=/runs/a",
        "seed=2",
        "hydra.run.dir=/runs/a",
        "hydra.output_subdir=null",
    ]
    explicit = ["resume=/runs/a", "hydra.run.dir=/elsewhere"]
    assert resume_in_place(explicit) == explicit
    assert resume_in_place(["seed=2"]) == ["seed=2"]


def run_cli(module: str, *args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """`python -m ner.cli.<module> args` with its own data folder and one thread."""
    env = {**os.environ, "NER_DATA_DIR": str(tmp_path / "data"), "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", f"ner.cli.{module}", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_one_line_user_error(done: subprocess.CompletedProcess, program: str, names: str):
    """Status 2, no traceback, and a last line that is the program's message naming `names`."""
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "HYDRA_FULL_ERROR" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"{program}: ") and names in last, last


@pytest.fixture
def tiny_corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny"
    folder.mkdir()
    for split in ("train", "dev", "test"):
        (folder / f"{split}.txt").write_text("Paris B-LOC\nis O\n\nMary B-PER\nleft O\n")
    return folder


def test_ner_train_with_a_malformed_options_json_prints_one_line_naming_it(tmp_path, tiny_corpus):
    broken = tmp_path / "options.json"
    broken.write_text('{"lstm": {"dim": 64,')
    done = run_cli(
        "train",
        f"data.name={tiny_corpus}",
        f"elmo.options_file={broken}",
        "logger=none",
        f"hydra.run.dir={tmp_path / 'run'}",
        tmp_path=tmp_path,
    )
    assert_one_line_user_error(done, "ner-train", str(broken))
    assert "cannot read ELMo options JSON" in done.stderr
    assert not (tmp_path / "run").exists(), "a config that cannot work leaves no run dir"


def test_ner_train_with_a_malformed_corpus_prints_one_line_naming_file_and_line(
    tmp_path, tiny_corpus
):
    (tiny_corpus / "dev.txt").write_text("Paris B-LOC\nis X-PER\n")
    done = run_cli(
        "train",
        f"data.name={tiny_corpus}",
        "elmo=none",
        "embeddings=char",
        "logger=none",
        f"hydra.run.dir={tmp_path / 'run'}",
        tmp_path=tmp_path,
    )
    assert_one_line_user_error(done, "ner-train", f"{tiny_corpus / 'dev.txt'}:2:")


def test_ner_pretrain_with_an_empty_text_file_prints_one_line_naming_it(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    done = run_cli(
        "pretrain",
        f"corpus.sources=[{empty}]",
        f"pretrain.output_dir={tmp_path / 'out'}",
        tmp_path=tmp_path,
    )
    assert_one_line_user_error(done, "ner-pretrain", str(empty))


def assert_only_line(done: subprocess.CompletedProcess, program: str, names: str) -> None:
    """`assert_one_line_user_error`, and stderr holds nothing else."""
    assert_one_line_user_error(done, program, names)
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr[-3000:]


def test_ner_evaluate_on_a_folder_that_is_no_run_prints_one_line(tmp_path):
    done = run_cli("evaluate", str(tmp_path), tmp_path=tmp_path)
    assert_only_line(done, "ner-evaluate", f"{tmp_path} is not a training run")


def test_ner_report_without_runs_prints_one_line(tmp_path):
    (tmp_path / "runs").mkdir()
    done = run_cli("report", str(tmp_path / "runs"), "--no-plots", tmp_path=tmp_path)
    assert_only_line(done, "ner-report", f"no results.json under {tmp_path / 'runs'}")


def test_ner_embed_of_a_missing_file_prints_one_line(tmp_path):
    missing = tmp_path / "missing.txt"
    bilm = ["--options-file", "options.json", "--weight-file", "weights.hdf5"]
    done = run_cli("embed", str(missing), "out.hdf5", *bilm, tmp_path=tmp_path)
    assert_only_line(done, "ner-embed", str(missing))


def test_ner_data_of_a_malformed_corpus_prints_one_line(tmp_path, tiny_corpus):
    (tiny_corpus / "train.txt").write_text("Paris B-LOC\nis O O\n")
    done = run_cli("data", "prepare", str(tiny_corpus), tmp_path=tmp_path)
    assert_one_line_user_error(done, "ner-data", f"{tiny_corpus / 'train.txt'}:2:")


@pytest.mark.parametrize("program", ["predict", "serve", "models"])
def test_a_model_command_on_a_folder_that_is_no_model_prints_one_line(tmp_path, program):
    model = str(tmp_path / "model")
    arguments = {
        "predict": [model, str(tmp_path / "text.txt")],
        "serve": [model, "--port", "1"],
        "models": ["export", model, str(tmp_path / "compact")],
    }[program]
    done = run_cli(program, *arguments, tmp_path=tmp_path)
    assert_only_line(done, f"ner-{program}", model)
