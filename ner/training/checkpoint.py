"""Atomic checkpoint files: written to a temporary name, fsynced, then renamed over the old one.

A run killed mid-write leaves the previous checkpoint intact. Files hold only tensors and plain
Python values, so they load with ``torch.load(weights_only=True)`` (no unpickling of objects).
"""

import os
from pathlib import Path
from typing import Any

import torch


def save_checkpoint(path: Path, content: dict[str, Any]) -> None:
    """Write `content` to `path` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(temporary, "wb") as handle:
        torch.save(content, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def load_checkpoint(path: Path) -> dict[str, Any]:
    """Read a checkpoint written by `save_checkpoint` (CPU tensors, no arbitrary objects)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        raise ValueError(f"{path} is not a readable checkpoint: {error}") from error
