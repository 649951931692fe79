"""``ner-serve MODEL_DIR``: an HTTP API and an entity-highlighting page for a trained tagger.

    ner-serve outputs/<run>/model --port 8000

``POST /predict`` tags ``{"text": ...}``, ``{"texts": [...]}`` or ``{"tokens": [[...]]}``;
``GET /health`` and ``GET /info`` describe the server and model; ``/`` is a page that highlights
the entities of pasted text; ``/openapi.json`` is the API's OpenAPI schema. Concurrent requests
are tagged in shared micro-batches. With ``--workers N`` uvicorn runs N processes, each loading
the model once and using ``--threads`` CPU threads.
"""

import argparse
import sys

from ner.cli.options import add_model_options
from ner.common.errors import NerError, report_user_error
from ner.serving.settings import WORKER_HEALTHCHECK_SECONDS, application, server_settings


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
    p.add_argument(
        "--trusted-proxy",
        type=lambda value: [name.strip() for name in value.split(",") if name.strip()],
        default=[],
        metavar="ADDRESSES",
        help="comma-separated addresses or networks of reverse proxies whose X-Forwarded-For "
        "header names the client in the log (default none: the connection's address)",
    )
    p.add_argument("--workers", type=int, default=1, help="server processes, one model each")
    p.add_argument("--max-batch-tokens", type=int, default=4096, help="tokens per micro-batch")
    p.add_argument(
        "--batch-wait-ms",
        type=float,
        default=0.0,
        help="a fixed wait of a micro-batch for more requests after its first, in milliseconds "
        "(default none: a free model takes every request waiting or being prepared)",
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
    add_model_options(p, "scheme of the tags (default: the training corpus's)")
    p.add_argument("--log-level", default="info", help="uvicorn's log level")
    return p


def run(args: argparse.Namespace) -> int:
    """Check the options, load the model (once per worker), serve until interrupted."""
    from ner.serving.server import listening_socket, proxy_addresses, serve

    settings = server_settings(vars(args))
    trusted = proxy_addresses(args.trusted_proxy)
    sock = listening_socket(args.host, args.port)  # before the model loads: a busy port fails fast
    serve(
        application(settings, args.workers),
        sock,
        workers=args.workers,
        log_level=args.log_level,
        read_timeout=args.read_timeout,
        keep_alive_timeout=args.keep_alive_timeout,
        shutdown_timeout=args.timeout,  # requests in progress get at most their own timeout
        worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
        trusted_proxies=trusted,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        return run(parser().parse_args(argv))
    except NerError as error:  # an option out of range, a bad model folder: one line, status 2
        return report_user_error("ner-serve", error)


if __name__ == "__main__":
    sys.exit(main())
