"""Pretraining ELMo biLMs from raw text (`ner-pretrain`), and the biLM shipped with us."""

from pathlib import Path

from ner.common.errors import MissingFileError
from ner.common.paths import PRETRAINED_DIR

SHIPPED_MODEL = "elmo-small-news"


def pretrained_files(name: str = SHIPPED_MODEL) -> tuple[Path, Path]:
    """(options.json, weights.hdf5) of a biLM shipped in `ner/pretrained/<name>/` (package data)."""
    folder = PRETRAINED_DIR / name
    if not folder.is_dir():
        available = (
            sorted(p.name for p in PRETRAINED_DIR.iterdir()) if PRETRAINED_DIR.is_dir() else []
        )
        raise MissingFileError(f"no shipped biLM {name!r} in {PRETRAINED_DIR} (have {available})")
    return folder / "options.json", folder / "weights.hdf5"
