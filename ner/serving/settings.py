"""The settings of a ``ner-serve`` server: built from its options and checked, then handed to
every worker process as JSON in ``$NER_SERVE_SETTINGS`` (`ner.serving.app.app_from_environment`).

`server_settings` takes the options by the command's names (``max_batch_tokens`` for
``--max-batch-tokens``), so an out-of-range value is an `InputError` naming the option.
"""

import json
import os
from collections.abc import Mapping
from typing import Any

from ner.common.errors import InputError
from ner.common.memory import limit_kernel_cache
from ner.serving.hosts import allowed_hosts

POSITIVE = (
    "workers",
    "threads",
    "max_batch_tokens",
    "max_queue",
    "max_body_bytes",
    "max_texts",
    "max_text_chars",
    "max_tokens",
    "max_length",
    "timeout",
    "read_timeout",
    "keep_alive_timeout",
)
# How long a worker process may take to answer uvicorn's liveness ping: it answers while it loads
# the model, which on a busy machine can take longer than uvicorn's 5 s, and a worker killed for
# it is replaced by one that loads again, without end.
WORKER_HEALTHCHECK_SECONDS = 60


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def server_settings(options: Mapping[str, Any]) -> dict[str, Any]:
    """The plain settings every worker process builds its application from, from ner-serve's
    options (every one of them, by name; ``model``: a folder or a shipped tagger's name); an
    option out of range is an `InputError`."""
    from ner.model.shipped import resolve_model

    for name in POSITIVE:
        if options[name] <= 0:
            raise InputError(f"{_option(name)} must be positive, got {options[name]}")
    if options["batch_wait_ms"] < 0:
        raise InputError(f"--batch-wait-ms must not be negative, got {options['batch_wait_ms']}")
    tagger = ("device", "precision", "max_length", "tag_scheme")
    limits = ("max_body_bytes", "max_texts", "max_text_chars", "max_tokens", "timeout")
    return {
        "model": str(resolve_model(options["model"]).absolute()),  # no bare name: a path
        "threads": options["threads"],
        "allowed_hosts": sorted(allowed_hosts(options["host"], options["allowed_hosts"])),
        "allow_download": options["allow_download"],
        "tagger": {name: options[name] for name in tagger},
        "limits": {name: options[name] for name in (*limits, "read_timeout")},
        "batching": {
            "max_batch_tokens": options["max_batch_tokens"],
            "max_wait": options["batch_wait_ms"] / 1000,
            "max_queue": options["max_queue"],
        },
    }


def application(settings: dict[str, Any], workers: int) -> Any:
    """What `ner.serving.server.serve` runs: the application itself for one worker (its model
    loaded now, before the port opens, so a bad model fails fast and clearly), the import string
    of the factory for several (each worker loads the model; the folder's manifest is checked
    here, so a missing or foreign model fails once, not in every worker)."""
    from ner.model.archive import read_manifest
    from ner.serving.app import SETTINGS_VARIABLE, app_from_environment

    limit_kernel_cache()  # before the model's first kernel; worker processes inherit it
    os.environ[SETTINGS_VARIABLE] = json.dumps(settings)
    if workers > 1:
        read_manifest(settings["model"])
        return "ner.serving.app:app_from_environment"
    return app_from_environment()
