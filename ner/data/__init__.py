"""Corpora as `datasets.DatasetDict`s, column files, tag schemes and tokenization.

`load_corpus` is imported lazily so that ``import ner.data.tokenize`` stays light.
"""

__all__ = ["load_corpus", "prepare_corpus"]


def __getattr__(name: str):
    if name in __all__:
        from ner.data import corpora

        return getattr(corpora, name)
    raise AttributeError(f"module 'ner.data' has no attribute {name!r}")
