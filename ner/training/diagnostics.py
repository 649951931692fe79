"""Plain-words warnings for a training run that learned nothing useful.

A run can finish without an error and still be useless. Two signs are checked once training
ends: the best model predicts no entity on the dev set, and the training loss stopped going down
while still high. Each warning says what happened and the likely causes with what to change;
the log prints them and results.json keeps them under ``warnings``.
"""

import logging
from collections.abc import Sequence
from typing import Any

logger = logging.getLogger(__name__)

# The loss "went down" when the last epoch's is below this share of the first epoch's.
STALLED_SHARE = 0.75
# ... and it "stopped going down" when the last epochs set no new low.
STALLED_EPOCHS = 3


def no_entity_warning(
    dev: dict[str, Any], *, best_epoch: int, epochs_run: int, train_sentences: int, scheme: str
) -> str | None:
    """A warning when the best model predicts no entity on dev (None when it predicts some)."""
    if dev.get("predicted_entities", 1) > 0:
        return None
    if dev.get("support", 0) == 0:
        return (
            "the dev set has no entities at all, so its F1 is 0 by definition. Likely cause: "
            "the tag column is not the entity tags (check data.options.columns or tag_column; "
            "every tag read was 'O')."
        )
    return (
        f"the best model (epoch {best_epoch} of {epochs_run}) predicts no entity on the dev set, "
        f"which has {dev['support']}; its F1 is 0. Likely causes: too few epochs for a small "
        f"corpus ({train_sentences} training sentences; raise trainer.max_epochs); the tag "
        "column is not the entity tags (check data.options.columns or tag_column); or the tags "
        f"are read in the wrong scheme (read as {scheme.upper()}; check that the file's B-/I- "
        "prefixes follow it)."
    )


def stalled_loss_warning(history: Sequence[dict[str, Any]]) -> str | None:
    """A warning when the training loss did not go down, or stopped going down while still high:
    the last epoch's loss is above `STALLED_SHARE` of the first's and either no lower than the
    first or no new low in the last `STALLED_EPOCHS` epochs."""
    losses = [float(h["train/loss_per_token"]) for h in history if "train/loss_per_token" in h]
    if len(losses) < 2 or losses[-1] < STALLED_SHARE * losses[0]:
        return None
    flat = losses[-1] >= losses[0]
    if not flat and (
        len(losses) <= STALLED_EPOCHS
        or min(losses[-STALLED_EPOCHS:]) < min(losses[:-STALLED_EPOCHS])
    ):
        return None
    what = "did not go down" if flat else "stopped going down"
    return (
        f"the training loss {what}: {losses[0]:.4g} per token after epoch 1, {losses[-1]:.4g} "
        f"after epoch {len(losses)}. Likely causes: a learning rate too high or too low "
        "(trainer.optimizer.lr); the tag column is not the entity tags, so the tags cannot be "
        "learned from the words (check data.options.columns or tag_column); or too few epochs "
        "to tell (raise trainer.max_epochs)."
    )


def diagnose(
    history: Sequence[dict[str, Any]],
    dev: dict[str, Any],
    *,
    best_epoch: int,
    epochs_run: int,
    train_sentences: int,
    scheme: str,
) -> list[str]:
    """Every warning that applies (none for a healthy run), each also logged."""
    warnings = [
        no_entity_warning(
            dev,
            best_epoch=best_epoch,
            epochs_run=epochs_run,
            train_sentences=train_sentences,
            scheme=scheme,
        ),
        stalled_loss_warning(history),
    ]
    warnings = [w for w in warnings if w is not None]
    for warning in warnings:
        logger.warning("this run looks useless: %s", warning)
    return warnings
