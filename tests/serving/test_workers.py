"""`ner-serve --workers 2`: two processes, each with the model loaded once, answer on one port."""

import subprocess

import pytest
from live_server import start_server, stop_server


@pytest.mark.slow
def test_two_workers_answer(served_run) -> None:
    server = start_server(served_run, "--workers", "2", "--threads", "1")
    try:
        children = subprocess.check_output(["ps", "--ppid", str(server.process.pid), "-o", "args="])
        lines = children.decode().splitlines()
        workers = [line for line in lines if "multiprocessing.spawn" in line]
        assert len(workers) == 2, children
        for _ in range(12):
            status, answer = server.request("POST", "/predict", {"text": "Anna likes Rome."})
            assert status == 200
            assert [e["text"] for e in answer["documents"][0]["entities"]] == ["Anna", "Rome"]
        status, info = server.request("GET", "/info")
        assert status == 200 and info["labels"] == ["LOC", "PER"]
    finally:
        stop_server(server)
