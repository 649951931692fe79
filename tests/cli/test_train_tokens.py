"""End-to-end training on per-token labels (``ner-train`` in a subprocess): a column file of
part-of-speech tags with a softmax per token, and a CoNLL-U folder with the CRF and the fixture
biLM; both select on dev accuracy and write test.accuracy."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from ner.common.paths import PROJECT_ROOT

WORDS = {
    ("DET", "DT"): ["the", "a", "this"],
    ("ADJ", "JJ"): ["big", "red", "old"],
    ("NOUN", "NN"): ["dog", "cat", "house", "car"],
    ("VERB", "VBZ"): ["sees", "likes", "takes"],
    ("PUNCT", "."): ["."],
}
PATTERN = [("DET", "DT"), ("ADJ", "JJ"), ("NOUN", "NN"), ("VERB", "VBZ"), ("DET", "DT"),
           ("NOUN", "NN"), ("PUNCT", ".")]  # fmt: skip


def sentences(count: int, seed: int) -> list[list[tuple[str, str, str]]]:
    """(word, upos, xpos) sentences from one template, the adjective present half the time."""
    rng = random.Random(seed)
    result = []
    for _ in range(count):
        slots = [s for s in PATTERN if s[0] != "ADJ" or rng.random() < 0.5]
        result.append([(rng.choice(WORDS[slot]), *slot) for slot in slots])
    return result


def write_corpora(root: Path) -> tuple[Path, Path]:
    """The same kind of sentences as ``word XPOS`` column files and as CoNLL-U files (with a
    multiword token line and an empty node the reader must skip)."""
    columns, conllu = root / "pos", root / "ud"
    columns.mkdir(parents=True)
    conllu.mkdir(parents=True)
    for seed, split in enumerate(("train", "dev", "test")):
        data = sentences(120 if split == "train" else 30, seed)
        lines = [line for s in data for line in [*(f"{w} {x}" for w, _, x in s), ""]]
        (columns / f"{split}.txt").write_text("\n".join(lines) + "\n")
        rows = []
        for index, sentence in enumerate(data):
            rows += [
                f"# sent_id = {split}-{index}",
                f"1-2\t{sentence[0][0]}x\t_\t_\t_\t_\t_\t_\t_\t_",
            ]
            for number, (word, upos, xpos) in enumerate(sentence, start=1):
                rows.append(f"{number}\t{word}\t{word}\t{upos}\t{xpos}\t_\t0\tdep\t_\t_")
                if number == 2:
                    rows.append("2.1\tgone\tgo\tVERB\tVBN\t_\t_\t_\t0:root\t_")
            rows.append("")
        (conllu / f"tiny-ud-{split}.conllu").write_text("\n".join(rows) + "\n")
    return columns, conllu


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("tokens")
    columns, conllu = write_corpora(root)
    env = {**os.environ, "NER_DATA_DIR": str(root / "data"), "OMP_NUM_THREADS": "1"}
    return {"root": root, "columns": columns, "conllu": conllu, "env": env}


def train(workspace: dict, run_dir: Path, *args: str) -> dict:
    common = [
        "embeddings=words", "trainer.max_epochs=4", "data.batch_size=16", "model.hidden_size=32",
        "trainer.optimizer.lr=0.01", "progress=false", "logger=none", f"hydra.run.dir={run_dir}",
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "ner.cli.train", *common, *args],
        cwd=PROJECT_ROOT,
        env=workspace["env"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((run_dir / "results.json").read_text())


@pytest.fixture(scope="module")
def softmax_run(workspace) -> Path:
    run_dir = workspace["root"] / "softmax"
    train(workspace, run_dir, f"data.name={workspace['columns']}", "elmo=none", "model.crf=false")
    return run_dir


@pytest.fixture(scope="module")
def crf_run(workspace) -> Path:
    run_dir = workspace["root"] / "crf"
    train(
        workspace,
        run_dir,
        f"data.name={workspace['conllu']}",
        "data.options.format=conllu",
        "data.options.label_column=upos",
        "elmo=fixture",
        "model.crf=true",
    )
    return run_dir


@pytest.mark.slow
@pytest.mark.parametrize("run", ["softmax_run", "crf_run"])
def test_per_token_runs_select_on_accuracy_and_write_it(run, request):
    run_dir = request.getfixturevalue(run)
    results = json.loads((run_dir / "results.json").read_text())
    assert results["labels"] == "tokens" and results["metric"] == "accuracy"
    assert results["corpus_scheme"] == results["model_scheme"] == "tokens"
    for split in ("dev", "test"):
        assert {"accuracy", "per_label", "confusions", "support"} <= set(results[split])
        assert "f1" not in results[split]
    assert results["test"]["accuracy"] > 90, "the template corpus is easy; the tagger must learn it"
    # The best epoch is the one with the best dev accuracy, and the log's curve says so.
    curve = [h["dev/accuracy"] for h in results["history"]]
    assert max(curve) == curve[results["best_epoch"] - 1] == results["dev"]["accuracy"]
    rows = [line.split() for line in (run_dir / "predictions_test.txt").read_text().splitlines()]
    rows = [row for row in rows if row]
    correct = sum(row[1] == row[2] for row in rows)
    assert results["test"]["accuracy"] == pytest.approx(100 * correct / len(rows))


@pytest.mark.slow
def test_the_softmax_model_has_no_crf_and_the_crf_model_mixes_elmo(softmax_run, crf_run):
    softmax = json.loads((softmax_run / "model" / "archive.json").read_text())["model_config"]
    crf = json.loads((crf_run / "model" / "archive.json").read_text())["model_config"]
    assert (softmax["crf"], softmax["tag_scheme"]) == (False, "tokens")
    assert set(softmax["tags"]) == {"DT", "JJ", "NN", "VBZ", "."}
    assert (crf["crf"], crf["tag_scheme"]) == (True, "tokens")
    assert set(crf["tags"]) == {"ADJ", "DET", "NOUN", "PUNCT", "VERB"}  # the skipped 2.1 is VERB
    results = json.loads((crf_run / "results.json").read_text())
    assert len(results["elmo_mix"]["weights"]) == 3
    # 6 or 7 words per sentence: the multiword line (1-2) and the empty node (2.1) are skipped.
    assert results["tokens"]["test"] == sum(len(s) for s in sentences(30, 2))


@pytest.mark.slow
def test_crf_false_on_chunk_tags_is_refused(workspace, tmp_path):
    corpus = tmp_path / "ner"
    corpus.mkdir()
    for split in ("train", "dev", "test"):
        (corpus / f"{split}.txt").write_text("Paris B-LOC\nis O\n")
    done = subprocess.run(
        [sys.executable, "-m", "ner.cli.train", f"data.name={corpus}", "elmo=none",
         "embeddings=words", "model.crf=false", "logger=none", f"hydra.run.dir={tmp_path / 'r'}"],
        cwd=PROJECT_ROOT, env=workspace["env"], capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode != 0
    assert "model.crf=false" in done.stderr and "need the CRF" in done.stderr


@pytest.mark.slow
def test_reevaluating_a_per_token_run_gives_its_accuracy(softmax_run, workspace, monkeypatch):
    from ner.training.reevaluate import evaluate_run

    monkeypatch.setenv("NER_DATA_DIR", workspace["env"]["NER_DATA_DIR"])
    scores = evaluate_run(softmax_run, split="test")
    results = json.loads((softmax_run / "results.json").read_text())
    assert scores["accuracy"] == pytest.approx(results["test"]["accuracy"])
    assert (softmax_run / "eval_pos_test.json").is_file()
