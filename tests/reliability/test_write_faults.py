"""Faults at every kind of write site: kill -9 in the middle, a full disk, a read-only data folder,
two processes on one cache entry. After each, what was finished is intact, nothing half-written
is mistaken for finished, and the next run cleans up and succeeds."""

import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import torch
from tiny_tagger import BILM, FIXTURE, saved_model

from ner.common.checkpoints import load_checkpoint, save_checkpoint
from ner.common.downloads import fetch
from ner.common.files import TEMPORARY_MARK, atomic_write, remove_stale_temporaries
from ner.common.keyed_cache import key_digest
from ner.common.paths import PROJECT_ROOT
from ner.features.cache import ElmoFeatureCache
from ner.model.tagger import Tagger

HOST = socket.gethostname().replace("-", "_")
SENTENCES = [["The", "cat", "sat", "."], ["Peter", "Blackburn", "visited", "Brussels", "."]] * 8


def temporaries(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if TEMPORARY_MARK in p.name]


def run_child(code: str, marker: Path, **kwargs) -> None:
    """Run `code` in a child Python, wait until it creates `marker` (it is then mid-write), and
    kill -9 it."""
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=PROJECT_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        **kwargs,
    )
    deadline = time.monotonic() + 120
    while not marker.exists():
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            raise AssertionError(f"the child never reached the write: {child.stderr.read()}")
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait()


# --- kill -9 in the middle of a write -------------------------------------------------------


def test_kill_during_a_checkpoint_write_keeps_the_previous_one(tmp_path):
    path = tmp_path / "last.pt"
    save_checkpoint(path, {"epoch": 1, "weights": torch.ones(3)})
    run_child(
        f"""
        from pathlib import Path
        import time, torch
        import ner.common.checkpoints as checkpoints
        real_save = torch.save
        def slow_save(content, handle):
            handle.write(b"half a checkpoint")
            handle.flush()
            Path({str(tmp_path / "mid-write")!r}).touch()
            time.sleep(600)
        checkpoints.torch.save = slow_save
        checkpoints.save_checkpoint(Path({str(path)!r}), {{"epoch": 2}})
        """,
        tmp_path / "mid-write",
    )
    assert load_checkpoint(path)["epoch"] == 1  # the finished checkpoint is intact
    assert len(temporaries(tmp_path)) == 1  # the killed write's leftover ...
    save_checkpoint(path, {"epoch": 2, "weights": torch.zeros(3)})
    assert temporaries(tmp_path) == []  # ... is removed by the next write of the same file
    assert load_checkpoint(path)["epoch"] == 2


def test_kill_during_a_cache_build_is_rebuilt_by_the_next_run(tmp_path):
    cache_root = tmp_path / "cache"
    code = f"""
        import json, time
        from pathlib import Path
        from ner.bilm.bilm import BiLM
        from ner.features.cache import cache_key, open_or_build
        SENTENCES = {SENTENCES!r}
        bilm = BiLM.from_files({str(FIXTURE / "options.json")!r}, {str(FIXTURE / "lm_weights.hdf5")!r})
        calls = 0
        def stalling(ids):
            global calls
            calls += 1
            if calls == 2:  # the first chunk is written: stop mid-build
                Path({str(tmp_path / "mid-write")!r}).touch()
                time.sleep(600)
            return real(ids)
        real, bilm.forward = bilm.forward, stalling
        key = cache_key(weights_sha256="w", options={{}}, state="warm", batch_size=2, corpus="c")
        open_or_build(Path({str(cache_root)!r}), key, SENTENCES, lambda: bilm, batch_size=2,
                      progress=False)
        """  # noqa: E501
    run_child(code, tmp_path / "mid-write")
    key = {"format": 3, "weights_sha256": "w", "options": {}, "state": "warm"}
    key.update(batch_size=2, corpus="c")
    entry = cache_root / key_digest(key)
    assert not entry.exists()  # never a half cache under the real name
    assert len(temporaries(cache_root)) == 1
    # The next run (code above without the stall) builds the entry and removes the leftover.
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code.replace("calls == 2", "False"))],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert temporaries(cache_root) == []
    cache = ElmoFeatureCache(entry)  # complete, checksum verified
    assert len(cache) == len(SENTENCES)


