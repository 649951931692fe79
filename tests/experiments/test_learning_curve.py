"""The learning-curve runner (experiments/study/learning_curve.py): its plan, and a tiny end-to-end
run that trains, writes learning_curve.json/.md/.png, and skips finished runs when rerun."""

import argparse
import importlib.util
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module
from test_study import ENV, write_tiny_corpus

from ner.common.paths import PROJECT_ROOT
from ner.pretrain import PRETRAINED_DIR, SHIPPED_MODEL
from ner.reporting.runs import ReportError

RUNNER = PROJECT_ROOT / "experiments" / "study" / "learning_curve.py"
spec = importlib.util.spec_from_file_location("learning_curve", RUNNER)
learning_curve = importlib.util.module_from_spec(spec)
sys.modules["learning_curve"] = learning_curve  # its dataclass looks its module up there
spec.loader.exec_module(learning_curve)


def test_the_plan_has_five_seeds_up_to_ten_percent_and_three_above() -> None:
    names = list(learning_curve.variants(PRETRAINED_DIR / SHIPPED_MODEL))
    assert names == ["glove", "elmo_glove_old", "elmo_glove_new"]
    seeds: dict[tuple[float, str], set[int]] = {}
    for run in learning_curve.plan(names):
        seeds.setdefault((run.fraction, run.variant), set()).add(run.seed)
    assert {fraction for fraction, _ in seeds} == {0.02, 0.05, 0.1, 0.25, 0.5, 1.0}
    for (fraction, _), chosen in seeds.items():
        assert len(chosen) >= (5 if fraction <= 0.1 else 3)
    assert "elmo_glove_new" not in learning_curve.variants(None)


def test_the_plan_spans_every_fraction_with_one_seed_before_adding_seeds() -> None:
    runs = learning_curve.plan(["glove", "elmo_glove_new"])
    first_round = [(run.fraction, run.variant) for run in runs[:12]]
    assert first_round == [
        (f, v) for f in learning_curve.FRACTIONS for v in ("glove", "elmo_glove_new")
    ]
    assert {run.seed for run in runs[:12]} == {1}
    assert (runs[12].fraction, runs[12].seed) == (0.02, 2)
    assert [run.seed for run in runs[-6:]] == [5] * 6  # the last round: fractions up to 10%


def test_smaller_subsets_get_more_epochs_and_sparser_dev_scoring() -> None:
    budgets = [learning_curve.budget(f) for f in learning_curve.FRACTIONS]  # 2% … 100%
    assert budgets[-1] == {"max_epochs": 20, "patience": 5, "eval_every": 1}  # the study's
    assert budgets[0] == {"max_epochs": 200, "patience": 50, "eval_every": 5}
    epochs = [b["max_epochs"] for b in budgets]
    assert epochs == sorted(epochs, reverse=True)
    run = learning_curve.Run(0.05, "glove", 1)
    values = learning_curve.overrides(run, ["experiment=conll2003_glove"], [])
    with initialize_config_module("ner.conf", version_base="1.3"):
        cfg = compose("train", overrides=values)
    assert (cfg.trainer.max_epochs, cfg.trainer.patience, cfg.trainer.eval_every) == (121, 31, 2)
    assert cfg.data.train_fraction == 0.05


def tiny_runner_command(tmp_path: Path, *options: str, epochs: int = 1) -> list[str]:
    """`learning_curve.py run` on an 8-sentence corpus with a tiny tagger, fractions 50% and
    100%, seed 1, into ``tmp_path/runs`` and ``tmp_path/out``; patience as long as the epochs,
    so a long run is not ended early by a flat dev score."""
    corpus = write_tiny_corpus(tmp_path / "tiny")
    return [
        sys.executable, str(RUNNER), "run", *options,
        "--new-bilm", str(PRETRAINED_DIR / SHIPPED_MODEL),
        "--fractions", "0.5", "1", "--seeds", "1",
        "--runs-dir", str(tmp_path / "runs"), "--out", str(tmp_path / "out"), "--poll", "0.5",
        "--set", f"data.name={corpus}", "embeddings.glove.source=null", "embeddings.glove.dim=8",
        "embeddings.char.filters=8", "model.hidden_size=8", "model.num_layers=1",
        f"trainer.max_epochs={epochs}", f"trainer.patience={epochs}",
    ]  # fmt: skip


