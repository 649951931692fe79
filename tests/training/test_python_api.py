"""The Python API's example in docs/training.md, run exactly as written in a fresh folder on the
walkthrough's one-file corpus: it trains through the same configs as ``ner-train`` and writes
the same run folder; `ner.evaluate` gives a run's own scores back, and refuses a model
without a corpus."""

import ast
import json
import os
import re
import subprocess
import sys

import pytest
from test_own_corpus_walkthrough import write_tsv

from ner.common.errors import InputError
from ner.common.paths import PROJECT_ROOT
from ner.training.api import evaluate

DOCS = PROJECT_ROOT / "docs" / "training.md"


def documented_example() -> str:
    section = DOCS.read_text().split("## Training from Python", 1)[1]
    return re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)


def test_the_documented_example_trains_and_evaluates(tmp_path):
    example = documented_example()
    assert len(ast.parse(example).body) == 3  # import, train, evaluate
    write_tsv(tmp_path / "mydata.tsv")
    done = subprocess.run(
        [sys.executable, "-c", example],
        cwd=tmp_path,
        env={**os.environ, "NER_DATA_DIR": str(tmp_path / "data"), "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    test_f1, dev_f1, entities = done.stdout.strip().split(" ", 2)
    (run_dir,) = (tmp_path / "outputs").glob("*/*")
    results = json.loads((run_dir / "results.json").read_text())
    assert float(test_f1) == results["test"]["f1"]
    assert float(dev_f1) == pytest.approx(results["dev"]["f1"])
    assert "hydra" not in (run_dir / "config.yaml").read_text()
    assert results["config"]["data"]["options"]["holdout"] == 0.1
    assert entities.startswith("[")
    with pytest.raises(InputError, match="is a model, not a run; name a corpus"):
        evaluate(run_dir / "model")
