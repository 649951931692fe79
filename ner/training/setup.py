"""Steps shared by training and re-evaluation: read a corpus, encode it, attach ELMo features,
name the biLM files a model reads."""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ner.bilm.bilm import DEFAULT_STATE
from ner.data import prepare_corpus
from ner.data.corpora import configured_options, log_changes
from ner.data.subsets import fraction_size, nested_subset
from ner.features.elmo import ElmoFeatures
from ner.model.archive import BiLMFiles
from ner.tagger.batch import TaggerBatch
from ner.tagger.dataset import Example, Split, Vocabularies, collate, convert_split, read_splits

logger = logging.getLogger(__name__)
# Where a training checkpoint keeps the vocabularies (`Vocabularies.from_saved` reads it back).
CHECKPOINT_VOCABULARIES = "vocabularies"


@dataclass
class Corpus:
    """The splits with the corpus's own tag scheme, and what results.json records about them
    (`summary`: name, schemes, carved holdout, dropped empty sentences, the training subset)."""

    splits: dict[str, Split]
    scheme: str
    summary: dict[str, Any]


def load_splits(data_config: dict[str, Any]) -> Corpus:
    """The configured corpus (``name``, ``options``, ``max_sentences``) as `Split`s; options left
    null keep `prepare_corpus`'s defaults.

    ``train_fraction`` keeps that fraction of the training sentences, chosen by ``subset_seed``
    alone (never the training seed), so every variant and seed trains on the same sentences and
    smaller fractions are subsets of larger ones; dev and test stay whole."""
    fraction = data_config.get("train_fraction")
    fraction = 1.0 if fraction is None else fraction
    subset_seed = data_config.get("subset_seed") or 0
    fraction_size(1, fraction, "data.train_fraction")  # a bad value fails before data loads
    corpus, info = prepare_corpus(data_config["name"], **configured_options(data_config))
    log_changes(info)
    available = corpus["train"].num_rows
    if fraction < 1:
        corpus["train"] = corpus["train"].select(nested_subset(available, fraction, subset_seed))
        logger.info(
            "train_fraction=%s (subset_seed=%d): %d of %d training sentences",
            fraction,
            subset_seed,
            corpus["train"].num_rows,
            available,
        )
    splits = read_splits(corpus, data_config.get("max_sentences"))
    for split in splits.values():
        logger.info("%s: %d sentences, %d tokens", split.name, len(split.tokens), split.num_tokens)
    summary = {
        "name": info.name,
        "source_scheme": info.source_scheme,
        "tag_scheme": info.tag_scheme,
        "labels": info.labels,
        "holdout": info.holdout,
        "dropped_empty": info.dropped_empty,
        "train_fraction": fraction,
        "subset_seed": subset_seed,
        "train_sentences_available": available,
    }
    if info.spans:  # span annotations: what aligning them to tokens kept, snapped, dropped
        summary["spans"] = info.spans
    return Corpus(splits, info.tag_scheme, summary)


@dataclass
class EncodedSplit:
    """A split's examples and the function that turns a list of them into a batch."""

    examples: list[Example]
    make_batch: Callable[[list[Example]], TaggerBatch]


def encode_split(
    split: Split,
    vocabularies: Vocabularies,
    corpus_scheme: str,
    model_scheme: str,
    elmo: ElmoFeatures | None,
    with_tags: bool = True,
) -> EncodedSplit:
    """Examples (with model-scheme gold tags unless `with_tags` is false) and ELMo layers from
    the feature cache or the live biLM."""
    tags = (
        convert_split(split.tags, corpus_scheme, model_scheme, split.name)
        if with_tags
        else [None] * len(split.tokens)
    )
    examples = [
        vocabularies.encode(i, tokens, sentence_tags)
        for i, (tokens, sentence_tags) in enumerate(zip(split.tokens, tags, strict=True))
    ]
    source = elmo.source(split.tokens) if elmo is not None else None
    return EncodedSplit(examples, lambda batch: collate(batch, source))


def bilm_files(elmo: dict[str, Any] | None) -> BiLMFiles | None:
    """The biLM files an ``elmo`` config group names (None for a run without ELMo)."""
    if elmo is None:
        return None
    return BiLMFiles(
        options=str(elmo["options_file"]),
        weights=str(elmo["weight_file"]),
        state=str(elmo.get("state", DEFAULT_STATE)),
    )