@pytest.mark.slow
def test_a_tiny_learning_curve_is_trained_collected_and_not_trained_again(tmp_path: Path) -> None:
    command = tiny_runner_command(tmp_path, "--variants", "glove", "elmo_glove_new")

    def run() -> str:
        done = subprocess.run(
            command, cwd=PROJECT_ROOT, env=ENV, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        return done.stdout

    assert "4 run(s) to do of 4" in run()
    content = json.loads((tmp_path / "out" / "learning_curve.json").read_text())
    assert sorted((r["fraction"], r["variant"]) for r in content["runs"]) == [
        (0.5, "elmo_glove_new"), (0.5, "glove"), (1.0, "elmo_glove_new"), (1.0, "glove"),
    ]  # fmt: skip
    for record in content["runs"]:
        assert {"fraction", "variant", "seed", "test_f1", "dev_f1", "epochs"} <= set(record)
        assert record["epochs"] == 1
    half = next(r for r in content["runs"] if r["fraction"] == 0.5)
    assert half["train_sentences"] == 4  # half of the 8 training sentences
    assert [(t["fraction"], t["variant_a"], t["variant_b"]) for t in content["tests"]] == [
        (0.5, "elmo_glove_new", "glove"),
        (1.0, "elmo_glove_new", "glove"),
    ]
    assert all(0 < t["p_value"] <= 1 for t in content["tests"])
    assert (tmp_path / "out" / "learning_curve.png").stat().st_size > 0
    assert "| 50% |" in (tmp_path / "out" / "learning_curve.md").read_text()
    again = run()
    assert "0 run(s) to do of 4" in again and "start " not in again

    # The records alone carry the study: without its run folders nothing is trained again and
    # the same JSON comes out, paired tests included.
    records = sorted((tmp_path / "out" / "learning_curve_runs").rglob("seed1.json"))
    assert len(records) == 4
    record = json.loads(records[0].read_text())
    assert len(record["test_counts"]) == 4 and len(record["test_gold_sha256"]) == 64
    shutil.rmtree(tmp_path / "runs")
    after = run()
    assert "0 run(s) to do of 4" in after and "start " not in after
    assert json.loads((tmp_path / "out" / "learning_curve.json").read_text()) == content
    # collect reads the records alone: a biLM folder that is gone still names its variant.
    gone = str(tmp_path / "gone")
    for command_name, expected in (("collect", 0), ("run", 2)):
        changed = [command_name, *command[3:]]
        changed[changed.index("--new-bilm") + 1] = gone
        done = subprocess.run(
            [*command[:2], *changed], cwd=PROJECT_ROOT, env=ENV, capture_output=True, text=True
        )
        assert done.returncode == expected, done.stderr[-2000:]
    assert json.loads((tmp_path / "out" / "learning_curve.json").read_text()) == content
    assert "gone: no weights.hdf5 there" in done.stderr


def test_an_old_bilm_folder_replaces_the_shipped_one_in_the_old_variant(tmp_path: Path) -> None:
    shipped = PRETRAINED_DIR / SHIPPED_MODEL
    found = learning_curve.variants(tmp_path / "new", old_bilm=tmp_path / "old")
    with initialize_config_module("ner.conf", version_base="1.3"):
        old = compose("train", overrides=found["elmo_glove_old"])
        default = compose("train", overrides=learning_curve.variants(None)["elmo_glove_old"])
        new = compose("train", overrides=found["elmo_glove_new"])
    assert old.elmo.weight_file == str(tmp_path / "old" / "weights.hdf5")
    assert old.elmo.options_file == str(tmp_path / "old" / "options.json")
    assert new.elmo.weight_file == str(tmp_path / "new" / "weights.hdf5")
    assert Path(default.elmo.weight_file).resolve() == (shipped / "weights.hdf5").resolve()
    assert old.elmo.name != new.elmo.name


def test_more_bilms_by_name_are_variants_of_their_own(tmp_path: Path) -> None:
    name, folder = learning_curve.named_folder(f"wide={tmp_path / 'wide'}")
    found = learning_curve.variants(tmp_path / "new", more={name: folder})
    assert sorted(found) == ["elmo_glove_new", "elmo_glove_old", "elmo_glove_wide", "glove"]
    with initialize_config_module("ner.conf", version_base="1.3"):
        wide = compose("train", overrides=found["elmo_glove_wide"])
    assert wide.elmo.weight_file == str(tmp_path / "wide" / "weights.hdf5")
    assert wide.elmo.name == "wide"
    for wrong in ("wide", "new=dir", "two words=dir"):
        with pytest.raises(argparse.ArgumentTypeError, match="NAME=DIR"):
            learning_curve.named_folder(wrong)


def test_adapted_variants_adapt_the_old_bilm_on_the_training_text_and_the_named_text() -> None:
    found = learning_curve.variants(
        None, adapt=True, adapt_lr_scales=[0.1], adapt_texts=["reuters", "my.txt"]
    )
    with initialize_config_module("ner.conf", version_base="1.3"):
        old, task, scaled, domain = (
            compose("train", overrides=found[name])
            for name in ("elmo_glove_old", "elmo_glove_task", "elmo_glove_task_lr0.1",
                         "elmo_glove_domain")
        )  # fmt: skip
    assert (old.elmo.adapt, task.elmo.adapt, scaled.elmo.adapt_lr_scale) == ("none", "task", 0.1)
    assert (domain.elmo.adapt, domain.elmo.adapt_text) == ("domain", ["reuters", "my.txt"])
    assert domain.elmo.weight_file == old.elmo.weight_file == task.elmo.weight_file
    assert "elmo_glove_domain" not in learning_curve.variants(None, adapt=True)


def test_another_corpus_runs_its_own_experiments_into_its_own_files(tmp_path: Path) -> None:
    found = learning_curve.variants(tmp_path / "new", corpus="conll2000")
    with initialize_config_module("ner.conf", version_base="1.3"):
        glove = compose("train", overrides=found["glove"])
        new = compose("train", overrides=found["elmo_glove_new"])
    assert (glove.data.name, glove.variant, glove.elmo) == ("conll2000", "glove", None)
    assert (new.data.name, new.elmo.weight_file) == (
        "conll2000", str(tmp_path / "new" / "weights.hdf5"),
    )  # fmt: skip
    assert learning_curve.result_stem("conll2000") == "learning_curve_conll2000"
    assert learning_curve.result_stem("conll2003") == "learning_curve"


@pytest.mark.slow
def test_a_stopped_runner_stops_its_run_which_the_next_runner_resumes(tmp_path: Path) -> None:
    command = tiny_runner_command(tmp_path, "--variants", "glove", epochs=100_000)

    def stop_when_logged(process: subprocess.Popen, text: str) -> str:
        """SIGTERM `process` once the run's log shows `text`; its output."""
        deadline = time.monotonic() + 300
        while text not in seed_log.read_text() and time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()[0].decode()[-3000:]
            time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=120)[0].decode()
        assert process.returncode == 128 + signal.SIGTERM, output[-3000:]
        return output

    def start_runner() -> subprocess.Popen:
        return subprocess.Popen(
            command, cwd=PROJECT_ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )

    seed_log = tmp_path / "runs" / "0.5" / "glove" / "seed1.log"
    seed_log.parent.mkdir(parents=True)
    seed_log.touch()
    output = stop_when_logged(start_runner(), "epoch 2/")
    assert "stopping 1 run(s)" in output
    assert "SIGTERM: stopped after" in seed_log.read_text()  # the run saved its checkpoint
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True)
    assert left.stdout == "", f"training processes left running: {left.stdout}"
    stop_when_logged(start_runner(), "resumed after epoch")


