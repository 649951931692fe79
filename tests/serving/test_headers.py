"""`ner-serve`'s security headers: ``nosniff`` on every answer, a Content-Security-Policy on the
page, and X-Forwarded-For believed only from a proxy named with ``--trusted-proxy``."""

import http.client
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from live_server import Server, start_server, stop_server
from tiny_tagger import one_thread, saved_model

from ner.model.tagger import Tagger
from ner.serving.app import create_app
from ner.serving.headers import PAGE_POLICY


def headers(server: Server, method: str, path: str, body: bytes = b"", **extra: str) -> dict:
    """The headers (lower-case names) of one answer."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=60)
    try:
        connection.request(method, path, body=body or None, headers=extra)
        response = connection.getresponse()
        response.read()
        return {name.lower(): value for name, value in response.getheaders()}
    finally:
        connection.close()


JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize(
    ("method", "path", "body", "extra"),
    [
        ("GET", "/health", b"", {}),
        ("GET", "/info", b"", {}),
        ("GET", "/page/page.js", b"", {}),
        ("GET", "/nothing", b"", {}),  # 404
        ("POST", "/predict", b'{"text": "Anna lives in Rome."}', JSON),
        ("POST", "/predict", b'{"text": ""}', JSON),  # 422
        ("POST", "/predict", b"text", {"Content-Type": "text/plain"}),  # 415
        ("GET", "/health", b"", {"Host": "evil.example"}),  # 400 from the Host check
    ],
)
def test_every_answer_says_nosniff(
    server: Server, method: str, path: str, body: bytes, extra: dict
) -> None:
    answer = headers(server, method, path, body, **extra)
    assert answer["x-content-type-options"] == "nosniff"
    assert "content-security-policy" not in answer  # the policy is the page's


def test_the_page_has_a_content_security_policy(server: Server) -> None:
    answer = headers(server, "GET", "/")
    assert answer["content-type"].startswith("text/html")
    assert answer["content-security-policy"] == PAGE_POLICY
    assert answer["x-content-type-options"] == "nosniff"


def logged_client(server: Server, forwarded_for: str) -> str:
    """The client address the server logs for a request that claims `forwarded_for`."""
    before = server.log.read_text()
    headers(server, "GET", "/health?who", **{"X-Forwarded-For": forwarded_for})
    line = next(
        line for line in server.log.read_text()[len(before) :].splitlines() if "?who" in line
    )
    return line.split()[1].rsplit(":", 1)[0]


def test_x_forwarded_for_is_ignored_by_default(server: Server) -> None:
    """A local client cannot put another address in the log (uvicorn trusts loopback)."""
    assert logged_client(server, "203.0.113.9") == "127.0.0.1"


def test_x_forwarded_for_names_the_client_behind_a_trusted_proxy(served_run: Path) -> None:
    server = start_server(served_run, "--threads", "1", "--trusted-proxy", "127.0.0.0/8")
    try:
        assert logged_client(server, "203.0.113.9") == "203.0.113.9"
    finally:
        stop_server(server)


def test_a_bugs_500_says_nosniff_too() -> None:
    """Starlette answers an unforeseen error from outside every middleware."""
    with one_thread():
        app = create_app(Tagger.load(saved_model()), saved_model())

    @app.get("/fails")
    async def fails() -> None:
        raise RuntimeError("a bug")

    client = TestClient(app, base_url="http://localhost", raise_server_exceptions=False)
    answer = client.get("/fails")
    assert answer.status_code == 500
    assert answer.headers["x-content-type-options"] == "nosniff"
