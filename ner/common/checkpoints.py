"""The one checkpoint format: tensors and plain Python values, written atomically and fsynced.

A run killed mid-write leaves the previous checkpoint intact. Loading uses
``torch.load(weights_only=True)``, which rebuilds only tensors and plain containers and never
runs code from the file, so a checkpoint handed over by someone else cannot execute anything.
"""

from pathlib import Path
from typing import Any

import torch

from ner.common.errors import MissingFileError, NerError
from ner.common.files import atomic_write


class CheckpointError(NerError, ValueError):
    """A checkpoint file that is missing, truncated or holds more than tensors and plain values."""


def save_checkpoint(path: str | Path, content: dict[str, Any]) -> None:
    """Write `content` (tensors, numbers, strings, lists, dicts) to `path` atomically.

    A failed write (a full disk) raises OSError naming `path`; the previous file is kept."""
    try:
        with atomic_write(path) as handle:
            torch.save(content, handle)
    except RuntimeError as error:  # torch reports a short write as a RuntimeError
        raise OSError(f"{path}: writing the checkpoint failed (disk full?): {error}") from None


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Read a checkpoint written by `save_checkpoint` (no unpickling of arbitrary objects).

    Raises `MissingFileError` (a FileNotFoundError) when `path` is missing and `CheckpointError`
    when it is unreadable.
    """
    path = Path(path)
    if not path.is_file():
        raise MissingFileError(f"no checkpoint at {path}")
    try:
        content = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as error:  # truncated, not a torch file, or objects other than plain values
        raise CheckpointError(f"{path} is not a readable checkpoint: {error}") from error
    if not isinstance(content, dict):
        raise CheckpointError(f"{path} is not a checkpoint: it holds a {type(content).__name__}")
    return content
