"""W&B logging is offline by default and a failing W&B never stops training."""

import logging

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
