"""Fixtures: a real `ner-serve` process on a free loopback port, serving the tiny tagger
(tests/tiny_tagger.py) as a training run's model/ folder next to its results.json; shared by the
API, load and browser tests of this folder."""

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_server import RUN_SCORES, Server, start_server, stop_server
from tiny_tagger import saved_model


@pytest.fixture(scope="session")
def served_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the tiny model as ``run/model`` with the run's ``run/results.json``."""
    run = tmp_path_factory.mktemp("run")
    shutil.copytree(saved_model(), run / "model")
    (run / "results.json").write_text(json.dumps(RUN_SCORES))
    return run / "model"


@pytest.fixture(scope="session")
def server(served_run: Path) -> Iterator[Server]:
    """ner-serve with its default limits, on one thread."""
    running = start_server(served_run, "--threads", "1")
    yield running
    stop_server(running)
