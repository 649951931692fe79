"""One way in for every remote file (PyPI wheels, nltk_data archives, GloVe, biLM weights).

`fetch` downloads a URL once into ``data_dir()/downloads/`` with a progress bar, checks its sha256
while streaming, and renames it into place only when complete and verified, so the cache never
holds a partial or corrupt file. A kept copy is checked again when first used in a process,
against its pinned digest or, without a pin, the digest recorded beside it when it was
downloaded, and downloaded again if it was changed or damaged since. Local paths and
``file://`` URLs are used in place.
"""

import contextlib
import hashlib
import logging
import os
import socket
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from tqdm import tqdm

from ner.common.errors import MissingFileError, NerError
from ner.common.files import atomic_write
from ner.common.paths import data_dir
from ner.common.verified import checked_once, sha256_file

NLTK_DATA_URL = "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages"
REUTERS_URL = (
    "https://archive.ics.uci.edu/ml/machine-learning-databases/reuters21578-mld/reuters21578.tar.gz"
)
_CHUNK = 1 << 20
logger = logging.getLogger(__name__)
_TIMEOUT_S = 60


class DownloadError(NerError, OSError):
    """A URL could not be downloaded (the message names it and says when we look offline)."""


class DownloadRefused(NerError, OSError):
    """A URL would have to be downloaded, and the caller did not allow downloading."""


class TooLargeError(NerError, OSError):
    """A file is larger than its source said it would be (the download stops there)."""


class ChecksumError(NerError, OSError):
    """A file's sha256 differs from the pinned one."""

    def __init__(self, path: str | Path, expected: str, actual: str) -> None:
        super().__init__(
            f"checksum mismatch for {path}: expected sha256 {expected}, got {actual}. "
            "The file is corrupt or not the pinned version; delete it and retry, or fix the pin."
        )
        self.expected, self.actual = expected, actual


def is_url(source: str) -> bool:
    return urllib.parse.urlsplit(str(source)).scheme in ("http", "https", "file")


def join_url(base: str, relative: str) -> str:
    """`relative` under a base that is a URL, a ``file://`` URL or a plain local folder."""
    if is_url(base):
        return base.rstrip("/") + "/" + relative
    return str(Path(base) / relative)


def nltk_corpus_url(name: str, base: str | None = None) -> str:
    """Where the nltk_data archive `name`.zip lives: `base`, else ``$NER_NLTK_DATA_URL``, else
    GitHub (``<base>/packages/corpora/<name>.zip``)."""
    base = base or os.environ.get("NER_NLTK_DATA_URL") or NLTK_DATA_URL
    return join_url(base, f"packages/corpora/{name}.zip")


def reuters_url() -> str:
    """The Reuters-21578 archive: ``$NER_REUTERS_URL`` (URL or local path), else UCI's URL."""
    return os.environ.get("NER_REUTERS_URL") or REUTERS_URL


def fetch(
    source: str | Path,
    *,
    sha256: str | None = None,
    cache_dir: Path | None = None,
    desc: str | None = None,
    max_bytes: int | None = None,
    download: bool = True,
) -> Path:
    """A local path for `source` (a path, ``file://`` or http(s) URL), verified against `sha256`.

    URLs are downloaded once into `cache_dir` (default ``data_dir()/downloads``) under a name
    that includes the pinned digest (or the URL's hash), so a changed pin downloads afresh.
    max_bytes: a file larger than this is refused (`TooLargeError`) before it is hashed, and a
    download stops as soon as it passes it; download: False refuses (`DownloadRefused`) a URL
    that is not in the cache yet.
    """
    source = str(source)
    parts = urllib.parse.urlsplit(source)
    if parts.scheme not in ("http", "https"):
        path = Path(urllib.request.url2pathname(parts.path) if parts.scheme == "file" else source)
        if not path.is_file():
            raise MissingFileError(f"no such file: {path} (from {source!r})")
        if max_bytes is not None and (size := path.stat().st_size) > max_bytes:
            raise TooLargeError(f"{path} has {size} bytes, more than the {max_bytes} expected")
        if sha256 and (actual := sha256_file(path)) != sha256:
            raise ChecksumError(path, sha256, actual)
        return path

    cache_dir = Path(cache_dir) if cache_dir else data_dir() / "downloads"
    name = Path(parts.path).name or "download"
    key = sha256 or hashlib.sha256(source.encode()).hexdigest()
    target = cache_dir / f"{key[:16]}-{name}"
    if target.is_file():
        if _intact(target, sha256):
            return target
        logger.warning("downloading %s again: the copy %s was changed or damaged", source, target)
    if not download:
        raise DownloadRefused(f"{source} would have to be downloaded, which was not allowed")
    with atomic_write(target) as part:
        actual = _download(source, part, desc or name, max_bytes)
        if sha256 and actual != sha256:
            raise ChecksumError(f"{source} (downloaded)", sha256, actual)
    if sha256 is None:
        _record(target).write_text(actual)
    return target


def _record(target: Path) -> Path:
    """Where the sha256 of a download without a pinned digest is kept, beside it."""
    return target.with_name(target.name + ".sha256")


def _intact(target: Path, sha256: str | None) -> bool:
    """Whether the kept download `target` holds the pinned `sha256`, or without a pin the digest
    recorded when it was downloaded (hashed once per process while the file is unchanged). A
    copy kept before such records were written is recorded as it is now."""
    if sha256 is None:
        try:
            sha256 = _record(target).read_text().strip()
        except FileNotFoundError:
            with contextlib.suppress(OSError):  # a read-only data folder: nothing to record in
                _record(target).write_text(sha256_file(target))
            return True
    return checked_once([target], sha256, lambda: sha256_file(target) == sha256)


def _download(url: str, out, desc: str, max_bytes: int | None = None) -> str:
    """Stream `url` into the open file `out` with a progress bar, stopping with `TooLargeError`
    past `max_bytes` (or at once when the server announces more); returns the hex sha256."""
    digest = hashlib.sha256()
    request = urllib.request.Request(url, headers={"User-Agent": "ner-elmo"})
    limit = float("inf") if max_bytes is None else max_bytes
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response:
            total = int(response.headers.get("Content-Length") or 0) or None
            if total is not None and total > limit:
                raise TooLargeError(
                    f"{url} announces {total} bytes, more than the {max_bytes} expected"
                )
            size = 0
            with tqdm(total=total, unit="B", unit_scale=True, desc=desc, disable=None) as bar:
                while block := response.read(_CHUNK):
                    size += len(block)
                    if size > limit:
                        raise TooLargeError(f"{url} sends more than the {max_bytes} bytes expected")
                    out.write(block)
                    digest.update(block)
                    bar.update(len(block))
    except TooLargeError:
        raise
    except urllib.error.HTTPError as error:
        raise DownloadError(
            f"could not download {url}: HTTP {error.code} {error.reason}"
        ) from error
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        hint = ""
        if isinstance(reason, socket.gaierror | ConnectionRefusedError | TimeoutError):
            hint = (
                " - the network looks unreachable (are we offline?); point the source at a "
                "local copy or mirror (a path or file:// URL) instead"
            )
        raise DownloadError(f"could not download {url}: {reason}{hint}") from error
    return digest.hexdigest()
