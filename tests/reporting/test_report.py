"""`ner-report`: grouping, seed statistics, the study JSON, plots, warnings and errors,
on results.json files written in ner.cli.train's schema (tests/test_study.py feeds it real runs)."""

import json
import os
import statistics
from pathlib import Path

import pytest

from ner.cli.report import main
from ner.reporting.report import BEGIN, END
from ner.reporting.runs import ReportError, load_runs, variant_name

TYPES = ("LOC", "MISC", "ORG", "PER")


def config(corpus: str = "conll2003", variant: str | None = "glove", **model) -> dict:
    """A resolved config as ner.cli.train records it (the parts the report reads)."""
    elmo = variant is None or "elmo" in variant
    return {
        "data": {"name": corpus, "options": {}, "max_sentences": None, "batch_size": 64},
        "embeddings": {
            "glove": {"source": "glove.6B.50d", "dim": 50, "trainable": True},
            "char": {"dim": 16, "filters": 128, "width": 3, "max_chars": 50},
            "elmo": {"cache": True, "mix_l2": 0.1} if elmo else None,
        },
        "elmo": {"name": "small_news", "options_file": "o.json", "weight_file": "w.hdf5"},
        "model": {"elmo_mix_layers": None, "elmo_fixed_weights": None, **model},
        "trainer": {"max_epochs": 20, "patience": 5, "num_threads": 1},
        "logger": {"_target_": "ner.training.loggers.NullLogger"},
        "seed": 0,
        **({"variant": variant} if variant else {}),
    }


def scores(f1: float) -> dict:
    per_type = {
        t: {"precision": f1, "recall": f1, "f1": f1 + i, "support": 9} for i, t in enumerate(TYPES)
    }
    strict = {"precision": f1, "recall": f1, "f1": f1 - 0.5, "support": 36, "per_type": {}}
    surface = {"precision": f1, "recall": f1, "f1": f1 + 0.5, "support": 30, "per_type": {}}
    return {
        "precision": f1,
        "recall": f1,
        "f1": f1,
        "support": 36,
        "per_type": per_type,
        "strict": strict,
        "surface": surface,
    }


def write_run(
    folder: Path,
    seed: int,
    dev: float,
    test: float,
    cfg: dict,
    mix: dict | None = None,
    still_improving: bool = False,
) -> Path:
    """A results.json with the trainer's keys: 3 epochs, the best (`dev`) the 2nd and then an early
    stop, or with `still_improving` the 3rd and last."""
    folder.mkdir(parents=True, exist_ok=True)
    curve = [dev - 2, dev - 1, dev] if still_improving else [dev - 2, dev, dev - 1]
    history = [
        {"epoch": e, "dev/f1": f1, "train/loss_per_token": 1.0 / e} for e, f1 in enumerate(curve, 1)
    ]
    results = {
        "dev": scores(dev), "test": scores(test), "best_epoch": 3 if still_improving else 2,
        "epochs_run": 3, "stopped_early": not still_improving, "seed": seed,
        "corpus_scheme": "iob2", "model_scheme": "bioes", "sentences": {}, "tokens": {},
        "time_seconds": {"total": 120.0 * seed}, "train_tokens_per_second": 1000.0,
        "elmo_mix": mix or {}, "history": history, "git_commit": "abc",
        "config": {**cfg, "seed": seed},
    }  # fmt: skip
    (folder / "results.json").write_text(json.dumps(results))
    return folder


@pytest.fixture
def study(tmp_path: Path) -> Path:
    """glove × 3 seeds and elmo_glove × 2 seeds (in a Hydra multirun-like layout) on conll2003,
    plus one conll2000 run."""
    root = tmp_path / "runs"
    for seed, (dev, test) in zip(
        (1, 2, 3), [(93.0, 89.0), (94.0, 90.5), (95.0, 91.0)], strict=True
    ):
        write_run(root / "glove" / str(seed - 1), seed, dev, test, config())
    mix = {"layers": [0, 1, 2], "weights": [0.2, 0.3, 0.5], "gamma": 1.5}
    for seed, test in ((1, 91.5), (2, 92.5)):
        write_run(
            root / "elmo" / f"seed{seed}", seed, 95.0, test, config(variant="elmo_glove"), mix
        )
    write_run(root / "chunk", 1, 94.0, 93.0, config(corpus="conll2000", variant="elmo_glove"), mix)
    return root


