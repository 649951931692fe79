"""NER and sequence labeling on a frozen ELMo biLM."""

from typing import Any

__all__ = ["Tagger", "evaluate", "train"]


def __getattr__(name: str) -> Any:
    """Lazy exports: ``from ner import Tagger`` imports torch and the model only when asked;
    `train` and `evaluate` (`ner.training.api`) import the training code too."""
    if name == "Tagger":
        from ner.model.tagger import Tagger

        return Tagger
    if name in ("train", "evaluate"):
        from ner.training import api

        return getattr(api, name)
    raise AttributeError(f"module 'ner' has no attribute {name!r}")
