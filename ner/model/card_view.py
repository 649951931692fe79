"""What ``ner-models show`` prints: a model's card as text.

The card is the folder's ``card.json`` (a shipped tagger, an export); a run's ``model/`` has
none, so its card is made from its manifest and the run's ``results.json`` beside the folder.
The folder's hand-written ``MODEL_CARD.md`` follows, when it has one.
"""

from pathlib import Path
from typing import Any

from ner.data.labels import TOKENS
from ner.model.archive import read_manifest
from ner.model.cards import card_labels, folder_bytes
from ner.model.shipped import CARD, read_card
from ner.reporting.runs import RESULTS_FILE, corpus_name, load_run

PROSE = "MODEL_CARD.md"
PER_TOKEN = "per-token labels"
SPLITS = {"validation": "dev", "test": "test"}


def card_metric(card: dict[str, Any]) -> str:
    """The score a card leads with: ``accuracy`` for per-token labels, else ``f1``."""
    return "accuracy" if card.get("task") == PER_TOKEN else "f1"


def run_card(folder: Path) -> dict[str, Any]:
    """The card of a model folder without ``card.json``: task, labels and size from the folder,
    corpus and scores from the run's ``results.json`` (the folder's parent's) when there is
    one; ArchiveError for a folder that is not a model folder."""
    settings = read_manifest(folder)["model_config"]
    per_token = settings.get("tag_scheme") == TOKENS
    card: dict[str, Any] = {
        "task": PER_TOKEN if per_token else "spans",
        "labels": card_labels(settings["tags"], per_token),
        "bytes": folder_bytes(folder),
    }
    results = folder.parent / RESULTS_FILE
    if results.is_file():
        run = load_run(results)
        card["corpus"] = corpus_name(run.results["config"])
        card["scores"] = {split: run.results[key] for split, key in SPLITS.items()}
    return card


def _score_line(split: str, scores: dict[str, Any], metric: str) -> str:
    """``dev: F1 94.47 (LOC 96.64, ...)``; per-token labels without the per-label list."""
    name = {"f1": "F1"}.get(metric, metric)
    line = f"{SPLITS[split] + ':':<9}{name} {scores[metric]:.2f}"
    per_type = scores.get("per_type") if metric == "f1" else None
    if per_type:
        line += " (" + ", ".join(f"{t} {s['f1']:.2f}" for t, s in sorted(per_type.items())) + ")"
    return line


def card_text(folder: Path, heading: str) -> str:
    """The card of the model `folder` as text, under `heading` (what was loaded, from where)."""
    card = read_card(folder) if (folder / CARD).is_file() else run_card(folder)
    metric = card_metric(card)
    lines = [heading]
    for key in ("about", "task", "labels", "corpus"):
        value = card.get(key)
        if value:
            lines.append(f"{key + ':':<9}{', '.join(value) if key == 'labels' else value}")
    for split, scores in (card.get("scores") or {}).items():
        lines.append(_score_line(split, scores, metric))
    speed = (card.get("scores") or {}).get("test", {}).get("tokens_per_second")
    if speed:
        threads = card["scores"]["test"].get("threads", 1)
        lines.append(f"{'speed:':<9}{speed:,} tokens/s on {threads} thread(s), test split")
    lines.append(f"{'size:':<9}{card['bytes'] / 1e6:.1f} MB")
    for key in ("licence", "command"):
        if card.get(key):
            lines.append(f"{key + ':':<9}{card[key]}")
    if not card.get("scores"):
        lines.append(f"no scores: no {CARD} in the folder and no {RESULTS_FILE} beside it")
    prose = folder / PROSE
    if prose.is_file():
        lines += ["", prose.read_text(encoding="utf-8").rstrip()]
    return "\n".join(lines)
