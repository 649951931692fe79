"""Taggers shipped inside the package, loadable by name: ``Tagger.load("conll2003")``.

Each lives in ``ner/pretrained/<name>/`` as a compact model folder (see `ner.model.archive`)
with its model card: ``MODEL_CARD.md`` for people and ``card.json`` for tools (task, labels,
dev/test scores, size, licence note), which ``ner-models list`` prints. Wherever a model folder
is accepted, a shipped tagger's name is too: a bare name (``conll2003``) is always the shipped
tagger, and a folder of the same name is loaded by its path (``./conll2003``).
"""

import json
import logging
import re
from pathlib import Path
from typing import Any

from ner.common.archives import ArchiveError
from ner.common.paths import PRETRAINED_DIR
from ner.model.archive import MANIFEST

logger = logging.getLogger(__name__)

CARD = "card.json"
# The configuration keys that hold a biLM file's or folder's path or URL (``elmo.path``, ...).
BILM_FILE_KEYS = ("options_file", "weight_file", "path")
# An absolute path of a shipped biLM's file, as a run's resolved configuration records it.
_SHIPPED_BILM_FILE = re.compile(r"/.*/ner/pretrained/([\w.-]+)/(options\.json|weights\.hdf5)")


def shipped_taggers() -> dict[str, Path]:
    """Name → folder of every tagger shipped in this package, sorted by name."""
    if not PRETRAINED_DIR.is_dir():
        return {}
    folders = sorted(p for p in PRETRAINED_DIR.iterdir() if (p / MANIFEST).is_file())
    return {folder.name: folder for folder in folders}


def resolve_model(model: str | Path) -> Path:
    """The model folder `model` names: a shipped tagger for a text that is its name (a folder of
    that name is loaded by a path such as ``./conll2003``, and a warning says so when one is
    there), else the path; a `Path` object is always a path, or a shipped name when no such
    path exists. Logs which folder it is; ArchiveError for a name that is neither, listing the
    shipped names."""
    shipped = shipped_taggers()
    path = Path(model)
    if isinstance(model, str) and model in shipped:
        if path.exists():
            logger.warning(
                "%s: loading the shipped tagger of that name, not the folder %s here (load "
                "that with the path ./%s)",
                model,
                model,
                model,
            )
        logger.info("model %s: the shipped tagger in %s", model, shipped[model])
        return shipped[model]
    if path.exists():
        logger.info("model %s: the folder %s", model, path.resolve())
        return path
    if str(model) in shipped:
        return shipped[str(model)]
    names = ", ".join(shipped) or "none"
    raise ArchiveError(
        f"model folder {model} does not exist, and it is not the name of a shipped tagger "
        f"(shipped: {names}; ner-models list describes them)"
    )


def read_card(folder: Path) -> dict[str, Any]:
    """A shipped tagger's ``card.json`` (ArchiveError if missing or not a JSON object)."""
    path = folder / CARD
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ArchiveError(f"{path}: cannot read the model card: {error}") from None
    if not isinstance(card, dict):
        raise ArchiveError(f"{path}: the model card must be a JSON object")
    return card


def portable_config(config: Any, run_folder: Path | None = None) -> Any:
    """A run's configuration with each absolute path of a shipped biLM's file written back as
    the ``${shipped_bilm:NAME,options|weights}`` expression it was resolved from, so that a
    copy made for others names no folder of the machine it was trained on. With `run_folder`,
    each other local path of a biLM file or folder (``options_file``, ``weight_file``,
    ``path``) is written relative to it, or left out (null) when outside it: the manifest's
    sha256 and size still identify the biLM."""

    def portable(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {name: portable(item, name) for name, item in value.items()}
        if isinstance(value, list):
            return [portable(item) for item in value]
        if not isinstance(value, str):
            return value
        if match := _SHIPPED_BILM_FILE.fullmatch(value):
            name, file = match.groups()
            return f"${{shipped_bilm:{name},{file.split('.')[0]}}}"
        if run_folder is not None and key in BILM_FILE_KEYS and Path(value).is_absolute():
            inside = Path(value).is_relative_to(run_folder)
            return Path(value).relative_to(run_folder).as_posix() if inside else None
        return value

    return portable(config)
