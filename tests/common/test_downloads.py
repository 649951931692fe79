import hashlib
import socket

import pytest

from ner.common.downloads import ChecksumError, DownloadError, fetch, nltk_corpus_url

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
