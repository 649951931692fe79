import hashlib
import http.server
import socket
import threading

import pytest

from ner.common.downloads import (
    ChecksumError,
    DownloadError,
    DownloadRefused,
    TooLargeError,
    fetch,
    nltk_corpus_url,
)

PAYLOAD = b"0123456789" * 1000
DIGEST = hashlib.sha256(PAYLOAD).hexdigest()


@pytest.fixture
def server(http_server):
    """The local server with `payload.bin`; yields (base URL, hit list)."""
    (http_server.root / "payload.bin").write_bytes(PAYLOAD)
    return http_server.base, http_server.hits


def test_download_once_verified_and_cached(server, tmp_path):
    base, hits = server
    cache = tmp_path / "cache"
    path = fetch(f"{base}/payload.bin", sha256=DIGEST, cache_dir=cache)
    assert path.read_bytes() == PAYLOAD
    assert path.parent == cache and DIGEST[:16] in path.name
    assert fetch(f"{base}/payload.bin", sha256=DIGEST, cache_dir=cache) == path
    assert hits == ["/payload.bin"]  # the second call used the cache
    assert [p.name for p in cache.iterdir()] == [path.name]  # no partial files left


def test_default_cache_is_under_data_dir(server, isolated_data_dir):
    base, _ = server
    path = fetch(f"{base}/payload.bin")
    assert path.parent == isolated_data_dir / "downloads"


def test_checksum_mismatch_keeps_nothing(server, tmp_path):
    base, _ = server
    cache = tmp_path / "cache"
    with pytest.raises(ChecksumError, match=f"expected sha256 {'0' * 64}, got {DIGEST}"):
        fetch(f"{base}/payload.bin", sha256="0" * 64, cache_dir=cache)
    assert list(cache.iterdir()) == []


def test_http_error_names_the_url(server, tmp_path):
    base, _ = server
    with pytest.raises(DownloadError, match=rf"{base}/missing.bin: HTTP 404"):
        fetch(f"{base}/missing.bin", cache_dir=tmp_path)


def test_unreachable_host_says_offline(tmp_path):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/x.zip"
    with pytest.raises(DownloadError, match=r"x\.zip: .*offline") as info:
        fetch(url, cache_dir=tmp_path)
    assert isinstance(info.value, OSError)
    assert list(tmp_path.iterdir()) == []


def test_local_paths_and_file_urls(tmp_path):
    path = tmp_path / "a file.bin"
    path.write_bytes(PAYLOAD)
    assert fetch(path, sha256=DIGEST) == path
    assert fetch(path.as_uri(), sha256=DIGEST) == path
    with pytest.raises(ChecksumError, match=r"a file\.bin"):
        fetch(path, sha256="f" * 64)
    with pytest.raises(FileNotFoundError, match=r"missing\.bin"):
        fetch(tmp_path / "missing.bin")


def test_nltk_url_overrides(monkeypatch):
    monkeypatch.delenv("NER_NLTK_DATA_URL", raising=False)
    assert nltk_corpus_url("conll2000") == (
        "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/conll2000.zip"
    )
    monkeypatch.setenv("NER_NLTK_DATA_URL", "file:///mirror/nltk_data/")
    assert nltk_corpus_url("x") == "file:///mirror/nltk_data/packages/corpora/x.zip"
    assert nltk_corpus_url("x", "/m") == "/m/packages/corpora/x.zip"


def test_download_refused_unless_allowed(server, tmp_path):
    base, hits = server
    cache = tmp_path / "cache"
    with pytest.raises(DownloadRefused, match=r"payload\.bin would have to be downloaded"):
        fetch(f"{base}/payload.bin", sha256=DIGEST, cache_dir=cache, download=False)
    assert hits == []
    path = fetch(f"{base}/payload.bin", sha256=DIGEST, cache_dir=cache)
    assert fetch(f"{base}/payload.bin", sha256=DIGEST, cache_dir=cache, download=False) == path


def test_a_file_larger_than_expected_is_refused(server, tmp_path):
    base, _ = server
    cache = tmp_path / "cache"
    with pytest.raises(TooLargeError, match="announces 10000 bytes, more than the 9999 expected"):
        fetch(f"{base}/payload.bin", sha256=DIGEST, cache_dir=cache, max_bytes=9999)
    assert list(cache.iterdir()) == []
    path = tmp_path / "local.bin"
    path.write_bytes(PAYLOAD)
    with pytest.raises(TooLargeError, match="has 10000 bytes, more than the 9999 expected"):
        fetch(path, max_bytes=9999)
    assert fetch(path, sha256=DIGEST, max_bytes=10000) == path


class Endless(http.server.BaseHTTPRequestHandler):
    """Sends zeros without a Content-Length until the client goes away; counts what it sent."""

    sent = 0

    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        try:
            while Endless.sent < 1 << 30:
                self.wfile.write(bytes(1 << 16))
                Endless.sent += 1 << 16
        except OSError:
            pass

    def log_message(self, *args):
        pass


def test_a_download_without_a_length_stops_at_max_bytes(tmp_path):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Endless)
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/endless.bin"
        with pytest.raises(TooLargeError, match="sends more than the 3000000 bytes expected"):
            fetch(url, cache_dir=tmp_path, max_bytes=3_000_000)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert list(tmp_path.iterdir()) == []
    assert Endless.sent < 100 * 2**20  # it stopped reading; the server gave up long before 1 GiB


@pytest.mark.parametrize("pin", [DIGEST, None])
def test_a_kept_download_changed_since_is_downloaded_again(server, tmp_path, pin):
    base, hits = server
    cache = tmp_path / "cache"
    path = fetch(f"{base}/payload.bin", sha256=pin, cache_dir=cache)
    edited = path.with_name("edited")
    edited.write_bytes(PAYLOAD.replace(b"9", b"x"))  # same size, other bytes
    edited.replace(path)
    assert fetch(f"{base}/payload.bin", sha256=pin, cache_dir=cache) == path
    assert path.read_bytes() == PAYLOAD and hits == ["/payload.bin"] * 2
    assert fetch(f"{base}/payload.bin", sha256=pin, cache_dir=cache) == path
    assert hits == ["/payload.bin"] * 2  # checked and kept: not downloaded a third time


def test_a_download_kept_without_its_record_is_recorded_as_it_is(server, tmp_path):
    base, hits = server
    path = fetch(f"{base}/payload.bin", cache_dir=tmp_path)
    record = path.with_name(path.name + ".sha256")
    assert record.read_text() == DIGEST
    record.unlink()  # as kept before records were written
    assert fetch(f"{base}/payload.bin", cache_dir=tmp_path) == path and hits == ["/payload.bin"]
    assert record.read_text() == DIGEST
