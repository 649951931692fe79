"""``ner-models export``: a compact copy of a model folder with its measured card.

The copy and its card are written into a temporary folder beside the target, which is renamed
into place only once the card is measured: a failed export leaves the target as it was. A target
that holds something else than an earlier export is refused unless forced, and a folder that
holds the model being exported (or lies inside it) always.
"""

from pathlib import Path
from typing import Any

import torch

from ner.common.errors import InputError
from ner.common.files import atomic_directory, write_json, write_text
from ner.data.corpora import configured_options
from ner.model.archive import MANIFEST
from ner.model.cards import measure_card
from ner.model.shipped import CARD, portable_config, resolve_model
from ner.model.tagger import Tagger

PROSE = "MODEL_CARD.md"  # hand-written: kept when an earlier export is replaced


def is_export(folder: Path) -> bool:
    """Whether `folder` holds an earlier export (a model folder with its ``card.json``)."""
    return (folder / MANIFEST).is_file() and (folder / CARD).is_file()


def check_target(source: Path, target: Path, force: bool = False) -> None:
    """Refuse a `target` that exporting `source` must not replace: not a folder, a folder that
    holds `source` or lies inside it, or (unless `force`) a non-empty folder that is not an
    earlier export (a lone ``MODEL_CARD.md`` counts as empty)."""
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise InputError(f"{target}: not a folder; name a new or empty folder to export into")
    held, into = source.resolve(), target.resolve()
    if held.is_relative_to(into) or into.is_relative_to(held):
        where = "holds" if held.is_relative_to(into) else "lies inside"
        raise InputError(
            f"{target}: {where} the model being exported ({source}); export into another folder"
        )
    others = {p.name for p in target.iterdir()} - {PROSE} if target.is_dir() else set()
    if others and not is_export(target) and not force:
        raise InputError(
            f"{target}: a folder that is not an earlier export (no {MANIFEST} and {CARD}) and "
            f"holds {len(others)} other file(s) or folder(s); export into a new folder, or pass "
            "--force to replace it"
        )


def scoring_data(
    config: dict[str, Any], corpus: str | None, source: Path
) -> tuple[str, dict[str, Any]]:
    """The corpus to score the model of `source` on and its `load_corpus` options: the run's
    own ``data.name`` with the run's ``data.options`` (a label column, a format) when `corpus`
    is None or names it; another named `corpus` with its defaults."""
    data = config.get("data") or {}
    if corpus is not None and corpus != data.get("name"):
        return corpus, {}
    if not data.get("name"):
        raise InputError(
            f"{source / 'config.json'}: no data.name, so the run's corpus is unknown; name one "
            "with --corpus"
        )
    return str(data["name"]), configured_options(data)


def export_model(
    model: str | Path,
    target: Path,
    *,
    corpus: str | None = None,
    texts: dict[str, str] | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Write a compact copy of `model` (a folder or a shipped tagger's name) at `target` with
    its ``card.json``: `texts` (``about``, ``licence``, ``command``) and what `measure_card`
    measures on one thread on `corpus` (see `scoring_data`); returns the card.

    # Parameters
    model: the model folder or shipped tagger to copy.
    target: the folder to write (see `check_target`; its ``MODEL_CARD.md`` is kept).
    corpus: a named corpus to score on instead of the run's.
    texts: the card's hand-given lines.
    force: replace a non-empty folder that is not an earlier export.
    """
    source = resolve_model(model)
    check_target(source, target, force)
    tagger = Tagger.load(source)
    glove = ((tagger.config.get("embeddings") or {}).get("glove") or {}).get("source")
    name, options = scoring_data(tagger.config, corpus, source)
    prose = target / PROSE
    kept = prose.read_text(encoding="utf-8") if prose.is_file() else None
    threads = torch.get_num_threads()
    with atomic_directory(target, replace=True) as staging:
        tagger.save(
            staging, config=portable_config(tagger.config), compact=True, pretrained_source=glove
        )
        if kept is not None:
            write_text(staging / PROSE, kept)
        torch.set_num_threads(1)
        try:
            card = {"about": "", "licence": "", "command": "", **(texts or {})}
            card.update(measure_card(Tagger.load(staging), staging, name, options))
        finally:
            torch.set_num_threads(threads)
        write_json(staging / CARD, card, indent=2)
    return card