def test_tables_give_mean_and_sample_std_over_seeds(study, tmp_path, capsys):
    out = tmp_path / "report"
    assert main([str(study), "--out", str(out), "--study-json", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    groups = {(g["corpus"], g["variant"]): g for g in report["groups"]}
    assert sorted(groups) == [
        ("conll2000", "elmo_glove"),
        ("conll2003", "elmo_glove"),
        ("conll2003", "glove"),
    ]
    glove = groups["conll2003", "glove"]
    assert glove["seeds"] == [1, 2, 3]
    assert glove["runs"] == ["../runs/glove/0", "../runs/glove/1", "../runs/glove/2"]
    assert glove["test_f1"]["mean"] == pytest.approx(90.1666666)
    assert glove["test_f1"]["std"] == pytest.approx(statistics.stdev([89.0, 90.5, 91.0]))
    assert glove["dev_f1"]["mean"] == pytest.approx(94.0) and glove["dev_f1"][
        "std"
    ] == pytest.approx(1.0)
    assert glove["per_type_test_f1"]["PER"]["mean"] == pytest.approx(90.1666666 + 3)
    assert glove["minutes"]["mean"] == pytest.approx(4.0)  # 2, 4, 6 minutes
    assert glove["mix"] is None and groups["conll2003", "elmo_glove"]["mix"]["layers"] == [0, 1, 2]
    assert glove["dev_f1_per_epoch"][0] == [91.0, 93.0, 92.0]
    assert report["warnings"] == []
    markdown = (out / "report.md").read_text()
    assert (
        "| `glove` | 1, 2, 3 | 94.00 ± 1.00 | **90.17 ± 1.04** | 89.67 ± 1.04 | 90.67 ± 1.04"
        " | 2.0 ± 0.0 | 3.0 ± 0.0 | 4.0 ± 2.0 | 1000 ± 0 |" in markdown
    )
    assert "| `elmo_glove` | 1, 2 | 95.00 ± 0.00 | **92.00 ± 0.71** |" in markdown
    assert "| `elmo_glove` | 1 | 94.00 | **93.00** |" in markdown  # one seed: no ± part
    assert (
        "| `elmo_glove` | 0, 1, 2 | 0.200 ± 0.000, 0.300 ± 0.000, 0.500 ± 0.000 | 1.500 ± 0.000 |"
        in markdown
    )
    assert markdown in capsys.readouterr().out


def test_study_json_lists_test_and_dev_f1_and_seeds_per_variant(study, tmp_path):
    main(
        [
            str(study),
            "--out",
            str(tmp_path / "r"),
            "--study-json",
            str(tmp_path / "s"),
            "--no-plots",
        ]
    )
    conll2003 = json.loads((tmp_path / "s" / "conll2003.json").read_text())
    assert conll2003 == {
        "variants": {
            "elmo_glove": {"test_f1": [91.5, 92.5], "dev_f1": [95.0, 95.0], "seeds": [1, 2]},
            "glove": {
                "test_f1": [89.0, 90.5, 91.0],
                "dev_f1": [93.0, 94.0, 95.0],
                "seeds": [1, 2, 3],
            },
        }
    }
    assert set(json.loads((tmp_path / "s" / "conll2000.json").read_text())["variants"]) == {
        "elmo_glove"
    }


def test_plots_are_written_and_linked(study, tmp_path):
    out = tmp_path / "report"
    main([str(study), "--out", str(out)])
    names = sorted(p.name for p in (out / "plots").iterdir())
    assert names == [
        "dev_f1_conll2000.png", "dev_f1_conll2003.png", "mix_weights_conll2000.png",
        "mix_weights_conll2003.png", "per_type_f1_conll2000.png", "per_type_f1_conll2003.png",
    ]  # fmt: skip
    for path in (out / "plots").iterdir():
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000
    assert "![dev F1 per epoch](plots/dev_f1_conll2003.png)" in (out / "report.md").read_text()


def test_epochs_without_a_dev_score_are_gaps_in_the_curves(tmp_path):
    folder = write_run(tmp_path / "runs" / "sparse", 1, 94.0, 90.0, config())
    results = json.loads((folder / "results.json").read_text())
    del results["history"][0]["dev/f1"]  # trainer.eval_every=2 scores epochs 2 and 3 only
    (folder / "results.json").write_text(json.dumps(results))
    out = tmp_path / "report"
    main([str(tmp_path / "runs"), "--out", str(out)])
    summary = json.loads((out / "report.json").read_text())["groups"][0]
    assert summary["dev_f1_per_epoch"] == [[None, 94.0, 93.0]]
    assert (out / "plots" / "dev_f1_conll2003.png").stat().st_size > 5000


def test_a_seed_run_twice_counts_once_with_a_warning(study, tmp_path, capsys):
    older = study / "glove" / "0" / "results.json"
    again = write_run(tmp_path / "again", 1, 90.0, 80.0, config())
    os.utime(older, (1, 1))
    main([str(study), str(again), "--out", str(tmp_path / "r"), "--no-plots"])
    glove = next(
        g
        for g in json.loads((tmp_path / "r" / "report.json").read_text())["groups"]
        if g["variant"] == "glove"
    )
    assert glove["seeds"] == [1, 2, 3] and glove["test_f1"]["values"][0] == 80.0
    warning = capsys.readouterr().err
    assert (
        "conll2003/glove seed 1: 2 runs; using the newest" in warning
        and str(older.parent) in warning
    )


def test_seeds_run_with_different_settings_are_flagged(study, tmp_path):
    cfg = config()
    cfg["trainer"] = {**cfg["trainer"], "max_epochs": 75}
    write_run(study / "glove" / "9", 4, 95.0, 91.0, cfg)
    main([str(study), "--out", str(tmp_path / "r"), "--no-plots"])
    markdown = (tmp_path / "r" / "report.md").read_text()
    assert (
        "conll2003/glove: seeds differ in trainer.max_epochs"
        " (seed 1: 20, seed 2: 20, seed 3: 20, seed 4: 75)" in markdown
    )


def test_unused_or_check_only_biLM_settings_are_not_a_difference(study, tmp_path):
    cfg = config()
    cfg["elmo"] = {**cfg["elmo"], "name": "fixture"}  # the default preset changed, unused here
    write_run(study / "glove" / "9", 4, 95.0, 91.0, cfg)
    cfg = config(variant="elmo_glove")
    cfg["elmo"] = {**cfg["elmo"], "expected": {"options_file": "o.json"}}  # a check, not an input
    mix = {"layers": [0, 1, 2], "weights": [0.2, 0.3, 0.5], "gamma": 1.5}
    write_run(study / "elmo" / "seed3", 3, 95.0, 92.0, cfg, mix)
    cfg = config()  # a run of this version builds its trainer by _target_, earlier ones did not
    cfg["trainer"] = {**cfg["trainer"], "_target_": "ner.training.loop.Trainer", "_partial_": True}
    write_run(study / "glove" / "10", 5, 95.0, 91.0, cfg)
    main([str(study), "--out", str(tmp_path / "r"), "--no-plots"])
    assert json.loads((tmp_path / "r" / "report.json").read_text())["warnings"] == []


def test_seeds_run_with_different_bilm_weights_are_flagged(study, tmp_path):
    for seed, digest in ((1, "aaa"), (2, "bbb")):
        results_file = study / "elmo" / f"seed{seed}" / "results.json"
        results = json.loads(results_file.read_text())
        results_file.write_text(json.dumps({**results, "bilm_weights_sha256": digest}))
    main([str(study), "--out", str(tmp_path / "r"), "--no-plots"])
    [warning] = json.loads((tmp_path / "r" / "report.json").read_text())["warnings"]
    assert warning == (
        "conll2003/elmo_glove: seeds differ in bilm_weights_sha256 (seed 1: 'aaa', seed 2: 'bbb')"
    )


def test_minutes_per_run_add_up_the_phases_of_a_resumed_run(tmp_path):
    folder = write_run(tmp_path / "runs" / "a", 1, 94.0, 90.0, config())
    results = json.loads((folder / "results.json").read_text())
    # resumed once: `total` is the last process only, train/dev time accumulate over both
    results["time_seconds"] = {"total": 60.0, "prepare_data": 6.0, "train": 540.0,
                               "dev_eval_during_training": 54.0, "final_eval": 0.0}  # fmt: skip
    (folder / "results.json").write_text(json.dumps(results))
    main([str(tmp_path / "runs"), "--out", str(tmp_path / "r"), "--no-plots"])
    [group] = json.loads((tmp_path / "r" / "report.json").read_text())["groups"]
    assert group["minutes"]["mean"] == pytest.approx(10.0)


def test_variant_names_are_derived_when_the_config_has_none():
    assert variant_name(config(variant=None)) == "elmo_glove"
    assert variant_name(config(variant=None, elmo_mix_layers=[0, 1])) == "elmo_glove_layers01"
    # Every biLM setting in the elmo group (older runs: embeddings.elmo, model.elmo_*).
    grouped = config(variant=None)
    del grouped["embeddings"]["elmo"]
    grouped["elmo"]["mix"] = {"layers": [2], "fixed_weights": None}
    assert variant_name(grouped) == "elmo_glove_layers2"
    assert variant_name({**grouped, "elmo": None}) == "glove"
    no_glove = config(variant=None)
    no_glove["embeddings"]["glove"] = None
    assert variant_name(no_glove) == "elmo"
    words = config(variant="x")
    del words["variant"]
    words["embeddings"]["glove"]["source"] = None
    assert variant_name(words) == "words"


def test_a_run_with_an_adapted_bilm_is_a_variant_of_its_own():
    """`ner-train -m experiment=..._elmo_glove elmo.adapt=none,task` gives two groups, not one
    group with two runs per seed."""
    named, derived = config(variant="elmo_glove"), config(variant=None)
    for run in (named, derived):
        run["elmo"]["adapt"] = "none"
        assert variant_name(run) == "elmo_glove"
        run["elmo"]["adapt"] = "task"
        assert variant_name(run) == "elmo_glove_task"
        run["elmo"].update(adapt="domain", adapt_lr_scale=0.1)
        assert variant_name(run) == "elmo_glove_domain_lr0.1"
    # A runner that names its adapted variants itself (the learning curve's) keeps its names.
    for mode, scale, already in (
        ("task", 1.0, "elmo_glove_task"),
        ("domain", 0.1, "x_domain_lr0.1"),
    ):
        named["variant"] = already
        named["elmo"].update(adapt=mode, adapt_lr_scale=scale)
        assert variant_name(named) == already
    glove = config(variant="glove")
    glove["embeddings"]["elmo"] = None
    glove["elmo"] = None
    assert variant_name(glove) == "glove"


def test_runs_on_a_subset_are_not_the_corpus(study, tmp_path):
    subset = config()
    subset["data"]["max_sentences"] = 200
    write_run(tmp_path / "subset", 1, 50.0, 40.0, subset)
    runs, warnings = load_runs([study, tmp_path / "subset"])
    assert {run.corpus for run in runs} == {"conll2003", "conll2003-first200", "conll2000"}
    assert warnings == []


def test_runs_on_a_training_fraction_are_a_corpus_of_their_own(tmp_path):
    for fraction in (0.05, 1.0):
        cfg = config()
        cfg["data"]["train_fraction"] = fraction
        write_run(tmp_path / f"fraction{fraction}", 1, 50.0, 40.0, cfg)
    runs, _ = load_runs([tmp_path])
    assert sorted(run.corpus for run in runs) == ["conll2003", "conll2003-train0.05"]


def test_insert_into_replaces_only_the_marked_part(study, tmp_path):
    page = tmp_path / "RESULTS.md"
    page.write_text(f"# Results\nbefore\n{BEGIN}\nold table\n{END}\nafter\n")
    main([str(study), "--out", str(tmp_path / "r"), "--insert-into", str(page)])
    text = page.read_text()
    assert text.startswith("# Results\nbefore\n" + BEGIN + "\n### conll2000") and text.endswith(
        END + "\nafter\n"
    )
    assert "old table" not in text and "](r/plots/dev_f1_conll2003.png)" in text
    page.write_text("no markers\n")
    assert (
        main([str(study), "--out", str(tmp_path / "r"), "--insert-into", str(page), "--no-plots"])
        == 2
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "cannot read it as JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"dev": {}}', "missing test, seed, best_epoch"),
    ],
)
def test_bad_results_files_are_errors_naming_the_file(tmp_path, capsys, content, message):
    bad = tmp_path / "runs" / "x" / "results.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(content)
    assert main([str(tmp_path / "runs")]) == 2
    error = capsys.readouterr().err
    assert str(bad) in error and message in error


def test_no_runs_or_a_missing_folder_are_errors(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    assert "no results.json under" in capsys.readouterr().err
    with pytest.raises(ReportError, match="nowhere: no such file or folder"):
        load_runs([tmp_path / "nowhere"])


def test_seeds_still_improving_at_their_last_epoch_are_flagged(study, tmp_path):
    write_run(study / "glove" / "3", 4, 95.0, 91.0, config(), still_improving=True)
    main([str(study), "--out", str(tmp_path / "r"), "--no-plots"])
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["warnings"] == [
        "conll2003/glove: seed(s) 4 had their best dev F1 at the last epoch run"
        " (still improving when max_epochs stopped them)"
    ]


def test_missing_optional_figures_are_left_out_not_nan(tmp_path):
    for seed, strict in ((1, True), (2, False)):
        folder = write_run(tmp_path / "runs" / str(seed), seed, 90.0, 88.0 + seed, config())
        results = json.loads((folder / "results.json").read_text())
        if not strict:
            del results["test"]["strict"], results["time_seconds"]["total"]
            del results["test"]["surface"]  # a run scored before surface forms were
        (folder / "results.json").write_text(json.dumps(results))
    main([str(tmp_path / "runs"), "--out", str(tmp_path / "r"), "--no-plots"])
    text = (tmp_path / "r" / "report.json").read_text()
    assert "NaN" not in text
    [group] = json.loads(text)["groups"]
    assert group["test_f1_strict"] == {"mean": 88.5, "std": None, "n": 1, "values": [88.5]}
    assert group["test_f1_surface"] == {"mean": 89.5, "std": None, "n": 1, "values": [89.5]}
    assert group["minutes"]["n"] == 1 and group["test_f1"]["n"] == 2
