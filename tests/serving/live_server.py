"""A real `ner-serve` process on a free loopback port, and a small HTTP helper to talk to it."""

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RUN_SCORES = {"dev": {"f1": 97.5}, "test": {"f1": 91.25}}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Server:
    """A running server: `host`, `port`, its `model` directory, and an HTTP helper."""

    host: str
    port: int
    model: Path
    process: subprocess.Popen

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def log(self) -> Path:
        """What the server printed (uvicorn's log)."""
        return self.model.parent / f"server-{self.port}.log"

    def cpu_seconds(self) -> float:
        """The CPU time (user and system) the server process has used so far (Linux)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def request(
        self,
        method: str,
        path: str,
        body: bytes | dict | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 60,
    ) -> tuple[int, Any]:
        """(status, parsed JSON or raw text) of one request on a fresh connection; a dict body
        is sent as JSON (with its Content-Type)."""
        headers = dict(headers or {})
        if isinstance(body, dict):
            body = json.dumps(body).encode()
            headers.setdefault("Content-Type", "application/json")
        connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read()
        finally:
            connection.close()
        kind = response.getheader("content-type") or ""
        return response.status, json.loads(data) if "json" in kind else data.decode()


def start_server(
    model: Path, *options: str, timeout: float = 600, preexec_fn: Callable[[], Any] | None = None
) -> Server:
    """Start ``python -m ner.cli.serve MODEL`` on a free port and wait until /health answers;
    preexec_fn: run in the server's process before it starts (e.g. to lower a resource limit)."""
    port = free_port()
    log = model.parent / f"server-{port}.log"  # Server.log
    process = subprocess.Popen(
        [sys.executable, "-m", "ner.cli.serve", str(model), "--port", str(port), *options],
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        preexec_fn=preexec_fn,
    )
    server = Server("127.0.0.1", port, model, process)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"ner-serve exited with {process.returncode}: {log.read_text()}")
        try:
            if server.request("GET", "/health", timeout=5)[0] == 200:
                return server
        except OSError:
            time.sleep(0.25)
    process.kill()
    raise RuntimeError(f"ner-serve did not answer within {timeout} s: {log.read_text()}")


def stop_server(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.process.kill()
