"""`ner-serve` out of file descriptors: one log line per interval instead of a traceback per
failed ``accept``, waiting connections closed instead of a spinning core, and service again once
descriptors are free."""

import resource
import socket
import time
from pathlib import Path

from live_server import start_server, stop_server

from ner.serving.loop_errors import INTERVAL

OPEN_FILES = 64  # the server's limit: enough to start, and reached by the connections below


def few_open_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))


def test_a_server_out_of_file_descriptors_logs_a_line_per_interval(served_run: Path) -> None:
    server = start_server(served_run, "--threads", "1", preexec_fn=few_open_files)
    try:
        spent = server.cpu_seconds()
        held = [socket.create_connection((server.host, server.port)) for _ in range(2 * OPEN_FILES)]
        time.sleep(INTERVAL + 1.5)  # one whole interval, and its summary line
        spent = server.cpu_seconds() - spent
        for connection in held:
            connection.close()
        time.sleep(2)  # asyncio tries to accept again a second after a failure
        assert server.request("GET", "/health")[0] == 200
    finally:
        stop_server(server)
    log = server.log.read_text()
    shortage = [line for line in log.splitlines() if "Too many open files" in line]
    assert "Traceback" not in log
    assert len(shortage) == 2, shortage  # before: about 3,000 tracebacks a second
    assert "waiting connections closed" in shortage[0]
    assert f"more in the last {INTERVAL:g} s" in shortage[1]
    assert spent < 1.0  # before: 3.8 CPU-s in 12 s, failing to accept
