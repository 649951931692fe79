"""The one way to log to W&B (tagger training and biLM pretraining alike).

`start_wandb` opens a run under a folder, quietly; asked for ``online`` mode without a
reachable W&B server, it logs offline at once (sync the run later with ``wandb sync``) instead of
waiting for W&B's own network time-out. Any failure to start is a warning and gives None:
experiment logging never stops a run. `GuardedWandb` holds such a run and guards every later
call the same way: the first failure is warned once and turns logging off.
"""

import logging
import os
import socket
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

DEFAULT_SERVER = "https://api.wandb.ai"
CONNECT_TIMEOUT_S = 3.0


def server_reachable(url: str, timeout: float = CONNECT_TIMEOUT_S) -> bool:
    """Whether a TCP connection to `url`'s host and port opens within `timeout` seconds."""
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout):
            return True
    except OSError:
        return False


def effective_mode(mode: str) -> str:
    """`mode`, except ``online`` becomes ``offline`` when the W&B server cannot be reached."""
    if mode != "online":
        return mode
    server = os.environ.get("WANDB_BASE_URL") or DEFAULT_SERVER
    if server_reachable(server):
        return mode
    logger.warning(
        "W&B server %s is unreachable: logging offline instead (upload later with `wandb sync`)",
        server,
    )
    return "offline"


def start_wandb(
    run_dir: Path,
    config: dict[str, Any],
    *,
    mode: str = "offline",
    resume_id: str | None = None,
    **fields: Any,
) -> Any:
    """A W&B run writing into ``run_dir/wandb`` (continuing `resume_id` when given), or None
    after a warning if W&B cannot start. fields: project, entity, group, tags, name."""
    os.environ.setdefault("WANDB_SILENT", "true")
    try:
        import wandb

        return wandb.init(
            dir=str(run_dir),
            config=config,
            id=resume_id,
            resume="allow" if resume_id else None,
            mode=effective_mode(mode),
            **fields,
        )
    except Exception as error:  # logging must never stop a run
        logger.warning("W&B start failed, W&B logging is off for this run: %s", error)
        return None


class GuardedWandb:
    """A W&B run, or none: every call does nothing without a run, and the first call that fails
    is warned about once and turns logging off, so a broken install, a full disk or a network
    problem cannot kill a long run."""

    def __init__(self) -> None:
        self.run: Any = None

    def start_run(
        self, run_dir: Path, config: dict[str, Any], *, resume_id: str | None = None, **fields: Any
    ) -> None:
        """Open a run under `run_dir` (`start_wandb`'s arguments; continuing `resume_id`)."""
        self.run = start_wandb(run_dir, config, resume_id=resume_id, **fields)

    def guard(self, action: str, function: Callable[[], Any]) -> None:
        """Call `function` if a run is open; a failure is warned about and closes logging."""
        if self.run is None:
            return
        try:
            function()
        except Exception as error:  # logging must never stop training
            logger.warning("W&B %s failed, W&B logging is off for this run: %s", action, error)
            self.run = None

    def log(self, values: dict[str, Any], step: int | None = None) -> None:
        """Log one row of values (at `step`, when given)."""
        self.guard("log", lambda: self.run.log(values, step=step))

    def summarize(self, values: dict[str, Any]) -> None:
        """Put `values` into the run's summary."""
        self.guard("summary", lambda: self.run.summary.update(values))

    def finish(self) -> None:
        """Close the run (flushes the offline files)."""
        self.guard("finish", lambda: self.run.finish())
        self.run = None

    @property
    def run_id(self) -> str | None:
        """The W&B run id, kept in checkpoints so that a resumed run continues it."""
        return getattr(self.run, "id", None)
