"""`ner-serve` and its connections: the names it answers to, deadlines for slow and idle clients,
a shutdown that ends, and a client that hangs up costs no model time."""

import json
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_server import Server, start_server, stop_server

from ner.serving.hosts import allowed_hosts, host_name


def send_predict(host: str, port: int, request: dict) -> socket.socket:
    """A connection that has sent one complete /predict request (and not read the answer)."""
    body = json.dumps(request).encode()
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
        connection = send_predict(server.host, server.port, {"text": "Anna lives in Rome."})
        time.sleep(0.5)
        connection.close()
        time.sleep(4)
        status, health = server.request("GET", "/health")
        assert status == 200 and (health["requests"], health["batches"]) == (0, 0)
    finally:
        stop_server(server)


SENTENCE = "Peter Smith lives in Rome and Anna went to Berlin on Monday with John Jones ."
# 50,000 tokens, the most a request may have: 1,000 sentences of 50
BIG = {"tokens": [(SENTENCE.split() * 5)[n % 7 : n % 7 + 50] for n in range(1000)]}


def settled_cpu(server: Server) -> float:
    """The server's CPU time once it has stopped working (used under 0.05 s in 0.5 s)."""
    spent = server.cpu_seconds()
    while True:
        time.sleep(0.5)
        before, spent = spent, server.cpu_seconds()
        if spent - before < 0.05:
            return spent


def test_an_abandoned_request_stops_being_tagged(served_run: Path) -> None:
    """A client sends the largest request allowed and hangs up once the model is at work on
    it: the server stops within a forward pass instead of tagging the rest for nobody."""
    server = start_server(served_run, "--threads", "1")
    try:
        start = settled_cpu(server)
        with send_predict(server.host, server.port, BIG) as connection:
            assert connection.makefile("rb").readline().startswith(b"HTTP/1.1 200")
        answered = settled_cpu(server) - start
        start = server.cpu_seconds()
        connection = send_predict(server.host, server.port, BIG)
        while server.cpu_seconds() - start < answered / 3:  # read, parsed, being tagged
            time.sleep(0.01)
        connection.close()
        gone = server.cpu_seconds()
        after = settled_cpu(server) - gone
    finally:
        stop_server(server)
    # before: the rest of the request, about two thirds of `answered`
    assert after < answered / 6, (after, answered)


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


@pytest.fixture(scope="module")
def impatient(served_run: Path) -> Iterator[Server]:
    """ner-serve giving clients 1 s for headers, 1 s for a body and 1 s of idleness."""
    running = start_server(
        served_run, "--threads", "1", "--read-timeout", "1", "--keep-alive-timeout", "1"
    )
    yield running
    stop_server(running)


def closed_within(connection: socket.socket, seconds: float) -> bool:
    """Whether the server closes `connection` within `seconds` (reading and dropping what it
    sends)."""
    connection.settimeout(seconds)
    try:
        while connection.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


def test_a_silent_connection_is_closed(impatient: Server) -> None:
    with socket.create_connection((impatient.host, impatient.port)) as connection:
        assert closed_within(connection, 5)


def test_headers_sent_a_byte_at_a_time_are_cut_off(impatient: Server) -> None:
    """Slowloris: every byte comes in time for uvicorn's keep-alive timer, but the headers as a
    whole do not come within the read timeout."""
    head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000
    closed = False
    with socket.create_connection((impatient.host, impatient.port)) as connection:
        connection.settimeout(0.2)
        began = time.monotonic()
        for byte in head:
            if time.monotonic() - began > 5:
                break
            try:
                connection.sendall(bytes([byte]))
                closed = connection.recv(1) == b""
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                closed = True
            if closed:
                break
    assert closed


def test_a_body_that_does_not_arrive_gets_408(impatient: Server) -> None:
    head = (
        b"POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n"
    )
    with socket.create_connection((impatient.host, impatient.port), timeout=10) as connection:
        connection.sendall(head + b'{"text": "Rome')
        answer = connection.makefile("rb").read()  # to the end: the server closes
    assert answer.startswith(b"HTTP/1.1 408")
    assert b'"detail":"the body did not arrive within 1 s (14 bytes came)"' in answer


def test_an_idle_connection_is_closed_after_the_keep_alive_timeout(impatient: Server) -> None:
    with socket.create_connection((impatient.host, impatient.port), timeout=10) as connection:
        connection.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert connection.recv(65536).startswith(b"HTTP/1.1 200")
        began = time.monotonic()
        assert closed_within(connection, 5)
        assert time.monotonic() - began < 3


def half_sent_body(server: Server) -> socket.socket:
    """A connection holding a /predict request whose body has not all been sent."""
    connection = socket.create_connection((server.host, server.port), timeout=30)
    connection.sendall(
        b"POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b'Content-Length: 100\r\n\r\n{"text": "Ro'
    )
    time.sleep(0.5)
    return connection


def exits_within(process: subprocess.Popen, seconds: float) -> bool:
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


def test_sigterm_stops_the_server_while_a_body_is_half_sent(served_run: Path) -> None:
    """The server stops within the read timeout: the body's reader gives up with a 408."""
    server = start_server(served_run, "--threads", "1", "--read-timeout", "1")
    try:
        with half_sent_body(server):
            server.process.send_signal(signal.SIGTERM)
            assert exits_within(server.process, 10)
    finally:
        stop_server(server)


def test_a_second_sigterm_stops_the_server_at_once(served_run: Path) -> None:
    """With the default read timeout (10 s) the first SIGTERM waits for the body; a second one
    does not."""
    server = start_server(served_run, "--threads", "1")
    try:
        with half_sent_body(server):
            server.process.send_signal(signal.SIGTERM)
            time.sleep(0.5)
            server.process.send_signal(signal.SIGTERM)
            assert exits_within(server.process, 3)
    finally:
        stop_server(server)
