"""``ner-serve MODEL_DIR``: an HTTP API and an entity-highlighting page for a trained tagger.

    ner-serve outputs/<run>/model --port 8000

``POST /predict`` tags ``{"text": ...}``, ``{"texts": [...]}`` or ``{"tokens": [[...]]}``;
``GET /health`` and ``GET /info`` describe the server and model; ``/`` is a page that highlights
the entities of pasted text; ``/openapi.json`` is the API's OpenAPI schema. Concurrent requests
are tagged in shared micro-batches. With ``--workers N`` uvicorn runs N processes, each loading
the model once and using ``--threads`` CPU threads.
"""

import argparse
import json
import os
import sys
from typing import Any

from ner.cli.options import add_model_options
from ner.common.memory import limit_kernel_cache
from ner.common.threads import cpu_threads
from ner.serving.hosts import allowed_hosts

# How long a worker process may take to answer uvicorn's liveness ping (see `main`).
WORKER_HEALTHCHECK_SECONDS = 60


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ner-serve",
        description="Serve a trained model directory (the model/ folder a run saves) over HTTP.",
    )
    p.add_argument(
        "model", help="model directory (e.g. outputs/<run>/model) or shipped tagger (conll2003)"
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument(
        "--allowed-hosts",
        type=lambda value: [name.strip() for name in value.split(",") if name.strip()],
        default=[],
        metavar="NAMES",
        help="comma-separated names the Host header may give besides localhost, 127.0.0.1, "
        "[::1] and --host ('*': any); other requests get 400",
    )
    p.add_argument("--workers", type=int, default=1, help="server processes, one model each")
    p.add_argument(
        "--threads",
        type=int,
        default=cpu_threads("auto"),
        help="torch CPU threads per worker (default: half the cores, 1 to 4)",
    )
    p.add_argument("--max-batch-tokens", type=int, default=4096, help="tokens per micro-batch")
    p.add_argument(
        "--batch-wait-ms",
        type=float,
        default=5.0,
        help="how long a micro-batch waits for more requests after its first (milliseconds)",
    )
    p.add_argument("--max-queue", type=int, default=1024, help="waiting requests before 503s")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds before a request gets 503")
    p.add_argument(
        "--read-timeout",
        type=float,
        default=10.0,
        help="seconds a client has for a request's headers, and again for its body (default 10)",
    )
    p.add_argument(
        "--keep-alive-timeout",
        type=float,
        default=5.0,
        help="seconds an idle connection stays open after an answer (default 5)",
    )
    p.add_argument("--max-body-bytes", type=int, default=1_000_000, help="largest request body")
    p.add_argument("--max-texts", type=int, default=1000, help="most texts or sentences a request")
    p.add_argument("--max-text-chars", type=int, default=100_000, help="longest text (characters)")
    p.add_argument("--max-tokens", type=int, default=50_000, help="most tokens a request")
    p.add_argument("--max-length", type=int, default=256, help="longer sentences go in pieces")
    p.add_argument("--tag-scheme", choices=("iob1", "iob2", "bioes"), help="scheme of the tags")
    p.add_argument("--device", default="cpu", help="torch device, e.g. cpu or cuda")
    add_model_options(p)
    p.add_argument("--log-level", default="info", help="uvicorn's log level")
    return p


def settings(args: argparse.Namespace) -> dict:
    """The plain settings every worker process builds its application from."""
    return {
        "model": args.model,
        "threads": args.threads,
        "allowed_hosts": sorted(allowed_hosts(args.host, args.allowed_hosts)),
        "allow_download": args.allow_download,
        "tagger": {
            "device": args.device,
            "precision": args.precision,
            "max_length": args.max_length,
            "tag_scheme": args.tag_scheme,
        },
        "limits": {
            "max_body_bytes": args.max_body_bytes,
            "max_texts": args.max_texts,
            "max_text_chars": args.max_text_chars,
            "max_tokens": args.max_tokens,
            "timeout": args.timeout,
            "read_timeout": args.read_timeout,
        },
        "batching": {
            "max_batch_tokens": args.max_batch_tokens,
            "max_wait": args.batch_wait_ms / 1000,
            "max_queue": args.max_queue,
        },
    }


def run(args: argparse.Namespace) -> int:
    """Check the options, load the model (once per worker), serve until interrupted."""
    from ner.model.archive import ArchiveError, read_manifest
    from ner.model.shipped import resolve_model
    from ner.serving.app import SETTINGS_VARIABLE, app_from_environment
    from ner.serving.server import serve

    positive = ("workers", "threads", "max_batch_tokens", "max_queue", "max_body_bytes")
    positive += ("max_texts", "max_text_chars", "max_tokens", "max_length", "timeout")
    positive += ("read_timeout", "keep_alive_timeout")
    for name in positive:
        if getattr(args, name) <= 0:
            print(f"ner-serve: error: --{name.replace('_', '-')} must be positive", file=sys.stderr)
            return 2
    if args.batch_wait_ms < 0:
        print("ner-serve: error: --batch-wait-ms must not be negative", file=sys.stderr)
        return 2
    try:
        args.model = str(resolve_model(args.model))  # a shipped tagger's name → its folder
    except ArchiveError as error:
        print(f"ner-serve: error: {error}", file=sys.stderr)
        return 2
    limit_kernel_cache()  # before the model's first kernel; worker processes inherit it
    os.environ[SETTINGS_VARIABLE] = json.dumps(settings(args))
    if args.workers > 1:  # each worker process builds the app (and loads the model) itself
        try:
            read_manifest(args.model)  # a missing or foreign model fails here, not in N workers
        except ArchiveError as error:
            print(f"ner-serve: error: cannot load model {args.model}: {error}", file=sys.stderr)
            return 1
        app: Any = "ner.serving.app:app_from_environment"
    else:
        try:
            app = app_from_environment()  # load before binding: a bad model fails fast, clearly
        except (ArchiveError, OSError, ValueError) as error:
            print(f"ner-serve: error: cannot load model {args.model}: {error}", file=sys.stderr)
            return 1
    serve(
        app,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        read_timeout=args.read_timeout,
        keep_alive_timeout=args.keep_alive_timeout,
        shutdown_timeout=args.timeout,  # requests in progress get at most their own timeout
        # A worker answers the supervisor's pings while it loads the model; on a busy machine
        # that answer can take longer than uvicorn's 5 s, and a worker killed for it is
        # replaced by one that loads again, without end.
        worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    return run(parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
