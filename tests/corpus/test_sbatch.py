"""scripts/tag-corpus.sbatch, run as SLURM runs each task of its array (bash with the task's
variables), then the assembling run: the files are those of the single-input command; and the
documented two sbatch commands on a real SLURM cluster (scripts/slurm_test_cluster.sh) write the
files of a local run."""

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tiny_tagger import one_thread, saved_model

from ner.cli.predict import main
from ner.common.paths import PROJECT_ROOT

SCRIPT = PROJECT_ROOT / "scripts" / "tag-corpus.sbatch"
TEXT = "John Smith went to Paris .\n\nAnna likes Rome .\nMary flew to Berlin on Monday .\n"


def ner_predict(*args: object, env: dict[str, str]) -> None:
    subprocess.run(["ner-predict", *map(str, args)], env=env, check=True, capture_output=True)


@pytest.mark.slow
def test_the_array_tasks_and_the_assembling_run_write_the_single_command_files(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("a", "b", "c"):
        (corpus / f"{name}.txt").write_text(TEXT * 3)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env |= {"MODEL": str(saved_model()), "INPUT": str(corpus), "OUT": str(tmp_path / "out")}
    env |= {"SLURM_ARRAY_TASK_COUNT": "2"}
    shape = ("--threads", "1", "--chunk-lines", "4")  # the script's arguments reach each task
    for task in ("0", "1"):
        subprocess.run(
            ["bash", SCRIPT, *shape[2:]], env={**env, "SLURM_ARRAY_TASK_ID": task}, check=True
        )
    assert not list((tmp_path / "out").glob("*.jsonl"))  # the tasks assemble nothing
    ner_predict(saved_model(), corpus, "--output-dir", tmp_path / "out", *shape, env=env)
    for name in ("a", "b", "c"):
        single = tmp_path / f"{name}.jsonl"
        args = [str(corpus / f"{name}.txt"), "-o", str(single), *shape]
        with one_thread():
            assert main([str(saved_model()), *args]) == 0
        assert (tmp_path / "out" / f"{name}.jsonl").read_bytes() == single.read_bytes()


def sbatch(*args: object, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["sbatch", "--parsable", *map(str, args)], env=env, cwd=cwd, capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip


@pytest.mark.slurm
def test_the_documented_array_job_writes_the_files_of_a_local_run(slurm_cluster, tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "a.txt").write_text(TEXT * 3)
    (corpus / "long.txt").write_text(TEXT * 12)  # 12 shards of 4 lines, dealt to the 3 tasks
    (corpus / "sub" / "b.txt.gz").write_bytes(gzip.compress(TEXT.encode()))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    export = f"--export=ALL,MODEL={saved_model()},INPUT={corpus},OUT={tmp_path / 'out'}"
    # The two commands of docs/prediction.md, on 3 tasks; --wait holds until the last job ended.
    first = sbatch("--array=0-2", export, SCRIPT, "--chunk-lines", "4", env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assemble = 'ner-predict "$MODEL" "$INPUT" --output-dir "$OUT" --threads 1 --quiet'
    after = [f"--dependency=afterok:{first.stdout.strip()}", "--kill-on-invalid-dep=yes"]
    last = sbatch(
        "--wait", *after, export, "--wrap", f"{assemble} --chunk-lines 4", env=env, cwd=tmp_path
    )
    assert last.returncode == 0, last.stderr
    # sbatch --wait says 0 for a job cancelled by its dependency too: ask the accounting.
    jobs = f"{first.stdout.strip()},{last.stdout.strip()}"
    states = subprocess.run(
        ["sacct", "-X", "-n", "-P", "-o", "JobID,State", "-j", jobs],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    logs = "".join(log.read_text() for log in sorted(tmp_path.glob("slurm-*.out")))
    assert [state.split("|")[1] for state in states] == ["COMPLETED"] * 4, f"{states}\n{logs}"
    local = tmp_path / "local"
    ner_predict(saved_model(), corpus, "--output-dir", local, "--jobs", "1", "--threads", "1",
                "--chunk-lines", "4", env=env)  # fmt: skip
    for name in ("a.jsonl", "long.jsonl", "sub/b.jsonl"):
        assert (tmp_path / "out" / name).read_bytes() == (local / name).read_bytes(), name
