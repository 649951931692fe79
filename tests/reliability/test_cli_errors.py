"""Console scripts on bad arguments and signals: one clear message, never a traceback."""

import subprocess
import sys

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
        "ner-predict: error: argument --encoding: unknown encoding 'bogus'"
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