def test_kill_during_a_model_archive_write_keeps_the_previous_model(tmp_path):
    target = tmp_path / "model"
    shutil.copytree(saved_model(), target)
    before = (target / "archive.json").read_text()
    run_child(
        f"""
        import time
        from pathlib import Path
        import ner.model.archive as archive
        from ner.model.tagger import Tagger
        tagger = Tagger.load({str(target)!r})
        def stalled_save_file(tensors, path, metadata=None):
            Path(path).write_bytes(b"half the weights")
            Path({str(tmp_path / "mid-write")!r}).touch()
            time.sleep(600)
        archive.save_file = stalled_save_file
        tagger.save({str(target)!r})
        """,
        tmp_path / "mid-write",
    )
    assert (target / "archive.json").read_text() == before
    Tagger.load(target)  # the finished model still loads, checksums and all
    assert len(temporaries(tmp_path)) == 1
    Tagger.load(target).save(target)  # the next save replaces it and cleans up
    assert temporaries(tmp_path) == []
    Tagger.load(target)


class StallingHandler(BaseHTTPRequestHandler):
    """Sends half of `body`, then waits until `release` is set before sending the rest."""

    body = b"x" * (3 << 20)  # more than the 1 MiB that fetch reads at a time
    release = threading.Event()

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        try:
            self.wfile.write(self.body[: len(self.body) // 2])
            self.wfile.flush()
            self.release.wait(timeout=300)
            self.wfile.write(self.body[len(self.body) // 2 :])
        except OSError:
            pass  # the client was killed

    def log_message(self, *args):
        pass


def test_kill_during_a_download_leaves_no_file_and_the_next_fetch_succeeds(tmp_path):
    downloads = tmp_path / "downloads"
    StallingHandler.release.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), StallingHandler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/file.bin"
    try:
        child = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from pathlib import Path; from ner.common.downloads import fetch; "
                "fetch(sys.argv[1], cache_dir=Path(sys.argv[2]))",
                url,
                str(downloads),
            ],
            cwd=PROJECT_ROOT,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while not (
            downloads.is_dir() and any(p.stat().st_size >= 1 << 20 for p in temporaries(downloads))
        ):
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)  # half downloaded
        child.wait()
        assert [p.name for p in downloads.iterdir() if TEMPORARY_MARK not in p.name] == []
        StallingHandler.release.set()
        path = fetch(url, cache_dir=downloads)
    finally:
        StallingHandler.release.set()
        server.shutdown()
        server.server_close()
    assert path.read_bytes() == StallingHandler.body
    assert temporaries(downloads) == []


# --- a full disk ------------------------------------------------------------------------------


@contextmanager
def file_size_limit(limit: int):
    """Writes past `limit` bytes fail with an OSError (EFBIG), as on a full disk (ENOSPC)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


def test_a_full_disk_during_a_checkpoint_write_keeps_the_previous_one(tmp_path):
    path = tmp_path / "last.pt"
    save_checkpoint(path, {"epoch": 1, "weights": torch.ones(10)})
    with pytest.raises(OSError), file_size_limit(4096):
        save_checkpoint(path, {"epoch": 2, "weights": torch.ones(100_000)})
    assert load_checkpoint(path)["epoch"] == 1
    assert temporaries(tmp_path) == []


def test_a_full_disk_during_a_cache_build_leaves_nothing_and_the_retry_works(tmp_path):
    from ner.features.elmo import ElmoFeatures

    config = {**{"options_file": BILM.options, "weight_file": BILM.weights}, "state": "warm"}
    features = ElmoFeatures(config, cache_dir=tmp_path, progress=False)
    with pytest.raises(OSError), file_size_limit(2048):
        features.source(SENTENCES)
    assert [p for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == []
    layers = features.source(SENTENCES)([0, 1])
    assert layers.shape[:2] == (2, 3) and torch.isfinite(layers).all()


# --- read-only data folder, shared data folders ------------------------------------------------


@contextmanager
def read_only(folder: Path):
    """Make `folder` read-only for this process: chmod, or for root (whom modes do not stop) the
    immutable attribute."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if shutil.which("chattr") is None:
        pytest.skip("running as root without chattr: no way to make a folder read-only")
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode:
        pytest.skip("running as root and chattr +i is not permitted here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_a_read_only_cache_serves_what_is_there_and_names_what_it_cannot_write(tmp_path):
    from ner.features.elmo import ElmoFeatures

    config = {"options_file": BILM.options, "weight_file": BILM.weights, "state": "warm"}
    cache_dir = tmp_path / "elmo_cache"
    built = ElmoFeatures(config, cache_dir=cache_dir, progress=False).source(SENTENCES)([0])
    with read_only(cache_dir):
        features = ElmoFeatures(config, cache_dir=cache_dir, progress=False)
        assert torch.equal(features.source(SENTENCES)([0]), built)  # read, not rebuilt
        with pytest.raises(PermissionError, match=rf"{cache_dir} is not writable"):
            features.source([["Other", "words"]])


def test_new_files_follow_the_umask_so_a_group_can_share_the_data_folder(tmp_path, monkeypatch):
    from ner.data import prepare_corpus

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for split in ("train", "dev", "test"):
        (corpus / f"{split}.txt").write_text("EU B-ORG\nrejects O\n\nPeter B-PER\n")
    monkeypatch.setenv("NER_DATA_DIR", str(tmp_path / "data"))
    previous = os.umask(0o002)
    try:
        prepare_corpus(corpus)
        with atomic_write(tmp_path / "shared.json", "w") as handle:
            handle.write("{}")
        save_checkpoint(tmp_path / "c.pt", {"x": torch.ones(1)})
        from ner.features.elmo import ElmoFeatures

        config = {"options_file": BILM.options, "weight_file": BILM.weights, "state": "warm"}
        ElmoFeatures(config, cache_dir=tmp_path / "cache", progress=False).source(SENTENCES)
        Tagger.load(saved_model()).save(tmp_path / "model")
    finally:
        os.umask(previous)
    for path in [tmp_path / "shared.json", tmp_path / "c.pt"]:
        assert path.stat().st_mode & 0o777 == 0o664, path
    written = ["cache", "model", "data/corpora"]
    for path in [item for folder in written for item in (tmp_path / folder).rglob("*")]:
        expected = 0o775 if path.is_dir() else 0o664
        assert path.stat().st_mode & 0o777 == expected, path
    assert (tmp_path / "cache").stat().st_mode & 0o777 == 0o775


# --- leftovers ---------------------------------------------------------------------------------


def test_only_leftovers_of_dead_processes_on_this_machine_are_removed(tmp_path):
    target = tmp_path / "results.json"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    leftovers = {
        "dead": tmp_path / f".results.json{TEMPORARY_MARK}{HOST}-{dead.pid}",
        "alive": tmp_path / f".results.json{TEMPORARY_MARK}{HOST}-{os.getppid()}",
        "other machine": tmp_path / f".results.json{TEMPORARY_MARK}elsewhere-{dead.pid}",
    }
    for path in leftovers.values():
        path.write_text("partial")
    assert remove_stale_temporaries(target) == [leftovers["dead"]]
    assert leftovers["alive"].exists() and leftovers["other machine"].exists()


def test_partial_files_of_earlier_versions_are_removed_once_an_hour_old(tmp_path):
    target = tmp_path / "weights.hdf5"
    old, fresh = tmp_path / "weights.hdf5.partial", tmp_path / "weights.hdf5.partial4242"
    unrelated = tmp_path / "weights.hdf5.partial-notes"
    for path in (old, fresh, unrelated):
        path.write_text("partial")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    os.utime(unrelated, (time.time() - 7200, time.time() - 7200))
    assert remove_stale_temporaries(target) == [old]
    assert fresh.exists() and unrelated.exists()
