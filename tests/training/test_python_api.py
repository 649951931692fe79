"""The Python API's example in docs/training.md, run exactly as written in a fresh folder on the
walkthrough's one-file corpus: it trains through the same configs as ``ner-train`` and writes
the same run folder; `ner.evaluate` gives a run's own scores back, scores a model on a corpus
read with its options, and refuses a model without a corpus; `ner.train` takes a composed
config and a run folder."""

import ast
import json
import os
import re
import subprocess
import sys

import pytest
from test_own_corpus_walkthrough import write_tsv
from tiny_tagger import SENTENCES, one_thread, saved_model

from ner.common.errors import InputError
from ner.common.paths import PROJECT_ROOT
from ner.data.tag_schemes import tags_to_spans
from ner.training.api import compose_config, evaluate, train

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


def test_train_takes_a_composed_config_and_evaluate_scores_a_model_on_an_export(
    tmp_path, monkeypatch
):
    lines = []
    for tokens, tags in SENTENCES:  # as doccano exports them: text and character spans
        words = tokens.split()
        starts = [sum(len(w) + 1 for w in words[:i]) for i in range(len(words))]
        label = [
            [starts[a], starts[b - 1] + len(words[b - 1]), kind]
            for kind, a, b in tags_to_spans(tags.split(), "iob2")
        ]
        lines.append(json.dumps({"text": tokens, "label": label}) + "\n")
    export = tmp_path / "doccano.jsonl"
    export.write_text("".join(lines))
    options = {"format": "doccano", "holdout": 0.25}
    monkeypatch.setenv("NER_DATA_DIR", str(tmp_path / "data"))
    with one_thread():
        scores = evaluate(saved_model(), str(export), split="test", options=options)
        assert scores["sentences"] == 2 and 0 <= scores["f1"] <= 100
        data = [f"data.name={export}", "data.options.format=doccano", "data.options.holdout=0.25"]
        tiny = ["elmo=none", "embeddings=words", "trainer.max_epochs=2", "logger=none"]
        config = compose_config([*data, *tiny])
        run = train(config, run_dir=tmp_path / "run")
    assert run.run_dir == tmp_path / "run" and (run.run_dir / "results.json").is_file()
    assert run.results["data"]["spans"]["train"]["kept"] > 0
    assert run.tagger.predict("Anna likes Rome .")[0].text == "Anna likes Rome ."
    with pytest.raises(InputError, match="pass a config or overrides, not both"):
        train(config, overrides=["seed=2"])
