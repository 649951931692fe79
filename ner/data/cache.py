"""Arrow cache of prepared corpora, keyed by a fingerprint of their sources and options.

The key holds the sha256 of every source file (or the pinned archive digest), every reading
option and `FORMAT_VERSION`, so editing a source file, changing an option or changing how
corpora are prepared gives a new folder; the old one is simply no longer used.
"""

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import datasets

from ner.common.paths import data_dir
from ner.data.builder import CorpusInfo

logger = logging.getLogger(__name__)
# Bump when the prepared layout or content changes for the same sources and options.
FORMAT_VERSION = 1


def fingerprint(key: dict) -> str:
    """A short stable hash of a JSON-serialisable key."""
    payload = json.dumps({"format": FORMAT_VERSION, **key}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def cached_corpus(
    name: str, key: dict, build: Callable[[], tuple[datasets.DatasetDict, CorpusInfo]]
) -> tuple[datasets.DatasetDict, CorpusInfo]:
    """Load the prepared corpus for `key` from ``data_dir()/corpora``, building it if needed."""
    root = data_dir() / "corpora"
    folder = root / f"{name}-{fingerprint(key)}"
    if (folder / "info.json").is_file():
        try:
            info = CorpusInfo(**json.loads((folder / "info.json").read_text()))
            return datasets.load_from_disk(str(folder / "arrow")), info
        except (OSError, ValueError, TypeError) as error:  # unreadable: rebuild below
            logger.warning("rebuilding unreadable corpus cache %s (%s)", folder, error)
            shutil.rmtree(folder, ignore_errors=True)
    dataset, info = build()
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root, prefix=f".{folder.name}."))
    bars = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        dataset.save_to_disk(str(staging / "arrow"))
        (staging / "key.json").write_text(json.dumps(key, indent=1, sort_keys=True, default=str))
        (staging / "info.json").write_text(json.dumps(info.to_dict(), indent=1))
        os.replace(staging, folder)
    except OSError:
        if not (folder / "info.json").is_file():  # else a concurrent run saved it first
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if bars:
            datasets.enable_progress_bars()
    return datasets.load_from_disk(str(folder / "arrow")), info
