"""Experiment loggers: W&B (offline by default) and a no-op one. Logging never stops training.

The W&B logger is `ner.common.wandb_run.GuardedWandb` (the one biLM pretraining logs through)
speaking the training loop's logger protocol: online without a network it logs offline at once,
and every W&B call is guarded: the first failure is reported once as a warning and the logger
turns itself off, so a broken install, a full disk or a network problem cannot kill a long run.
`finish()` closes the W&B run so that each Hydra multirun job gets its own run.
"""

from pathlib import Path
from typing import Any

from ner.common.wandb_run import GuardedWandb


class NullLogger:
    """Logs nothing (``logger=none``)."""

    def start(self, run_dir: Path, config: dict[str, Any], resume_id: str | None = None) -> None:
        """Open the run (nothing to do)."""

    def log_epoch(self, epoch: int, metrics: dict[str, float]) -> None:
        """Record one epoch's scalars (nothing to do)."""

    def log_final(self, results: dict[str, Any]) -> None:
        """Record the final scores (nothing to do)."""

    def finish(self) -> None:
        """Close the run (nothing to do)."""

    @property
    def run_id(self) -> str | None:
        """No run, no id."""
        return None


class WandbLogger(GuardedWandb, NullLogger):
    """Weights & Biases logging into ``<run_dir>/wandb/`` (``offline-run-*`` unless online).

    project/entity/group/tags/name: the usual W&B run fields; mode: "offline" (default),
    "online" or "disabled".
    """

    def __init__(
        self,
        project: str = "ner-elmo",
        mode: str = "offline",
        entity: str | None = None,
        group: str | None = None,
        tags: list[str] | None = None,
        name: str | None = None,
    ) -> None:
        self.settings = {
            "project": project,
            "mode": mode,
            "entity": entity,
            "group": group,
            "tags": list(tags) if tags else None,
            "name": name,
        }
        super().__init__()

    def start(self, run_dir: Path, config: dict[str, Any], resume_id: str | None = None) -> None:
        """Open a W&B run under `run_dir` (continuing `resume_id` when given)."""
        self.start_run(run_dir, config, resume_id=resume_id, **self.settings)

    def log_epoch(self, epoch: int, metrics: dict[str, float]) -> None:
        """Log one epoch's loss, dev scores, learning rate and mix weights."""
        self.log({"epoch": epoch, **metrics})

    def log_final(self, results: dict[str, Any]) -> None:
        """Test/dev scores in the summary and a per-type (per-label) table per split."""

        def final() -> None:
            import wandb

            for split in ("dev", "test"):
                scores = results.get(split)
                if not scores:
                    continue
                if "accuracy" in scores:  # per-token labels
                    self.run.summary[f"{split}/accuracy"] = scores["accuracy"]
                    table = wandb.Table(columns=["label", "precision", "recall", "f1", "support"])
                    for label, row in sorted(scores["per_label"].items()):
                        table.add_data(
                            label, row["precision"], row["recall"], row["f1"], row["support"]
                        )
                    self.run.log({f"{split}/per_label": table})
                    continue
                for name in ("f1", "precision", "recall"):
                    self.run.summary[f"{split}/{name}"] = scores[name]
                    for mode in ("strict", "surface"):  # surface: not in a legacy run's scores
                        if mode in scores:
                            self.run.summary[f"{split}/{mode}_{name}"] = scores[mode][name]
                table = wandb.Table(columns=["type", "precision", "recall", "f1", "support"])
                for kind, row in sorted(scores["per_type"].items()):
                    table.add_data(kind, row["precision"], row["recall"], row["f1"], row["support"])
                self.run.log({f"{split}/per_type": table})

        self.guard("final log", final)
