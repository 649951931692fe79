"""The one way a W&B run is started (tagger training and biLM pretraining alike).

`start_wandb` opens a run under a folder, quietly; asked for ``online`` mode without a
reachable W&B server, it logs offline at once (sync the run later with ``wandb sync``) instead of
waiting for W&B's own network time-out. Any failure to start is a warning and gives None:
experiment logging never stops a run.
"""

import logging
import os
import socket
import urllib.parse
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
