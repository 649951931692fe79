"""Steps shared by training and re-evaluation: read a corpus, encode it, attach ELMo features."""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ner.data import prepare_corpus
from ner.features.elmo import ElmoFeatures
from ner.tagger.batch import TaggerBatch
from ner.tagger.dataset import Encoder, Example, Split, collate, convert_split, read_splits

logger = logging.getLogger(__name__)


@dataclass
class Corpus:
    """The splits with the corpus's own tag scheme."""

    splits: dict[str, Split]
    scheme: str


def load_splits(data_config: dict[str, Any]) -> Corpus:
    """The configured corpus (``name``, ``options``, ``max_sentences``) as `Split`s."""
    corpus, info = prepare_corpus(data_config["name"], **(data_config.get("options") or {}))
    splits = read_splits(corpus, data_config.get("max_sentences"))
    for split in splits.values():
        logger.info("%s: %d sentences, %d tokens", split.name, len(split.tokens), split.num_tokens)
    return Corpus(splits, info.tag_scheme)


@dataclass
class EncodedSplit:
    """A split's examples and the function that turns a list of them into a batch."""

    examples: list[Example]
    make_batch: Callable[[list[Example]], TaggerBatch]


def encode_split(
    split: Split,
    encoder: Encoder,
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
        encoder.encode(i, tokens, sentence_tags)
        for i, (tokens, sentence_tags) in enumerate(zip(split.tokens, tags, strict=True))
    ]
    source = elmo.source(split.tokens) if elmo is not None else None
    return EncodedSplit(examples, lambda batch: collate(batch, source))
