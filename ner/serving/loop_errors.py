"""The event loop of `ner-serve`: its errors logged at most once per interval each, and a
process out of file descriptors that sheds connections instead of spinning.

A server out of file descriptors (``ulimit -n``) cannot accept the connections waiting for it.
asyncio logs every failed ``accept`` with its traceback and retries each of up to the listen
backlog (2,048) a second later, every retry failing the same way (Python 3.11 to 3.13): a core
spent on failing, and about 1,600 tracebacks a second, which fill a disk and bury everything else
in the log. Here

- one file descriptor is held in reserve; when ``accept`` runs out, the reserve is freed, every
  connection waiting is accepted and closed at once (its client sees the connection close instead
  of hanging), and the reserve is taken again; the loop then finds no connection waiting and
  stops trying until asyncio's retry a second later;
- the first error of each kind (its message and exception) in an interval is logged, a shortage
  as one line without a traceback (the reason is all there is to say), anything else with its
  traceback as asyncio would; the rest of the interval's errors of that kind are counted, and one
  line at the end of the interval gives the count.
"""

import asyncio
import errno
import logging
import os
import socket
from typing import Any

logger = logging.getLogger("uvicorn.error")

INTERVAL = 10.0  # seconds
# What `accept` fails with when the process or the system runs out of something: asyncio's list.
SHORTAGES = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


class SpareDescriptor:
    """One file descriptor held in reserve, freed to accept (and close) connections that the
    process has no descriptor left for."""

    def __init__(self) -> None:
        self.fd: int | None = os.open(os.devnull, os.O_RDONLY)

    def shed(self, listener: int) -> int:
        """Accept and close every connection waiting on the listening socket `listener` (a file
        descriptor), with the reserve freed for them; how many there were."""
        if self.fd is None:
            return 0
        os.close(self.fd)
        waiting = socket.socket(fileno=listener)  # the same socket: detached, never closed
        shed = 0
        try:
            waiting.setblocking(False)
            while True:
                waiting.accept()[0].close()
                shed += 1
        except OSError:  # none waiting (BlockingIOError), or the freed descriptor was taken
            pass
        finally:
            waiting.detach()
            try:
                self.fd = os.open(os.devnull, os.O_RDONLY)
            except OSError:  # taken meanwhile: no reserve until the process closes some
                self.fd = None
        return shed


class QuietErrors:
    """An asyncio exception handler (`loop.set_exception_handler`) that sheds connections at the
    descriptor limit (`SpareDescriptor`) and logs each kind of error once per `interval` seconds,
    then how many of that kind it left out."""

    def __init__(self, interval: float = INTERVAL) -> None:
        self.interval = interval
        self.spare = SpareDescriptor()
        self._left_out: dict[tuple[str, str], int] = {}  # kind → errors not logged so far

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exception = context.get("exception")
        shortage = isinstance(exception, OSError) and exception.errno in SHORTAGES
        shed = 0
        if shortage and "socket" in context:
            shed = self.spare.shed(context["socket"].fileno())
        message = str(context.get("message", "unhandled error in the event loop"))
        kind = (message, str(exception) if shortage else type(exception).__name__)
        if kind in self._left_out:
            self._left_out[kind] += 1
            return
        self._left_out[kind] = 0
        loop.call_later(self.interval, self._summarise, kind)
        if shortage:
            logger.error(
                "%s: %s; %d waiting connections closed (more like it are counted, not logged)",
                message,
                exception,
                shed,
            )
        else:
            loop.default_exception_handler(context)

    def _summarise(self, kind: tuple[str, str]) -> None:
        """End the interval of `kind`: log how many of its errors were left out, if any."""
        left_out = self._left_out.pop(kind)
        if left_out:
            logger.error("%s (%s): %d more in the last %g s", *kind, left_out, self.interval)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """An asyncio event loop with `QuietErrors` as its exception handler (uvicorn's ``loop``
    setting takes this function by its import string, in every worker process)."""
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(QuietErrors())
    return loop
