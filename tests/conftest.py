"""Shared test set-up: point the corpus mirrors at ../shared/mirror unless already configured."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
MIRROR = Path(os.environ.get("NER_MIRROR") or SHARED / "mirror")

os.environ.setdefault("NER_NLTK_DATA_URL", str(MIRROR / "nltk_data"))
os.environ.setdefault("NER_REUTERS_URL", str(MIRROR / "reuters21578" / "reuters21578.tar.gz"))


@pytest.fixture
def isolated_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty `data_dir()` for tests that must not see (or fill) the shared data/ cache."""
    path = tmp_path / "data"
    monkeypatch.setenv("NER_DATA_DIR", str(path))
    return path
