"""The study machinery: the plan and its experiment configs, the layer-choice models, a 2-job
multirun through the local launcher, and the resumable runner (experiments/study/study.py)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_module
from hydra.utils import instantiate
from tiny_tagger import SENTENCES

from ner.common.paths import PROJECT_ROOT

STUDY = PROJECT_ROOT / "experiments" / "study" / "study.py"
spec = importlib.util.spec_from_file_location("study", STUDY)
study = importlib.util.module_from_spec(spec)
spec.loader.exec_module(study)

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "WANDB_SILENT": "true"}


def compose_job(job, *extra: str):
    with initialize_config_module("ner.conf", version_base="1.3"):
        return compose(
            config_name="train", overrides=study.overrides(job, "small_news", list(extra))
        )


def test_the_plan_has_three_seeds_per_main_variant_and_two_per_layer_choice():
    seeds: dict[tuple[str, str], list[int]] = {}
    for job in study.plan():
        seeds.setdefault((job.corpus, job.variant), []).append(job.seed)
    for variant in ("glove", "elmo", "elmo_glove"):
        assert len(set(seeds["conll2003", variant])) >= 3
    for variant in ("elmo_glove_top", "elmo_glove_average", "elmo_glove_layers01"):
        assert len(set(seeds["conll2003", variant])) >= 2
    assert {"conll2002_es", "conll2002_nl", "conll2000"} <= {corpus for corpus, _ in seeds}
    assert len(study.plan()) == len(set(study.plan())), "a job is planned twice"


@pytest.mark.parametrize("job", study.plan(), ids=lambda job: job.name)
def test_every_planned_job_composes_into_its_corpus_and_variant(job):
    cfg = compose_job(job)
    assert cfg.variant == job.variant and cfg.data.name == job.corpus and cfg.seed == job.seed
    assert (cfg.elmo is not None) == job.uses_elmo
    if job.full_schedule:  # AllenNLP's, as conf/trainer/default.yaml has it
        assert (cfg.trainer.max_epochs, cfg.trainer.patience) == (study.FULL_SCHEDULE_EPOCHS, 25)
    else:
        assert (cfg.trainer.max_epochs, cfg.trainer.patience) == (study.MAX_EPOCHS, study.PATIENCE)
    if job.uses_elmo:
        assert cfg.elmo.name == study.SHIPPED_ELMO
    if job.corpus.startswith("conll2002"):
        assert cfg.embeddings.glove.source is None and cfg.embeddings.char


@pytest.mark.parametrize(
    ("variant", "layers", "weights"),
    [
        ("elmo_glove", [0, 1, 2], None),
        ("elmo_glove_top", [2], [1.0]),
        ("elmo_glove_layers01", [0, 1], None),
        ("elmo_glove_average", [0, 1, 2], [1 / 3] * 3),
    ],
)
def test_layer_choices_build_the_intended_mix(variant, layers, weights):
    job = study.Job(f"conll2003_{variant}", "conll2003", variant, 1, True)
    cfg = compose_job(job)
    # The model node is the constructor's arguments; the run adds only the data's sizes.
    model = instantiate(cfg.model, _convert_="all", tags=["O", "S-PER"], num_chars=5, elmo_dim=8)
    summary = model.mix_summary()
    assert summary["layers"] == layers
    if weights:
        assert summary["weights"] == pytest.approx(weights)
    learned = [
        p for p in (model.elmo_mix.scalar_parameters, model.elmo_mix.gamma) if p.requires_grad
    ]
    assert len(learned) == (0 if variant == "elmo_glove_average" else 2)
    # The mix only reads its layers: changing another layer leaves the output as it was.
    elmo = torch.randn(2, 3, 4, 8)
    changed = elmo.clone()
    for unused in {0, 1, 2} - set(layers):
        changed[:, unused] += 1.0
    mask = torch.ones(2, 4, dtype=torch.bool)
    torch.testing.assert_close(model.elmo_mix(elmo, mask), model.elmo_mix(changed, mask))


def test_a_second_elmo_job_waits_until_the_first_has_built_the_feature_cache(tmp_path):
    first, second, chunking = (
        study.Job("conll2003_elmo_glove", "conll2003", "elmo_glove", 1, True),
        study.Job("conll2003_elmo", "conll2003", "elmo", 1, True),
        study.Job("conll2000_elmo_glove", "conll2000", "elmo_glove", 1, True),
    )
    running = {first: None}  # the runner's {job: process}; only the keys are read
    assert study.features_pending(tmp_path, second, running)
    assert not study.features_pending(tmp_path, chunking, running)  # another corpus, another cache
    checkpoint = study.run_dir(tmp_path, first) / "checkpoints" / "last.pt"
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_bytes(b"")  # an epoch has ended: the features exist
    assert not study.features_pending(tmp_path, second, running)
    assert (
        study.job_state(tmp_path, first) == "partial"
        and study.job_state(tmp_path, second) == "todo"
    )


def test_a_run_committed_by_an_earlier_machine_is_not_run_again(tmp_path, monkeypatch):
    runs, results = tmp_path / "outputs", tmp_path / "results"
    monkeypatch.setattr(study, "RUNS_DIR", runs)
    monkeypatch.setattr(study, "RESULTS", results)
    job = study.Job("conll2003_glove", "conll2003", "glove", 1, False)
    assert study.job_state(runs, job) == "todo"
    study.summary_path(results, job).parent.mkdir(parents=True)
    study.summary_path(results, job).write_text("{}")
    assert study.job_state(runs, job) == "published"  # outputs/ is gone, the summary is not
    assert study.job_state(tmp_path / "elsewhere", job) == "todo"  # --runs-dir: its own runs
    (study.run_dir(runs, job)).mkdir(parents=True)
    (study.run_dir(runs, job) / "results.json").write_text("{}")
    assert study.job_state(runs, job) == "done"


def test_publishing_a_run_writes_the_summary_and_report_and_runs_no_git(tmp_path, monkeypatch):
    """The runner only writes files: committing the summaries is the user's call."""
    results, runs = tmp_path / "results", tmp_path / "outputs"
    page = results / "RESULTS.md"
    page.parent.mkdir(parents=True)
    page.write_text("# page\n<!-- ner-report:begin -->\nold\n<!-- ner-report:end -->\nend\n")
    monkeypatch.setattr(study, "RESULTS", results)
    monkeypatch.setattr(study, "RESULTS_PAGE", page)
    commands = []
    monkeypatch.setattr(subprocess, "run", lambda command, *a, **k: commands.append(command))
    monkeypatch.setattr(subprocess, "Popen", lambda command, *a, **k: commands.append(command))
    job = study.Job("conll2002_nl_words", "conll2002_nl", "words", 1, False)
    committed = study.summary_path(PROJECT_ROOT / "experiments" / "results" / "study", job)
    study.run_dir(runs, job).mkdir(parents=True)
    (study.run_dir(runs, job) / "results.json").write_text(committed.read_text())
    study.publish(job, runs, results)
    assert commands == []
    summary = json.loads(study.summary_path(results, job).read_text())
    assert summary["test"] == json.loads(committed.read_text())["test"]
    assert "### conll2002_nl" in (results / "report" / "report.md").read_text()
    assert (results / "corpora" / "conll2002_nl.json").is_file()
    text = page.read_text()
    assert "old" not in text and "### conll2002_nl" in text and text.endswith("end\n")


