"""Shared test set-up: the tiny ELMo fixture, the optional corpus mirror (``NER_MIRROR``) for the
tests marked ``mirror``, Ray for those marked ``ray``, the SLURM cluster for the tests marked
``slurm``, and fixtures for an isolated data folder and a local http server."""

import http.server
import importlib.util
import json
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pytest
from fixture_files import FIXTURE, MIRROR

if MIRROR is not None:
    os.environ.setdefault("NER_NLTK_DATA_URL", str(MIRROR / "nltk_data"))
    os.environ.setdefault("NER_REUTERS_URL", str(MIRROR / "reuters21578" / "reuters21578.tar.gz"))
    os.environ.setdefault("NER_WNUT17_URL", str(MIRROR / "wnut17"))
# The `elmo=fixture` preset reads its folder from here.
os.environ.setdefault("NER_ELMO_FIXTURE", str(FIXTURE))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the tests that download real named corpora unless a mirror is configured, and the
    tests on a Ray cluster unless Ray is installed (the ``ray`` extra)."""
    skips = {}
    if MIRROR is None:
        skips["mirror"] = pytest.mark.skip(
            reason="downloads real corpora: set NER_MIRROR to a folder with nltk_data/, "
            "reuters21578/ and wnut17/ (a copy of the public sources) to run it"
        )
    if importlib.util.find_spec("ray") is None:
        skips["ray"] = pytest.mark.skip(
            reason="needs Ray: pip install -e '.[ray]', then pytest -m ray"
        )
    for item in items:
        for marker, skip in skips.items():
            if marker in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def slurm_cluster() -> str:
    """The running SLURM cluster's partitions (``sinfo``), for the tests marked ``slurm``; they
    are skipped, saying how to start one, when there is none."""
    start = (
        "start one with `bash scripts/slurm_test_cluster.sh start`, export the SLURM_CONF it "
        "prints, then `pytest -m slurm`"
    )
    if shutil.which("sinfo") is None:
        pytest.skip(f"needs a SLURM cluster and there is no sinfo: {start}")
    answer = subprocess.run(
        ["sinfo", "-h", "-o", "%P %t"], capture_output=True, text=True, timeout=30, check=False
    )
    if answer.returncode != 0 or ("idle" not in answer.stdout and "mix" not in answer.stdout):
        pytest.skip(
            f"needs a SLURM cluster with a free node, sinfo says {answer.stderr!r}: {start}"
        )
    return answer.stdout


@pytest.fixture
def isolated_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty `data_dir()` for tests that must not see (or fill) the shared data/ cache."""
    path = tmp_path / "data"
    monkeypatch.setenv("NER_DATA_DIR", str(path))
    return path


@dataclass
class LocalServer:
    """A local http server over `root`; `hits` lists the paths requested so far."""

    base: str
    root: Path
    hits: list[str] = field(default_factory=list)

    def url(self, name: str) -> str:
        return f"{self.base}/{name}"


@pytest.fixture
def http_server(tmp_path: Path):
    """Serve files written under `http_server.root` at `http_server.url(name)`."""
    root = tmp_path / "www"
    root.mkdir()
    server = LocalServer("", root)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            server.hits.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=root))
    server.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    httpd.shutdown()
    httpd.server_close()


# Varied lengths, non-ASCII bytes, an empty sentence.
TEXT = """The quick brown fox jumps over the lazy dog .
Paris
Zürich 's Bahnhofstraße is über-expensive , said Müller .

a b c d e f g h i j k l m n o p q r s t u v w x y z
EU rejects German call to boycott British lamb ."""


@pytest.fixture(scope="session")
def sentences() -> list[list[str]]:
    """Six tokenized test sentences (one of them empty)."""
    return [line.split() for line in TEXT.splitlines()]


@pytest.fixture(scope="session")
def fixture_dir() -> Path:
    return FIXTURE


@pytest.fixture(scope="session")
def fixture_sentences() -> list[list[list[str]]]:
    """sentences.json: 3 lists of 10 whitespace-tokenized sentences."""
    streams = json.loads((FIXTURE / "sentences.json").read_text())
    return [[line.split() for line in stream] for stream in streams]
