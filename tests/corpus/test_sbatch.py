"""scripts/tag-corpus.sbatch, run as SLURM runs each task of its array (bash with the task's
variables), then the assembling run: the files are those of the single-input command."""

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
    for task in ("0", "1"):
        subprocess.run(["bash", SCRIPT], env={**env, "SLURM_ARRAY_TASK_ID": task}, check=True)
    assert not list((tmp_path / "out").glob("*.jsonl"))  # the tasks assemble nothing
    ner_predict(saved_model(), corpus, "--output-dir", tmp_path / "out", "--threads", "1", env=env)
    for name in ("a", "b", "c"):
        single = tmp_path / f"{name}.jsonl"
        args = [str(corpus / f"{name}.txt"), "-o", str(single), "--threads", "1"]
        with one_thread():
            assert main([str(saved_model()), *args]) == 0
        assert (tmp_path / "out" / f"{name}.jsonl").read_bytes() == single.read_bytes()
