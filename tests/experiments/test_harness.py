"""The benchmarks' shared harness (experiments/bench/harness.py) on tiny shapes: the matmul
peak, memory readings, fresh processes taking turns with the code of a given tree, the record;
and the prediction and training benchmarks end to end on an 8-sentence corpus."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import harness
import numpy as np
import pytest
from test_study import run, write_tiny_corpus

from ner.common.paths import PROJECT_ROOT
from ner.tagger.model import TaggerModel

BENCH = PROJECT_ROOT / "experiments" / "bench"


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_the_matmul_peak_is_a_finite_positive_rate(dtype):
    rate = harness.matmul_peak(dtype, size=64, repeats=2)
    assert 0 < rate < math.inf
    assert harness.matmul_peak(dtype, size=64, repeats=2, wall=True) > 0


def test_memory_readings_follow_an_allocation():
    current, peak = harness.memory_mb()
    assert 0 < current <= peak
    block = np.ones(100 * 2**20 // 8)  # 100 MB, written
    after, peak_after = harness.memory_mb()
    assert after >= current + 90 and peak_after >= after
    assert harness.peak_rss_mb() >= after
    del block
    done = subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert done.returncode == 0
    assert harness.memory_mb(2**22 + 12345) is None  # no such process


def test_run_measured_reports_each_childs_own_peak_and_exit_code():
    big = harness.run_measured(
        [sys.executable, "-c", "import time; b = bytearray(150 * 2**20); time.sleep(0.5)"]
    )
    small = harness.run_measured([sys.executable, "-c", "import sys; sys.exit(3)"])
    assert big["returncode"] == 0 and big["peak_rss_mb"] >= 150
    assert small["returncode"] == 3 and small["peak_rss_mb"] < 100  # not the earlier child's
    assert big["wall_seconds"] > 0 and big["cpu_seconds"] > 0


def fake_tree(folder: Path, version: str) -> Path:
    """A tree whose `ner` package only says which version it is."""
    (folder / "ner").mkdir(parents=True)
    (folder / "ner" / "__init__.py").write_text(f"VERSION = {version!r}\n")
    return folder


def test_setups_take_turns_in_fresh_processes_each_importing_ner_from_its_tree(tmp_path):
    trees = {name: fake_tree(tmp_path / name, name) for name in ("old", "new")}
    script = tmp_path / "measure.py"
    script.write_text(
        "import json, os, sys, time, ner\n"
        "print('progress')\n"
        "time.sleep(0.3)  # long enough for the peak-memory sampler to see the process\n"
        "print(json.dumps({'version': ner.VERSION, 'rate': float(sys.argv[1]),"
        " 'threads': os.environ['OMP_NUM_THREADS']}))\n"
    )
    order = []

    def measure(name: str, number: int) -> dict:
        order.append(name)
        rate = {"old": 10.0, "new": 15.0}[name] + number
        return harness.fresh_process(script, [str(rate)], trees[name])

    measured = harness.alternate(["old", "new"], 3, measure)
    assert order == ["old", "new", "new", "old", "old", "new"]
    assert [r["version"] for r in measured["old"]] == ["old"] * 3
    assert [r["version"] for r in measured["new"]] == ["new"] * 3
    assert {r["threads"] for rs in measured.values() for r in rs} == {"1"}
    assert all(r["process_peak_rss_mb"] > 0 for r in measured["new"])
    ratios = harness.paired_ratios(measured, "old", "rate")
    assert ratios == {"new": [1.5, round(16 / 11, 3), round(17 / 12, 3)]}
    assert harness.median(ratios["new"]) == round(16 / 11, 3)
    broken = tmp_path / "broken.py"
    broken.write_text("raise SystemExit('no figures here')\n")
    with pytest.raises(RuntimeError, match="no figures here"):
        harness.fresh_process(broken, [], trees["new"])


def test_a_record_names_its_command_machine_and_figures(tmp_path):
    argv = [str(BENCH / "predict.py"), "--rounds", "2"]
    record = harness.write_record(tmp_path / "sub" / "record.json", {"rate": 1.5}, argv)
    written = json.loads((tmp_path / "sub" / "record.json").read_text())
    assert written == record
    assert written["command"] == ".venv/bin/python experiments/bench/predict.py --rounds 2"
    assert written["machine"]["cores"] == os.cpu_count() and written["rate"] == 1.5
    assert written["measured_at"].endswith("UTC")


def test_the_default_tagger_spec_has_the_corpus_tags_and_the_bilm_layers():
    spec = harness.default_tagger_spec([["B-PER", "O"], ["B-LOC"]], harness.FIXTURE_BILM)
    assert set(spec["model"]["tags"]) >= {"S-PER", "S-LOC", "O"}
    options = json.loads((harness.FIXTURE_BILM / "options.json").read_text())
    assert spec["model"]["elmo_dim"] == 2 * options["lstm"]["projection_dim"]
    assert spec["bilm"]["weights"].endswith("lm_weights.hdf5")
    assert harness.default_tagger_spec([["O"]], None)["bilm"] is None
    model = TaggerModel(**spec["model"], num_words=5, num_chars=5)
    assert (model.config["word_dim"], model.config["char_filters"]) == (50, 128)


def bench(script: str, *args: str) -> subprocess.CompletedProcess:
    return run([sys.executable, str(BENCH / script), *args], timeout=600)


@pytest.mark.slow
def test_the_prediction_benchmark_compares_two_trees_on_a_tiny_corpus(tmp_path):
    corpus = write_tiny_corpus(tmp_path / "tiny")
    out = tmp_path / "predict.json"
    bench("predict.py", "--corpus", str(corpus), "--bilm", "fixture", "--old", str(PROJECT_ROOT),
          "--out", str(out))  # fmt: skip
    record = json.loads(out.read_text())
    assert list(record["runs"]) == ["old", "new"] and record["sentences"] == 4
    for runs in record["runs"].values():
        assert runs[0]["pretokenized_sentences_per_cpu_second"] > 0
    same = record["outputs_against_old"]["new"]
    assert same["sentences_with_identical_tags"] == 4 and same["identical_entities"]
    assert same["max_confidence_difference"] == 0.0  # the same code and model


@pytest.mark.slow
def test_the_training_benchmark_times_an_epoch_per_setup_on_a_tiny_corpus(tmp_path):
    corpus = write_tiny_corpus(tmp_path / "tiny")
    out = tmp_path / "train.json"
    bench("train.py", "--experiment", "conll2003_glove", "--compare", "model.hidden_size=8",
          "model.hidden_size=16", "--out", str(out), "--set", f"data.name={corpus}",
          "embeddings=words", "elmo=none", "embeddings.glove.dim=8", "embeddings.char.filters=8",
          "model.num_layers=1")  # fmt: skip
    record = json.loads(out.read_text())
    runs = record["runs"]
    assert list(runs) == ["new model.hidden_size=8", "new model.hidden_size=16"]
    for [measured] in runs.values():
        assert (
            measured["epochs"] == 1
            and measured["epoch_seconds"] > 0
            and measured["peak_rss_mb"] > 100
        )
        assert measured["sentences"]["train"] == 8


def test_records_name_trees_without_machine_paths(tmp_path):
    assert harness.tree_label(harness.REPO) == "."
    assert harness.tree_label(tmp_path / "old-tree") == "old-tree"
