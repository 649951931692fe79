"""The names `ner-serve` answers to: its guard against DNS rebinding.

A web page can point a name of its own at 127.0.0.1 (DNS rebinding); the browser then takes a
server on the visitor's machine for the page's own site and lets the page read its answers. The
requests still carry the page's name in their ``Host`` header, so a server that answers only to
its own names (``localhost``, ``127.0.0.1``, ``[::1]``, the address it listens on and those given
with ``--allowed-hosts``) refuses them.
"""

from collections.abc import Iterable

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK = ("localhost", "127.0.0.1", "[::1]")
ANY = "*"
_WILDCARD_ADDRESSES = ("", "0.0.0.0", "[::]")  # listen on every interface: not a name


def host_name(value: str) -> str:
    """A Host header (or a name given as allowed) without its port, in lower case:
    ``Example.org:80`` → ``example.org``, ``[::1]:8000`` and ``::1`` → ``[::1]``."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[: value.index("]") + 1] if "]" in value else value
    if value.count(":") > 1:  # a bare IPv6 address
        return f"[{value}]"
    return value.split(":", 1)[0]


def allowed_hosts(bound: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The names a server listening on `bound` answers to: loopback, `bound` itself (unless it is
    a wildcard address such as 0.0.0.0) and `extra`; ``*`` among them allows any name."""
    names = {*LOOPBACK, *(host_name(name) for name in extra if name.strip())}
    if host_name(bound) not in _WILDCARD_ADDRESSES:
        names.add(host_name(bound))
    return frozenset(names)


class HostCheck:
    """ASGI middleware: an HTTP request whose Host header names none of `allowed` (or that has
    none) gets a JSON 400 and never reaches the application; ``*`` in `allowed` lets all in."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str]) -> None:
        self.app = app
        self.allowed = frozenset(host_name(name) for name in allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and ANY not in self.allowed:
            header = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if host_name(header) not in self.allowed:
                shown = repr(header[:100]) if header else "missing"
                detail = (
                    f"the Host header is {shown}: this server answers only to "
                    f"{', '.join(sorted(self.allowed))} (start ner-serve with --allowed-hosts "
                    "NAME to add a name)"
                )
                await JSONResponse({"detail": detail}, 400)(scope, receive, send)
                return
        await self.app(scope, receive, send)
