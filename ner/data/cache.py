"""Arrow cache of prepared corpora, keyed by a fingerprint of their sources and options.

The key holds the sha256 of every source file (or the pinned archive digest), every reading
option and `FORMAT_VERSION`, so editing a source file, changing an option or changing how
corpora are prepared gives a new folder; the old one is simply no longer used. An entry records
the size and sha256 of its files, checked when first read in a process: one whose files were
changed or damaged since is rebuilt.
"""

import json
import logging
from collections.abc import Callable
from pathlib import Path

import datasets

from ner.common.files import write_json
from ner.common.keyed_cache import key_digest, open_or_build
from ner.common.paths import data_dir
from ner.common.verified import digests_match, record_digests
from ner.data.builder import CorpusInfo

logger = logging.getLogger(__name__)
# Bump when the prepared layout or content changes for the same sources and options.
FORMAT_VERSION = 1


def fingerprint(key: dict) -> str:
    """A short stable hash of a JSON-serialisable key (JSON's default separators, as folder
    names have always been made, so existing caches keep their names)."""
    return key_digest({"format": FORMAT_VERSION, **key}, length=16, separators=(", ", ": "))


def cached_corpus(
    name: str, key: dict, build: Callable[[], tuple[datasets.DatasetDict, CorpusInfo]]
) -> tuple[datasets.DatasetDict, CorpusInfo]:
    """Load the prepared corpus for `key` from ``data_dir()/corpora``, building it if needed."""

    def save(staging: Path) -> CorpusInfo:
        if (folder / "info.json").is_file():
            logger.warning(
                "rebuilding corpus cache %s: it has no record of its files, or they were "
                "changed or damaged",
                folder,
            )
        dataset, info = build()
        bars = datasets.is_progress_bar_enabled()
        datasets.disable_progress_bars()
        try:
            dataset.save_to_disk(str(staging / "arrow"))
        finally:
            if bars:
                datasets.enable_progress_bars()
        write_json(staging / "key.json", json.loads(json.dumps(key, default=str, sort_keys=True)))
        write_json(staging / "info.json", info.to_dict())
        record_digests(staging)
        return info

    def open_built(folder: Path, info: CorpusInfo) -> tuple[datasets.DatasetDict, CorpusInfo]:
        return datasets.load_from_disk(str(folder / "arrow")), info

    folder = data_dir() / "corpora" / f"{name}-{fingerprint(key)}"
    return open_or_build(folder, _load, save, open_built)


def _load(folder: Path) -> tuple[datasets.DatasetDict, CorpusInfo] | None:
    """The prepared corpus in `folder`, or None when it is missing or unreadable (rebuilt)."""
    if not (folder / "info.json").is_file():
        return None
    if not digests_match(folder):
        return None  # `save` says why it is rebuilt
    try:
        info = CorpusInfo(**json.loads((folder / "info.json").read_text()))
        return datasets.load_from_disk(str(folder / "arrow")), info
    except (OSError, ValueError, TypeError) as error:
        logger.warning("rebuilding unreadable corpus cache %s (%s)", folder, error)
        return None
