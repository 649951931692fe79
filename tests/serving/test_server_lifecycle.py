"""`ner-serve` and its connections: a client that hangs up costs no model time."""

import json
import socket
import time
from pathlib import Path

from live_server import start_server, stop_server


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
