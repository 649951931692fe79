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
  up to `shutdown_timeout` seconds, then cancels them and exits; a second signal exits at once;
- the address is bound before the model loads (`listening_socket`), so a bad or busy port is a
  one-line error at once;
- ``X-Forwarded-For`` names the client only on connections from `trusted_proxies` (uvicorn
  trusts loopback by default, so any local client could put another address in the log);
- errors of the event loop are logged at most once per interval each
  (`ner.serving.loop_errors`).
"""

import asyncio
import ipaddress
import logging
import signal
import socket
from types import FrameType
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.supervisors import Multiprocess

from ner.common.errors import InputError

logger = logging.getLogger("uvicorn.error")


class ServerConfig(uvicorn.Config):
    """`uvicorn.Config` with the header deadline (seconds) of `DeadlineH11Protocol`; plain data,
    so it travels to worker processes."""

    def __init__(
        self, app: Any, *, read_timeout: float, trusted_proxies: list[str], **options: Any
    ) -> None:
        super().__init__(
            app,
            http=DeadlineH11Protocol,
            loop="ner.serving.loop_errors:new_event_loop",
            proxy_headers=bool(trusted_proxies),
            forwarded_allow_ips=trusted_proxies,
            **options,
        )
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


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to `host` and `port` (not yet listening); `InputError` naming the options
    when it cannot be (a port out of range or in use, an address not of this machine)."""
    if not 0 <= port <= 65535:
        raise InputError(f"--port must be 0 to 65535, got {port}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        reason = error.strerror or str(error)
        raise InputError(f"cannot listen on --host {host} --port {port}: {reason}") from None
    sock.set_inheritable(True)  # worker processes serve it too
    return sock


def proxy_addresses(values: list[str]) -> list[str]:
    """`values` (of ``--trusted-proxy``) checked: each an IP address or network, or ``*`` for
    any; `InputError` naming the first that is not."""
    for value in values:
        if value != "*":
            try:
                ipaddress.ip_network(value, strict=False)
            except ValueError:
                raise InputError(
                    f"--trusted-proxy: {value!r} is not an IP address or network (e.g. "
                    "127.0.0.1, 10.0.0.0/8)"
                ) from None
    return values


def serve(
    app: Any,
    sock: socket.socket,
    *,
    workers: int = 1,
    log_level: str = "info",
    read_timeout: float = 10.0,
    keep_alive_timeout: float = 5.0,
    shutdown_timeout: float = 30.0,
    worker_healthcheck: float = 5.0,
    trusted_proxies: list[str] | None = None,
) -> None:
    """Serve `app` (an ASGI application, or the import string of a factory, which `workers` > 1
    needs) on `sock` (`listening_socket`) until SIGTERM or Ctrl-C; worker_healthcheck: seconds a
    worker process may take to answer the supervisor's liveness ping before it is replaced;
    trusted_proxies: addresses or networks whose X-Forwarded-For header names the client
    (default none)."""
    host, port = sock.getsockname()[:2]
    config = ServerConfig(
        app,
        read_timeout=read_timeout,
        trusted_proxies=list(trusted_proxies or []),
        host=host,
        port=port,
        workers=workers,
        factory=isinstance(app, str),
        log_level=log_level,
        timeout_keep_alive=keep_alive_timeout,
        timeout_graceful_shutdown=shutdown_timeout,
        timeout_worker_healthcheck=worker_healthcheck,
    )
    shown = f"[{host}]" if sock.family == socket.AF_INET6 else host
    logger.info("ner-serve listening on http://%s:%d (Ctrl-C to stop)", shown, port)
    if workers > 1:  # uvicorn's supervisor: one process per worker, each stopping as above
        Multiprocess(config, sockets=[sock]).run()
    else:
        Server(config).run(sockets=[sock])
