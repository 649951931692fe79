"""`ner-serve` and its connections: the names it answers to, and a client that hangs up costs no
model time."""

import json
import socket
import time
from pathlib import Path

import pytest
from live_server import Server, start_server, stop_server

from ner.serving.hosts import allowed_hosts, host_name


def send_predict(host: str, port: int, text: str) -> socket.socket:
    """A connection that has sent one complete /predict request (and not read the answer)."""
    body = json.dumps({"text": text}).encode()
    head = (
        f"POST /predict HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    connection = socket.create_connection((host, port), timeout=30)
    connection.sendall(head + body)
    return connection


def test_a_request_whose_client_hung_up_is_not_tagged(served_run: Path) -> None:
    """The micro-batch waits 3 s for company; the client leaves after 0.5 s, so its request is
    dropped before the batch starts and the model never runs."""
    server = start_server(served_run, "--threads", "1", "--batch-wait-ms", "3000")
    try:
        connection = send_predict(server.host, server.port, "Anna lives in Rome.")
        time.sleep(0.5)
        connection.close()
        time.sleep(4)
        status, health = server.request("GET", "/health")
        assert status == 200 and (health["requests"], health["batches"]) == (0, 0)
    finally:
        stop_server(server)


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "localhost.evil"]
)
def test_a_request_for_another_name_is_refused(server: Server, host: str) -> None:
    """DNS rebinding: a page's own name pointed at 127.0.0.1 reaches the server with that name
    in its Host header, and gets a 400 instead of the API."""
    status, answer = server.request("POST", "/predict", {"text": "Rome"}, {"Host": host})
    assert status == 400 and "the Host header is" in answer["detail"]
    assert server.request("GET", "/info", headers={"Host": host})[0] == 400


def test_a_request_without_a_host_header_is_refused(server: Server) -> None:
    with socket.create_connection((server.host, server.port), timeout=30) as connection:
        connection.sendall(b"GET /health HTTP/1.0\r\n\r\n")
        answer = connection.makefile("rb").read()
    assert answer.startswith(b"HTTP/1.1 400") and b"the Host header is missing" in answer


def test_the_local_names_are_answered(server: Server) -> None:
    for host in ["localhost", f"LOCALHOST:{server.port}", f"127.0.0.1:{server.port}", "[::1]"]:
        assert server.request("GET", "/health", headers={"Host": host})[0] == 200, host


def test_allowed_hosts_adds_names(served_run: Path) -> None:
    server = start_server(served_run, "--threads", "1", "--allowed-hosts", "ner.example.org, x.y")
    try:
        for host, status in [("ner.example.org:443", 200), ("x.y", 200), ("evil.example", 400)]:
            assert server.request("GET", "/health", headers={"Host": host})[0] == status, host
    finally:
        stop_server(server)


def test_the_names_a_server_answers_to() -> None:
    assert host_name("Example.ORG:80") == "example.org"
    assert host_name("[::1]:8000") == host_name("::1") == "[::1]"
    assert allowed_hosts("127.0.0.1") == {"localhost", "127.0.0.1", "[::1]"}
    assert allowed_hosts("0.0.0.0") == allowed_hosts("::") == allowed_hosts("127.0.0.1")
    assert allowed_hosts("10.1.2.3", ["ner.example.org"]) == {
        "localhost",
        "127.0.0.1",
        "[::1]",
        "10.1.2.3",
        "ner.example.org",
    }
