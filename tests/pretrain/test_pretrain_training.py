"""Training runs end to end: resume continues exactly, and 2 data-parallel processes (torchrun,
gloo) follow the loss curve of 1 process with their combined batch."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from ner.bilm.lstm import LSTMState
from ner.common.checkpoints import load_checkpoint
from ner.pretrain.corpus import CorpusError
from ner.pretrain.trainer import reset_rows, train

REPO = Path(__file__).resolve().parents[2]
EXACT = ["pretrain.dropout=0", "pretrain.lr_schedule=constant"]  # no randomness outside the seed


def losses(run: Path) -> dict[int, tuple[float, float]]:
    records = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    return {r["step"]: (r["forward_loss"], r["backward_loss"]) for r in records}


def test_resume_continues_exactly(tiny_config, tmp_path: Path) -> None:
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    metrics = train(tiny_config(*EXACT, "pretrain.max_steps=8", output_dir=straight))
    train(tiny_config(*EXACT, "pretrain.max_steps=3", output_dir=resumed))  # "killed" at step 3
    again = train(tiny_config(*EXACT, "pretrain.max_steps=8", output_dir=resumed))
    assert losses(resumed) == losses(straight)  # steps 1-3 from the first run, 4-8 resumed
    assert again["perplexity"] == metrics["perplexity"]
    assert metrics["perplexity"]["forward"] < 60  # learned something (vocabulary of 60)


def test_resume_continues_exactly_with_dropout_and_state_resets(tiny_config, tmp_path) -> None:
    # Dropout masks and zero-state restarts are random: a resumed run must draw the same ones.
    noisy = ["pretrain.lr_schedule=constant", "pretrain.dropout=0.2"]
    noisy.append("pretrain.state_reset_probability=0.3")
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    train(tiny_config(*noisy, "pretrain.max_steps=8", output_dir=straight))
    train(tiny_config(*noisy, "pretrain.max_steps=3", output_dir=resumed))
    train(tiny_config(*noisy, "pretrain.max_steps=8", output_dir=resumed))
    assert losses(resumed) == losses(straight)


def test_heldout_perplexity_is_recorded_every_eval_every_steps(tiny_config, tmp_path: Path) -> None:
    metrics = train(
        tiny_config("pretrain.max_steps=6", "pretrain.eval_every=3", output_dir=tmp_path)
    )
    rows = [json.loads(line) for line in (tmp_path / "heldout.jsonl").read_text().splitlines()]
    assert [(r["step"], r["tokens_seen"]) for r in rows] == [(3, 3 * 4 * 5), (6, 6 * 4 * 5)]
    assert rows[0]["heldout_forward_ppl"] > rows[1]["heldout_forward_ppl"]  # it learns
    # The last evaluation saw the exported weights: the same figures as metrics.json.
    assert rows[1]["heldout_forward_ppl"] == metrics["perplexity"]["forward"]
    assert rows[1]["heldout_backward_ppl"] == metrics["perplexity"]["backward"]


def test_a_run_spans_epochs_with_fresh_streams(tiny_config, tmp_path: Path) -> None:
    metrics = train(tiny_config("pretrain.max_steps=60", "pretrain.batch_size=16"))
    assert 1 < metrics["epochs"] < 2 and metrics["steps"] == 60


def test_too_small_heldout_part_fails_before_training(tiny_config, tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match=r"held-out part \(0 sentences\) too small"):
        train(tiny_config("corpus.heldout_per_mille=0"))
    assert not (tmp_path / "run" / "checkpoint.pt").exists()


def test_checkpoint_of_other_data_is_refused(tiny_config, tmp_path: Path) -> None:
    train(tiny_config("pretrain.max_steps=1"))
    with pytest.raises(ValueError, match="trained on other data"):
        train(tiny_config("pretrain.max_steps=2", "vocab.max_size=40"))


@pytest.mark.slow
def test_two_processes_match_one_process_with_the_double_batch(
    tiny_config, tiny_overrides, tmp_path: Path
) -> None:
    overrides = [*EXACT, "pretrain.max_steps=6", "pretrain.batch_size=8"]
    single = tmp_path / "single"
    train(tiny_config(*overrides, output_dir=single))
    command = [
        *(sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"),
        *("-m", "ner.cli.pretrain", *tiny_overrides(*overrides, output_dir=tmp_path / "ddp")),
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    expected, observed = losses(single), losses(tmp_path / "ddp")
    assert observed.keys() == expected.keys() == set(range(1, 7))
    for step, pair in expected.items():
        assert observed[step] == pytest.approx(pair, abs=1e-4), step
    assert json.loads((tmp_path / "ddp" / "metrics.json").read_text())["perplexity"] == (
        pytest.approx(json.loads((single / "metrics.json").read_text())["perplexity"], rel=1e-4)
    )


@pytest.mark.slow
def test_wandb_offline_run_gets_the_records(tiny_config, tmp_path: Path) -> None:
    run = tmp_path / "run"
    train(tiny_config("pretrain.max_steps=2", "wandb.project=ner-test", "wandb.mode=offline"))
    offline = list((run / "wandb").glob("offline-run-*/run-*.wandb"))
    assert len(offline) == 1 and offline[0].stat().st_size > 0
    # A resumed run continues the same W&B run, whose id the checkpoint keeps.
    run_id = load_checkpoint(run / "checkpoint.pt")["wandb_run_id"]
    assert run_id and offline[0].name == f"run-{run_id}.wandb"
    train(tiny_config("pretrain.max_steps=4", "wandb.project=ner-test", "wandb.mode=offline"))
    assert load_checkpoint(run / "checkpoint.pt")["wandb_run_id"] == run_id
    assert {path.name for path in (run / "wandb").glob("offline-run-*/run-*.wandb")} == {
        f"run-{run_id}.wandb"
    }


@pytest.mark.slow
def test_a_killed_run_loses_at_most_one_checkpoint_interval(
    tiny_config, tiny_overrides, tmp_path: Path
) -> None:
    run = tmp_path / "killed"
    overrides = [*EXACT, "pretrain.checkpoint_minutes=0"]  # a checkpoint after every step
    command = [sys.executable, "-m", "ner.cli.pretrain"]
    command += tiny_overrides(*overrides, "pretrain.max_steps=100000", output_dir=run)
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not (run / "log.jsonl").exists() or len(losses(run)) < 5:
            assert process.poll() is None and time.monotonic() < deadline, "training did not start"
            time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    logged = max(losses(run))
    saved = load_checkpoint(run / "checkpoint.pt")["position"]["step"]
    assert logged - 1 <= saved <= logged + 1  # at most the step in flight is lost
    train(tiny_config(*overrides, f"pretrain.max_steps={saved + 2}", output_dir=run))
    assert max(losses(run)) == saved + 2


def test_state_resets_are_drawn_for_all_streams_and_agree_across_processes() -> None:
    state = LSTMState(torch.ones(2, 2, 8, 3), torch.ones(2, 2, 8, 5))
    draw = lambda: torch.Generator().manual_seed(11)  # noqa: E731  (the same per-step generator)
    full = reset_rows(state, 0.5, draw(), 8, slice(0, 8))
    reset = full.h[0, 0, :, 0] == 0
    assert 0 < reset.sum() < 8 and torch.equal(full.c[1, 1, :, 0] == 0, reset)
    half = reset_rows(LSTMState(state.h[:, :, 4:], state.c[:, :, 4:]), 0.5, draw(), 8, slice(4, 8))
    assert torch.equal(half.h, full.h[:, :, 4:]) and torch.equal(half.c, full.c[:, :, 4:])
    assert reset_rows(state, 0.0, draw(), 8, slice(0, 8)) is state
