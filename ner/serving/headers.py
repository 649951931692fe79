"""The security headers of `ner-serve`'s answers.

Every answer says ``X-Content-Type-Options: nosniff``, so a browser never runs an answer as a
script or a page unless its declared type says it is one (a JSON answer quoting a request's text
stays data). The HTML page also gets a Content-Security-Policy that lets it load only its own
scripts and style sheets and talk only to its own server: the page inserts text as text, and the
policy is a second wall should that ever fail (no inline script, no other site, no framing).
"""

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

NOSNIFF = {"X-Content-Type-Options": "nosniff"}
PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


class SecurityHeaders:
    """ASGI middleware: `NOSNIFF` on every HTTP answer, `PAGE_POLICY` as the
    Content-Security-Policy of every HTML one."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.update(NOSNIFF)
                if headers.get("content-type", "").startswith("text/html"):
                    headers["Content-Security-Policy"] = PAGE_POLICY
            await send(message)

        await self.app(scope, receive, send_with_headers)