@pytest.mark.parametrize(
    ("launcher", "target", "setting"),
    [
        ("local", "joblib_launcher.JoblibLauncher", "n_jobs"),
        ("slurm", "SlurmLauncher", "partition"),
    ],
)
def test_launcher_configs_compose(launcher, target, setting):
    with initialize_config_module("ner.conf", version_base="1.3"):
        cfg = compose(
            config_name="train",
            overrides=[f"hydra/launcher={launcher}", "experiment=conll2003_glove"],
            return_hydra_config=True,
        )
    assert cfg.hydra.launcher._target_.endswith(target) and setting in cfg.hydra.launcher
    if launcher == "slurm":
        assert cfg.hydra.launcher.timeout_min >= 60 and cfg.hydra.launcher.cpus_per_task == 2


def write_tiny_corpus(folder: Path) -> Path:
    """Column files of tests/tiny_tagger.py's sentences: train = all, dev and test = halves."""
    folder.mkdir(parents=True)
    rows = [
        "\n".join(f"{w} {t}" for w, t in zip(s.split(), tags.split(), strict=True)) + "\n\n"
        for s, tags in SENTENCES
    ]
    for name, part in (("train", rows), ("dev", rows[:4]), ("test", rows[4:])):
        (folder / f"{name}.txt").write_text("".join(part))
    return folder


