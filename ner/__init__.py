"""NER and sequence labeling on a frozen ELMo biLM."""

from typing import Any

__all__ = ["Tagger"]


def __getattr__(name: str) -> Any:
    """Lazy exports: ``from ner import Tagger`` imports torch and the model only when asked."""
    if name == "Tagger":
        from ner.model.tagger import Tagger

        return Tagger
    raise AttributeError(f"module 'ner' has no attribute {name!r}")
