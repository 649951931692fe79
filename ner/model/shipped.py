"""Taggers shipped inside the package, loadable by name: ``Tagger.load("conll2003")``.

Each lives in ``ner/pretrained/<name>/`` as a compact model folder (see `ner.model.archive`)
with its model card: ``MODEL_CARD.md`` for people and ``card.json`` for tools (task, labels,
dev/test scores, size, licence note), which ``ner-models list`` prints. Wherever a model folder
is accepted, a shipped tagger's name is too; a path that exists always wins over a name.
"""

import json
import re
from pathlib import Path
from typing import Any

from ner.common.archives import ArchiveError
from ner.common.paths import PRETRAINED_DIR
from ner.model.archive import MANIFEST

CARD = "card.json"
# An absolute path of a shipped biLM's file, as a run's resolved configuration records it.
_SHIPPED_BILM_FILE = re.compile(r"/.*/ner/pretrained/([\w.-]+)/(options\.json|weights\.hdf5)")


def shipped_taggers() -> dict[str, Path]:
    """Name → folder of every tagger shipped in this package, sorted by name."""
    if not PRETRAINED_DIR.is_dir():
        return {}
    folders = sorted(p for p in PRETRAINED_DIR.iterdir() if (p / MANIFEST).is_file())
    return {folder.name: folder for folder in folders}


def resolve_model(model: str | Path) -> Path:
    """The model folder `model` names: a path that exists, else a shipped tagger's name.
    ArchiveError for a name that is neither, listing the shipped names."""
    path = Path(model)
    if path.exists():
        return path
    shipped = shipped_taggers()
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


def portable_config(config: Any) -> Any:
    """A run's configuration with each absolute path of a shipped biLM's file written back as
    the ``${shipped_bilm:NAME,options|weights}`` expression it was resolved from, so that a
    copy made for others names no folder of the machine it was trained on."""
    if isinstance(config, dict):
        return {key: portable_config(value) for key, value in config.items()}
    if isinstance(config, list):
        return [portable_config(value) for value in config]
    if isinstance(config, str) and (match := _SHIPPED_BILM_FILE.fullmatch(config)):
        name, file = match.groups()
        return f"${{shipped_bilm:{name},{file.split('.')[0]}}}"
    return config