def run(command: list[str], timeout: float = 400, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(
        command,
        cwd=PROJECT_ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result


@pytest.mark.slow
def test_a_two_job_multirun_through_the_local_launcher_is_reported(tmp_path):
    corpus = write_tiny_corpus(tmp_path / "tiny")
    sweep = tmp_path / "sweep"
    result = run(
        [
            sys.executable, "-m", "ner.cli.train", "-m", "hydra/launcher=local",
            f"data.name={corpus}", "embeddings=words", "elmo=none", "embeddings.glove.dim=8",
            "embeddings.char.filters=8", "model.hidden_size=8", "model.num_layers=1",
            "trainer.max_epochs=1", "trainer.num_threads=1", "logger=none", "progress=false",
            "seed=1,2", f"hydra.sweep.dir={sweep}",
        ]
    )  # fmt: skip
    assert "Joblib.Parallel(n_jobs=2" in result.stdout + result.stderr
    results = [json.loads((sweep / job / "results.json").read_text()) for job in ("0", "1")]
    assert [r["seed"] for r in results] == [1, 2]
    assert results[0]["history"] != results[1]["history"], "the seeds must give different runs"
    run([sys.executable, "-m", "ner.cli.report", str(sweep), "--study-json", str(tmp_path / "s")])
    report = json.loads((sweep / "report.json").read_text())
    [group] = report["groups"]
    assert (group["corpus"], group["variant"], group["seeds"]) == ("tiny", "words", [1, 2])
    mean = (results[0]["test"]["f1"] + results[1]["test"]["f1"]) / 2
    assert group["test_f1"]["mean"] == pytest.approx(mean)
    assert json.loads((tmp_path / "s" / "tiny.json").read_text())["variants"]["words"]["seeds"] == [
        1,
        2,
    ]


@pytest.mark.slow
@pytest.mark.mirror  # trains on the real CoNLL-2002 Dutch corpus
def test_the_runner_trains_publishes_and_then_skips_finished_jobs(tmp_path):
    runs = tmp_path / "study"
    command = [
        sys.executable, str(STUDY), "run",
        "--only", "conll2002_nl", "--runs-dir", str(runs), "--poll", "0.5",
        "--set", "data.max_sentences=150", "trainer.max_epochs=1", "model.hidden_size=8",
        "embeddings.glove.dim=8", "embeddings.char.filters=8",
    ]  # fmt: skip
    log = run(command).stdout
    assert "summaries go to" in log and "start conll2002_nl/words/seed1" in log
    summary = runs / "results" / "runs" / "conll2002_nl" / "words" / "seed1" / "results.json"
    results = json.loads(summary.read_text())
    assert results["config"]["data"]["name"] == "conll2002_nl" and results["epochs_run"] == 1
    assert results.pop("bilm_weights_sha256") is None  # no biLM in this variant
    assert results == json.loads(
        (runs / "conll2002_nl" / "words" / "seed1" / "results.json").read_text()
    )
    table = (runs / "results" / "report" / "report.md").read_text()
    assert "### conll2002_nl-first150" in table and "`words`" in table  # a subset, named so
    corpora = runs / "results" / "corpora"
    study_json = json.loads((corpora / "conll2002_nl-first150.json").read_text())
    assert study_json["variants"]["words"]["seeds"] == [1]
    again = run(command).stdout
    assert "0 job(s) to run of 1" in again and "start " not in again
