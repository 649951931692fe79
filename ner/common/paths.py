"""Where the toolkit keeps downloads, prepared corpora and caches."""

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def data_dir() -> Path:
    """The data folder: `$NER_DATA_DIR`, else `data/` beside the package (a source checkout)."""
    configured = os.environ.get("NER_DATA_DIR")
    path = Path(configured) if configured else PROJECT_ROOT / "data"
    path.mkdir(parents=True, exist_ok=True)
    return path
