"""The HTTP server `ner-serve` runs its application in: uvicorn, with deadlines for slow clients
and a shutdown that always ends.

uvicorn alone waits forever for a client that opens a connection and sends nothing, or its
headers a byte at a time, and its graceful shutdown waits for every request in progress, so a
client holding a half-sent body kept it from stopping. Here

- a client has `read_timeout` seconds for a request's headers, counted from the moment it
  connected or got its previous answer, however slowly the bytes trickle in; then the
  connection is closed (the body has its own deadline, ``Limits.read_timeout`` in
  `ner.serving.app`);
- an idle connection is closed `keep_alive_timeout` seconds after its last answer;
- on SIGTERM or Ctrl-C the server stops accepting connections, gives the requests in progress
  up to `shutdown_timeout` seconds, then cancels them and exits; a second signal exits at once.
"""

import asyncio
import signal
from types import FrameType
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.supervisors import Multiprocess


class ServerConfig(uvicorn.Config):
    """`uvicorn.Config` with the header deadline (seconds) of `DeadlineH11Protocol`; plain data,
    so it travels to worker processes."""

    def __init__(self, app: Any, *, read_timeout: float, **options: Any) -> None:
        super().__init__(app, http=DeadlineH11Protocol, **options)
        self.read_timeout = read_timeout


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, closing a connection whose request headers are not complete
    `read_timeout` seconds after it opened or after its previous answer."""

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self.read_timeout: float = getattr(config, "read_timeout", 10.0)
        self._head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_head_deadline()  # the next request's headers

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
        super().connection_lost(exc)

    def _arm_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
        self._head_deadline = self.loop.call_later(self.read_timeout, self._head_timed_out)

    def _head_timed_out(self) -> None:
        """Close the connection if the client has still not sent a whole request head."""
        self._head_deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


class Server(uvicorn.Server):
    """`uvicorn.Server` that exits at once on a second SIGTERM (uvicorn: only a second Ctrl-C)."""

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit and sig in (signal.SIGINT, signal.SIGTERM):
            self.force_exit = True
        super().handle_exit(sig, frame)


def serve(
    app: Any,
    *,
    host: str,
    port: int,
    workers: int = 1,
    log_level: str = "info",
    read_timeout: float = 10.0,
    keep_alive_timeout: float = 5.0,
    shutdown_timeout: float = 30.0,
    worker_healthcheck: float = 5.0,
) -> None:
    """Serve `app` (an ASGI application, or the import string of a factory, which `workers` > 1
    needs) until SIGTERM or Ctrl-C; worker_healthcheck: seconds a worker process may take to
    answer the supervisor's liveness ping before it is replaced."""
    config = ServerConfig(
        app,
        read_timeout=read_timeout,
        host=host,
        port=port,
        workers=workers,
        factory=isinstance(app, str),
        log_level=log_level,
        timeout_keep_alive=keep_alive_timeout,
        timeout_graceful_shutdown=shutdown_timeout,
        timeout_worker_healthcheck=worker_healthcheck,
    )
    if workers > 1:  # uvicorn's supervisor: one process per worker, each stopping as above
        Multiprocess(config, sockets=[config.bind_socket()]).run()
    else:
        Server(config).run()
