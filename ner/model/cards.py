"""Model cards: what a shipped tagger scores, how fast it tags, how large it is.

``card.json`` beside a shipped tagger holds the measured part of its card (the prose is in its
``MODEL_CARD.md``). Every score in it comes from `measure_card`, which tags the corpus splits
through `ner.model.tagger.Tagger.evaluate`, the path `ner-predict --scores` and
`ner-evaluate` use, so a test can check
that the shipped folder still scores exactly what its card states.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from ner.data import load_corpus
from ner.data.labels import TOKENS
from ner.data.tag_schemes import split_tag
from ner.model.tagger import Tagger


def split_sentences(
    corpus: str, split: str, options: Mapping[str, Any] | None = None
) -> tuple[list[list[str]], list[list[str]]]:
    """(tokens, gold tags) of a corpus's split, tags as strings; `options`: `load_corpus`'s (the
    training run's ``data.options``, e.g. ``label_column`` or ``format``)."""
    dataset = load_corpus(corpus, **(options or {}))[split]
    names = dataset.features["tags"].feature.names
    return dataset["tokens"], [[names[i] for i in row] for row in dataset["tags"]]


def score_split(
    tagger: Tagger, corpus: str, split: str, options: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The tagger's scores on a split of a corpus loaded with `options` (`ner.model.evaluation`:
    conlleval F1 and per type, strict F1; token accuracy for per-token labels) with its speed,
    ``tokens_per_second`` over the tagging alone on the current number of torch threads."""
    tokens, gold = split_sentences(corpus, split, options)
    result = tagger.evaluate(tokens, gold, scheme=tagger.corpus_scheme)
    scores = dict(result.scores)
    scores["sentences"] = len(tokens)
    scores["tokens_per_second"] = round(sum(map(len, tokens)) / result.seconds)
    scores["threads"] = torch.get_num_threads()
    return scores


def folder_bytes(folder: Path) -> int:
    """Total size of the files of a model folder (the card files excluded)."""
    return sum(
        path.stat().st_size
        for path in folder.rglob("*")
        if path.is_file() and path.name not in ("card.json", "MODEL_CARD.md")
    )


def card_labels(tags: Sequence[str], per_token: bool) -> list[str]:
    """A card's labels: the tags of a per-token model, else the sorted entity (chunk) types."""
    return list(tags) if per_token else sorted({split_tag(tag)[1] for tag in tags} - {""})


def measure_card(
    tagger: Tagger, folder: Path, corpus: str, options: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The measured part of a card: task, labels, dev and test scores on `corpus` loaded with
    `options` (recorded as ``corpus_options`` when there are any), size."""
    return {
        "corpus": corpus,
        **({"corpus_options": dict(options)} if options else {}),
        "task": "per-token labels" if tagger.labels == TOKENS else "spans",
        "labels": card_labels(tagger.model.tags, tagger.labels == TOKENS),
        "scores": {
            split: score_split(tagger, corpus, split, options) for split in ("validation", "test")
        },
        "bytes": folder_bytes(folder),
    }
