"""Warnings for useless runs: no entity predicted on dev, a training loss that stalls."""

import logging

from ner.training.diagnostics import diagnose, no_entity_warning, stalled_loss_warning

HEALTHY_DEV = {"f1": 88.0, "support": 120, "predicted_entities": 118}


def history(*losses: float) -> list[dict]:
    return [{"epoch": i + 1, "train/loss_per_token": loss} for i, loss in enumerate(losses)]


def test_a_healthy_run_has_no_warnings(caplog):
    with caplog.at_level(logging.WARNING):
        warnings = diagnose(
            history(1.2, 0.4, 0.2, 0.15, 0.15, 0.15),
            HEALTHY_DEV,
            best_epoch=4,
            epochs_run=6,
            train_sentences=14041,
            scheme="iob2",
        )
    assert warnings == [] and not caplog.text


def test_no_entity_on_dev_names_the_likely_causes(caplog):
    dev = {"f1": 0.0, "support": 37, "predicted_entities": 0}
    with caplog.at_level(logging.WARNING):
        warnings = diagnose(
            history(2.0, 1.0),
            dev,
            best_epoch=1,
            epochs_run=2,
            train_sentences=40,
            scheme="iob2",
        )
    assert len(warnings) == 1
    message = warnings[0]
    assert "best model (epoch 1 of 2) predicts no entity on the dev set, which has 37" in message
    assert "too few epochs for a small corpus (40 training sentences" in message
    assert "tag column" in message and "wrong scheme (read as IOB2" in message
    assert "this run looks useless: " + message in caplog.text


def test_a_dev_set_without_entities():
    message = no_entity_warning(
        {"f1": 0.0, "support": 0, "predicted_entities": 0},
        best_epoch=1,
        epochs_run=1,
        train_sentences=10,
        scheme="iob2",
    )
    assert message is not None and "the dev set has no entities at all" in message


def test_a_loss_that_does_not_go_down():
    message = stalled_loss_warning(history(0.9, 1.1))
    assert message is not None
    assert message.startswith("the training loss did not go down: 0.9 per token after epoch 1")
    assert "learning rate" in message


def test_a_loss_that_stops_going_down_while_high():
    message = stalled_loss_warning(history(1.0, 0.85, 0.8, 0.82, 0.81, 0.83))
    assert message is not None and "stopped going down" in message


def test_losses_that_fall_or_keep_falling_are_fine():
    assert stalled_loss_warning(history(1.0)) is None
    assert stalled_loss_warning(history(1.0, 0.7)) is None  # below 75% of the first epoch's
    assert stalled_loss_warning(history(1.0, 0.95, 0.9, 0.85, 0.8)) is None  # still falling
    assert stalled_loss_warning(history(1.0, 0.5, 0.3, 0.31, 0.3, 0.32)) is None  # converged low