def test_the_table_leaves_out_seed_level_p_values_of_single_seeds() -> None:
    records = [
        {"fraction": f, "variant": v, "seed": s, "test_f1": 70.0 + s + (v == "glove")}
        for f, seeds in ((0.02, (1, 2)), (0.05, (1,)))
        for v in ("glove", "elmo_glove_new")
        for s in seeds
    ]
    tests = [
        {
            "fraction": f, "variant_a": "elmo_glove_new", "variant_b": "glove", "p_value": 0.01,
            "seed_level": {"difference": -1.0, "p_value": p, "seeds_a": n, "seeds_b": n},
            "paired": {"seeds": list(range(1, n + 1)), "p_value": 0.01},
        }
        for f, n, p in ((0.02, 2, 0.333), (0.05, 1, 1.0))
    ]  # fmt: skip
    rows = learning_curve.table(records, tests).splitlines()
    assert "| 2% | 71.50 ± 0.71 (2) | 72.50 ± 0.71 (2) |" in rows
    assert "| 2% | `elmo_glove_new` | `glove` | -1.00 | 0.0100 * (2) | 0.333 |" in rows
    assert "| 5% | `elmo_glove_new` | `glove` | -1.00 | 0.0100 * (1) | – |" in rows


def test_records_pair_only_seeds_with_counts_on_both_sides_and_the_same_test_data() -> None:
    def record(counts: list | None, digest: str | None = "a" * 64) -> dict:
        return {"test_counts": counts, "test_gold_sha256": digest if counts else None}

    a = {1: record([[1, 1, 1]]), 2: record(None), 3: record([[0, 1, 1]])}
    b = {1: record([[0, 0, 1]]), 2: record([[1, 1, 1]]), 4: record([[1, 1, 1]])}
    paired = learning_curve.paired_records(a, b, "where")
    assert list(paired) == [1]  # seed 2 has no counts in A, seeds 3 and 4 ran on one side only
    assert [counts.tolist() for counts in paired[1]] == [[[1, 1, 1]], [[0, 0, 1]]]
    b[3] = record([[0, 1, 1]], digest="b" * 64)
    with pytest.raises(ReportError, match="where: seed 3's records were scored on different"):
        learning_curve.paired_records(a, b, "where")
