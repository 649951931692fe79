"""Where the toolkit keeps downloads, prepared corpora and caches."""

import os
from pathlib import Path

import platformdirs

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# Package data: the shipped biLM(s) and taggers, one folder each.
PRETRAINED_DIR = Path(__file__).resolve().parents[1] / "pretrained"
APP_NAME = "ner-elmo"


def checkout_root() -> Path | None:
    """The source checkout the package runs from, or None when it is installed (a wheel)."""
    is_checkout = (PROJECT_ROOT / "pyproject.toml").is_file() and (PROJECT_ROOT / "ner").is_dir()
    return PROJECT_ROOT if is_checkout else None


def data_dir() -> Path:
    """The data folder: `$NER_DATA_DIR`, else `data/` in a source checkout, else the per-user
    cache folder of the platform (e.g. ``~/.cache/ner-elmo`` on Linux)."""
    configured = os.environ.get("NER_DATA_DIR")
    if configured:
        path = Path(configured)
    elif (root := checkout_root()) is not None:
        path = root / "data"
    else:
        path = Path(platformdirs.user_cache_dir(APP_NAME))
    path.mkdir(parents=True, exist_ok=True)
    return path
