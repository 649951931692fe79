"""Scoring tagged sentences against gold tags: the one code path behind ``ner-predict --scores``,
``ner-evaluate`` and a training run's final dev and test scores.

    from ner import Tagger
    tagger = Tagger.load("outputs/run/model")
    result = tagger.evaluate(tokens, gold_tags)
    result.scores["f1"], result.predicted

`Tagger.evaluate` picks the schemes (`evaluation_schemes`), tags the sentences and hands the
results to `score_tagged`, which knows nothing of the tagger. The tagger tags the sentences as
it tags any pre-tokenized input (`Tagger.predict_tokens`: the live biLM, Viterbi, sentences
longer than `max_length` in pieces), with its tags in the gold's scheme (detected from the gold
tags unless given), and the tags are scored with seqeval: the conlleval-style default and, when
the predictions are in the gold's scheme, the strict mode, both with per-type scores. A model
of per-token labels (part of speech) is scored by token accuracy.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ner.common.files import atomic_write
from ner.data.labels import TOKENS
from ner.data.tag_schemes import TagSchemeError, detect_scheme, guess_scheme
from ner.metrics import evaluate_tags, span_scores, token_scores
from ner.model.results import TaggedText


@dataclass
class Evaluation:
    """What `score_tagged` found.

    tagged: one `TaggedText` per sentence (tokens, tags, entities with confidences); predicted:
    their tags, in `tag_scheme`; scheme: the gold's scheme (``tokens`` for per-token labels);
    scores: seqeval's default scores with ``per_type`` (and ``strict`` when `tag_scheme` is
    the gold's scheme) and ``predicted_entities``, or `ner.metrics.token_scores` for per-token
    labels; seconds: the time spent tagging; warnings: what the caller should tell the user."""

    tagged: list[TaggedText]
    predicted: list[list[str]]
    scheme: str
    tag_scheme: str
    scores: dict[str, Any]
    seconds: float
    warnings: list[str] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        """The scores as ``--scores`` writes them: with the sentence count and gold scheme."""
        record = {**self.scores, "sentences": len(self.tagged)}
        return record if self.scheme == TOKENS else {**record, "scheme": self.scheme}

    def summary(self) -> str:
        """One line: ``N sentences scored: precision … recall … F1 …`` (or token accuracy)."""
        scores = self.scores
        if self.scheme == TOKENS:
            found = (
                f"token accuracy {scores['accuracy']:.2f} ({scores['correct']} of "
                f"{scores['support']} tokens)"
            )
        else:
            found = (
                f"precision {scores['precision']:.2f} recall {scores['recall']:.2f} F1 "
                f"{scores['f1']:.2f} (conlleval)"
                + (f", strict F1 {scores['strict']['f1']:.2f}" if "strict" in scores else "")
            )
        return f"{len(self.tagged)} sentences scored: {found}"


def gold_scheme(gold: Sequence[Sequence[str]]) -> tuple[str, str | None]:
    """The scheme of gold chunk tags and a warning when no scheme fits them all (then the
    likeliest is used, and only the conlleval-style scores mean anything)."""
    try:
        return detect_scheme(gold), None
    except TagSchemeError as error:
        warning = f"the gold tags are not valid in any scheme ({error}); conlleval scores only"
        return guess_scheme(gold), warning


def unknown_labels(
    gold: Sequence[Sequence[str]], labels: str, model_tags: Sequence[str]
) -> set[str]:
    """Gold labels (per-token) or entity types that a model of `model_tags` never predicts."""
    if labels == TOKENS:
        return {tag for tags in gold for tag in tags} - set(model_tags)
    types = {tag.split("-", 1)[-1] for tags in gold for tag in tags if tag != "O"}
    return types - {tag.split("-", 1)[-1] for tag in model_tags}


def evaluation_schemes(
    gold: Sequence[Sequence[str]],
    labels: str,
    model_tags: Sequence[str],
    scheme: str | None = None,
    tag_scheme: str | None = None,
) -> tuple[str, str, list[str]]:
    """The gold's scheme (detected when None; ``tokens`` for per-token `labels`), the scheme to
    tag in (default: the gold's) and the warnings about the gold tags for a model of
    `model_tags`."""
    warnings = []
    if labels == TOKENS:
        scheme = tag_scheme = TOKENS
    elif scheme is None:
        scheme, warning = gold_scheme(gold)
        warnings += [warning] if warning else []
    unknown = unknown_labels(gold, labels, model_tags)
    if unknown:
        warnings.append(f"the gold tags have types the model never predicts: {sorted(unknown)}")
    return scheme, tag_scheme or scheme, warnings


def score_tagged(
    tagged: Sequence[TaggedText],
    gold: Sequence[Sequence[str]],
    scheme: str,
    tag_scheme: str,
    seconds: float = 0.0,
    warnings: Sequence[str] = (),
) -> Evaluation:
    """Score tagged sentences against `gold` (one tag per token). scheme: the gold's
    (``tokens`` for per-token labels: token accuracy); tag_scheme: the tags' (the strict
    scores come only when it is the gold's); seconds, warnings: kept in the `Evaluation`."""
    predicted = [result.tags for result in tagged]
    if scheme == TOKENS:
        scores = token_scores(gold, predicted)
    else:
        scores = (
            evaluate_tags(gold, predicted, scheme)
            if tag_scheme == scheme
            else span_scores(gold, predicted)
        )
        scores["predicted_entities"] = sum(len(result.entities) for result in tagged)
    return Evaluation(list(tagged), predicted, scheme, tag_scheme, scores, seconds, list(warnings))


def write_predictions(
    path: Path, tokens: Sequence[Sequence[str]], gold: Sequence[Sequence[str]], pred
) -> None:
    """``token gold pred`` per line, a blank line after each sentence (conlleval's input)."""
    with atomic_write(path, "w", encoding="utf-8") as handle:
        for sentence, gold_tags, pred_tags in zip(tokens, gold, pred, strict=True):
            for token, g, p in zip(sentence, gold_tags, pred_tags, strict=True):
                handle.write(f"{token} {g} {p}\n")
            handle.write("\n")
