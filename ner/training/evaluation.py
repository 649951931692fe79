"""The dev scores that select the best epoch while a model trains: the model's own decoding over
the split's encoded examples and their cached ELMo layers, so that an epoch's evaluation does not
run the biLM again. A trained model's final scores (results.json, ``ner-evaluate``,
``ner-predict --scores``) come from `ner.model.evaluation` instead, through a `Tagger`."""

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from ner.common.batching import length_batches
from ner.data.labels import TOKENS
from ner.data.tag_schemes import tags_to_spans
from ner.metrics import span_scores, token_scores
from ner.model.evaluation import write_predictions
from ner.model.tagger import Tagger
from ner.tagger.batch import TaggerBatch
from ner.tagger.dataset import Example, Split, convert_split
from ner.tagger.model import TaggerModel

logger = logging.getLogger(__name__)


def predict_tags(
    model: TaggerModel,
    examples: Sequence[Example],
    make_batch: Callable[[list[Example]], TaggerBatch],
    *,
    batch_size: int,
    device: torch.device,
    progress: bool = False,
    desc: str = "tagging",
) -> list[list[str]]:
    """Model-scheme tags for every example (empty sentences get an empty list)."""
    model.eval()
    predicted: list[list[str]] = [[] for _ in examples]
    lengths = [len(e.words) for e in examples]
    batches = length_batches(lengths, batch_size=batch_size, skip_empty=True)
    for indices in tqdm(batches, desc=desc, leave=False, disable=not progress, unit="batch"):
        batch = make_batch([examples[i] for i in indices]).to(device)
        for index, ids in zip(indices, model.decode(batch), strict=True):
            predicted[index] = [model.tags[i] for i in ids]
    return predicted


def evaluate_split(
    model: TaggerModel,
    split: Split,
    examples: Sequence[Example],
    make_batch: Callable[[list[Example]], TaggerBatch],
    *,
    corpus_scheme: str,
    model_scheme: str,
    batch_size: int,
    device: torch.device,
    progress: bool = False,
) -> dict[str, Any]:
    """Seqeval's default scores (per type) in the corpus's own scheme, how many entities the
    model predicted (``predicted_entities``; gold ones are ``support``), plus speed figures.
    Per-token labels (scheme ``tokens``) get `ner.metrics.token_scores` instead."""
    started = time.perf_counter()
    predicted = predict_tags(
        model,
        examples,
        make_batch,
        batch_size=batch_size,
        device=device,
        progress=progress,
        desc=f"tagging {split.name}",
    )
    seconds = time.perf_counter() - started
    if corpus_scheme == TOKENS:
        scores = token_scores(split.tags, predicted)
    else:
        # Lenient: with model.constrain_decoding=false, Viterbi may return invalid sequences.
        predicted = convert_split(
            predicted, model_scheme, corpus_scheme, f"predicted {split.name}", lenient=True
        )
        scores = span_scores(split.tags, predicted)
        scores["predicted_entities"] = sum(
            len(tags_to_spans(tags, corpus_scheme, lenient=True)) for tags in predicted
        )
    scores["seconds"] = seconds
    scores["tokens_per_second"] = split.num_tokens / max(seconds, 1e-9)
    return scores


def score_split(
    tagger: Tagger, split: Split, scheme: str, *, batch_size: int, predictions_file: Path
) -> dict[str, Any]:
    """A trained model's scores on a split of a corpus in `scheme` (`ner.model.evaluation`:
    seqeval's default and strict scores, per type, or token accuracy), plus speed figures; the
    predictions go to `predictions_file` as ``token gold pred`` lines. The scores of
    results.json and of ``ner-evaluate``."""
    result = tagger.evaluate(split.tokens, split.tags, scheme=scheme, batch_size=batch_size)
    for warning in result.warnings:
        logger.warning("%s: %s", split.name, warning)
    write_predictions(predictions_file, split.tokens, split.tags, result.predicted)
    return {
        **result.scores,
        "seconds": result.seconds,
        "tokens_per_second": split.num_tokens / max(result.seconds, 1e-9),
    }
