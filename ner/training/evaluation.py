"""Tag a split with a trained model, score it (span F1 with seqeval, or token accuracy for
per-token labels) and write a conlleval-readable file."""

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from ner.common.batching import length_batches
from ner.common.files import atomic_write
from ner.data.labels import TOKENS
from ner.data.tag_schemes import tags_to_spans
from ner.metrics import evaluate_tags, span_scores, token_scores
from ner.tagger.batch import TaggerBatch
from ner.tagger.dataset import Example, Split, convert_split
from ner.tagger.model import TaggerModel


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


def write_predictions(
    path: Path, tokens: Sequence[Sequence[str]], gold: Sequence[Sequence[str]], pred
) -> None:
    """``token gold pred`` per line, a blank line after each sentence (conlleval's input)."""
    with atomic_write(path, "w", encoding="utf-8") as handle:
        for sentence, gold_tags, pred_tags in zip(tokens, gold, pred, strict=True):
            for token, g, p in zip(sentence, gold_tags, pred_tags, strict=True):
                handle.write(f"{token} {g} {p}\n")
            handle.write("\n")


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
    predictions_file: Path | None = None,
    progress: bool = False,
    strict: bool = True,
) -> dict[str, Any]:
    """Scores (default + strict, per type) in the corpus's own scheme, how many entities the
    model predicted (``predicted_entities``; gold ones are ``support``), plus speed figures.
    strict=False leaves the strict-mode scores out (model selection needs only the default F1).
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
        scores = (
            evaluate_tags(split.tags, predicted, corpus_scheme)
            if strict
            else span_scores(split.tags, predicted)
        )
        scores["predicted_entities"] = sum(
            len(tags_to_spans(tags, corpus_scheme, lenient=True)) for tags in predicted
        )
    if predictions_file is not None:
        write_predictions(predictions_file, split.tokens, split.tags, predicted)
    scores["seconds"] = seconds
    scores["tokens_per_second"] = split.num_tokens / max(seconds, 1e-9)
    return scores
