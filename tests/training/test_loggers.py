"""W&B logging is offline by default and a failing W&B never stops training."""

import logging
import socket
import time

from ner.common.wandb_run import effective_mode
from ner.training.loggers import WandbLogger


def test_offline_run_files_go_under_the_run_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_SILENT", "true")
    run_logger = WandbLogger(project="test")
    assert run_logger.settings["mode"] == "offline"
    run_logger.start(tmp_path, {"seed": 1})
    assert run_logger.run_id
    run_logger.log_epoch(1, {"dev/f1": 50.0, "elmo/gamma": 1.0})
    scores = {
        "f1": 1.0,
        "precision": 1.0,
        "recall": 1.0,
        "strict": {"f1": 1.0, "precision": 1.0, "recall": 1.0},
        "surface": {"f1": 1.0, "precision": 1.0, "recall": 1.0},
    }
    per_type = {"PER": {"precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 2}}
    run_logger.log_final(
        {"dev": {**scores, "per_type": per_type}, "test": {**scores, "per_type": per_type}}
    )
    run_logger.finish()
    assert run_logger.run_id is None
    assert list((tmp_path / "wandb").glob("offline-run-*/run-*.wandb"))


def test_failures_are_warned_once_and_switch_logging_off(tmp_path, caplog):
    run_logger = WandbLogger(mode="no-such-mode")
    with caplog.at_level(logging.WARNING):
        run_logger.start(tmp_path, {})
        run_logger.log_epoch(1, {"dev/f1": 1.0})
        run_logger.log_final({})
        run_logger.finish()
    assert len(caplog.records) == 1 and "W&B start failed" in caplog.text


class BrokenRun:
    id = "broken"

    def log(self, *_args, **_kwargs):
        raise OSError("disk full")


def test_a_failing_log_call_does_not_raise(caplog):
    run_logger = WandbLogger()
    run_logger.run = BrokenRun()
    run_logger.log_epoch(3, {"dev/f1": 1.0})
    assert run_logger.run is None and "disk full" in caplog.text
    run_logger.log_epoch(4, {"dev/f1": 1.0})


def closed_port() -> int:
    """A local port with nothing listening on it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_online_without_a_server_logs_offline_at_once(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_BASE_URL", f"http://127.0.0.1:{closed_port()}")
    assert effective_mode("online") == "offline"
    assert effective_mode("disabled") == "disabled"
    run_logger = WandbLogger(project="test", mode="online")
    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        run_logger.start(tmp_path, {"seed": 1})
    assert time.monotonic() - started < 60  # W&B's own online time-out alone is 90 s
    assert "unreachable: logging offline instead" in caplog.text
    assert run_logger.run_id
    run_logger.finish()
    assert list((tmp_path / "wandb").glob("offline-run-*/run-*.wandb"))


def test_per_token_scores_reach_the_summary(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("WANDB_SILENT", "true")
    run_logger = WandbLogger(project="test")
    run_logger.start(tmp_path, {"seed": 1})
    run_logger.log_epoch(1, {"dev/accuracy": 90.0})
    per_label = {"NN": {"precision": 90.0, "recall": 80.0, "f1": 84.7, "support": 10}}
    scores = {"accuracy": 91.5, "correct": 183, "support": 200, "per_label": per_label}
    with caplog.at_level(logging.WARNING):
        run_logger.log_final({"dev": scores, "test": {**scores, "accuracy": 90.25}})
    warned = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not warned, caplog.text  # a failing final log would only be warned about
    assert run_logger.run.summary["test/accuracy"] == 90.25
    assert run_logger.run.summary["dev/accuracy"] == 91.5
    run_logger.finish()
