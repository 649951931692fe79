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

The scores come from counts that add up over the parts of a corpus (`ScoreCounts`), and what
scoring needs to know before tagging (the gold's scheme) is read one sentence at a time
(`GoldSurvey`): so a CoNLL file of any size is tagged and scored a chunk at a time, or in
shards on several machines, with the scores of the whole.
"""

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ner.common.files import atomic_write
from ner.data.labels import TOKENS
from ner.data.tag_schemes import SchemeSurvey, TagSchemeError, split_tag
from ner.metrics import (
    counted_span_scores,
    counted_token_scores,
    merge_surface_forms,
    span_counts,
    surface_forms,
    surface_scores,
    token_pairs,
)
from ner.model.results import TaggedText


@dataclass
class ScoreCounts:
    """The counts that `score_tagged`'s scores come from, which add up over the parts of a
    corpus: so a corpus tagged a chunk at a time (or in shards, on other machines) is scored as
    if whole. scheme: the gold's (``tokens`` for per-token labels); tag_scheme: the tags'.

    sentences; entities: predicted; spans, strict: each entity type's [true positives,
    predicted, gold] chunks (`ner.metrics.span_counts`; strict only when `tag_scheme` is the
    gold's); surface: each entity type's distinct gold, predicted and correct entity texts
    (`ner.metrics.surface_forms`); tokens: per-token labels' counts, gold label → predicted
    label → tokens."""

    scheme: str
    tag_scheme: str
    sentences: int = 0
    entities: int = 0
    spans: dict[str, list[int]] = field(default_factory=dict)
    strict: dict[str, list[int]] = field(default_factory=dict)
    surface: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, tagged: Sequence[TaggedText], gold: Sequence[Sequence[str]]) -> None:
        """Count tagged sentences against their `gold` tags."""
        predicted = [result.tags for result in tagged]
        part = ScoreCounts(self.scheme, self.tag_scheme, len(tagged))
        if self.scheme == TOKENS:
            for (g, p), count in token_pairs(gold, predicted).items():
                part.tokens.setdefault(g, {})[p] = count
        else:
            part.spans = span_counts(gold, predicted)
            words = [[token.text for token in result.tokens] for result in tagged]
            part.surface = surface_forms(words, gold, predicted)
            if self.tag_scheme == self.scheme:
                part.strict = span_counts(gold, predicted, strict=True, scheme=self.scheme)
            part.entities = sum(len(result.entities) for result in tagged)
        self.add_up(part)

    def add_up(self, other: "ScoreCounts") -> None:
        """Add another part's counts to these."""
        self.sentences += other.sentences
        self.entities += other.entities
        for mine, theirs in ((self.spans, other.spans), (self.strict, other.strict)):
            for name, count in theirs.items():
                mine[name] = [a + b for a, b in zip(mine.get(name, [0, 0, 0]), count, strict=True)]
        merge_surface_forms(self.surface, other.surface)
        for g, row in other.tokens.items():
            mine_row = self.tokens.setdefault(g, {})
            for p, count in row.items():
                mine_row[p] = mine_row.get(p, 0) + count

    def scores(self) -> dict[str, Any]:
        """seqeval's default scores with ``per_type`` (and ``strict`` when `tag_scheme` is the
        gold's scheme), ``surface`` (`ner.metrics.surface_scores`) and ``predicted_entities``,
        or `ner.metrics.token_scores` for per-token labels."""
        if self.scheme == TOKENS:
            pairs = Counter({(g, p): n for g, row in self.tokens.items() for p, n in row.items()})
            return counted_token_scores(pairs)
        scores = counted_span_scores(self.spans)
        if self.tag_scheme == self.scheme:
            scores["strict"] = counted_span_scores(self.strict)
        scores["surface"] = surface_scores(self.surface)
        scores["predicted_entities"] = self.entities
        return scores


@dataclass
class Evaluation:
    """What `score_tagged` found.

    counts: what the scores come from (`ScoreCounts`: the schemes, the sentence count);
    tagged: one `TaggedText` per sentence (tokens, tags, entities with confidences; empty when
    they were tagged and scored a chunk at a time); seconds: the time spent tagging; warnings:
    what the caller should tell the user. predicted: the tagged sentences' tags, in
    `tag_scheme`; scores: `ScoreCounts.scores`."""

    counts: ScoreCounts
    tagged: list[TaggedText] = field(default_factory=list)
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    predicted: list[list[str]] = field(init=False)
    scores: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.predicted = [result.tags for result in self.tagged]
        self.scores = self.counts.scores()

    @property
    def scheme(self) -> str:
        """The gold's scheme (``tokens`` for per-token labels)."""
        return self.counts.scheme

    @property
    def tag_scheme(self) -> str:
        return self.counts.tag_scheme

    def record(self) -> dict[str, Any]:
        """The scores as ``--scores`` writes them: with the sentence count and gold scheme."""
        record = {**self.scores, "sentences": self.counts.sentences}
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
        return f"{self.counts.sentences} sentences scored: {found}"


class GoldSurvey:
    """What scoring must know of a corpus's gold tags before tagging it (the scheme to tag in),
    read one sentence at a time (`add`), so that a corpus of any size is read in small memory:
    the sentences with and without gold tags, the tag set, the first tag that is no chunk tag
    (line, tag) and the chunk scheme (`ner.data.tag_schemes.SchemeSurvey`)."""

    def __init__(self) -> None:
        self.sentences = self.missing = 0
        self.tags: set[str] = set()
        self.not_a_tag: tuple[int, str] | None = None
        self.chunks = SchemeSurvey()

    def add(self, tags: Sequence[str] | None, first: int = 0) -> None:
        """Read one sentence's gold `tags` (None: it has none), the first at line `first`."""
        self.sentences += 1
        if tags is None:
            self.missing += 1
            return
        self.tags.update(tags)
        for offset, tag in enumerate(tags if self.not_a_tag is None else ()):
            try:
                split_tag(tag)
            except TagSchemeError:
                self.not_a_tag = (first + offset, tag)
                break
        if self.not_a_tag is None:
            self.chunks.add(tags)

    def schemes(
        self,
        labels: str,
        model_tags: Sequence[str],
        scheme: str | None = None,
        tag_scheme: str | None = None,
    ) -> tuple[str, str, list[str]]:
        """The gold's scheme (detected when None; ``tokens`` for per-token `labels`), the
        scheme to tag in (default: the gold's) and the warnings about the gold tags for a model
        of `model_tags`. TagSchemeError for chunk labels and a tag that is none."""
        warnings = []
        if labels == TOKENS:
            scheme = tag_scheme = TOKENS
        elif scheme is None:
            if self.not_a_tag is not None:
                split_tag(self.not_a_tag[1])
            try:
                scheme = self.chunks.scheme()
            except TagSchemeError as error:
                scheme = self.chunks.guess()
                warnings.append(
                    f"the gold tags are not valid in any scheme ({error}); conlleval scores only"
                )
        unknown = unknown_labels(self.tags, labels, model_tags)
        if unknown:
            warnings.append(f"the gold tags have types the model never predicts: {sorted(unknown)}")
        return scheme, tag_scheme or scheme, warnings

    def counts(
        self, labels: str, model_tags: Sequence[str], tag_scheme: str | None, warn: Callable
    ) -> ScoreCounts | None:
        """Empty `ScoreCounts` to score a CoNLL file with, in the schemes to tag it in; None
        when it is not scored: some sentence has no gold tags, or (chunk `labels`) its last
        column is not chunk tags. What the user should know goes to `warn`."""
        if self.not_a_tag is not None and labels != TOKENS:
            line, value = self.not_a_tag
            warn(
                f"the last column is not NER tags (line {line}: {value!r} is not 'O' "
                "or <prefix>-<type>); tagging without scores"
            )
            return None
        if self.missing or not self.sentences:
            if self.missing < self.sentences:
                warn("some sentences have no gold tags, so nothing was scored")
            return None
        scheme, tag_scheme, warnings = self.schemes(labels, model_tags, tag_scheme=tag_scheme)
        for warning in warnings:
            warn(warning)
        return ScoreCounts(scheme, tag_scheme)


def unknown_labels(tags: Iterable[str], labels: str, model_tags: Sequence[str]) -> set[str]:
    """Gold labels (per-token) or entity types among the gold `tags` that a model of
    `model_tags` never predicts."""
    if labels == TOKENS:
        return set(tags) - set(model_tags)
    types = {tag.split("-", 1)[-1] for tag in tags if tag != "O"}
    return types - {tag.split("-", 1)[-1] for tag in model_tags}


def evaluation_schemes(
    gold: Iterable[Sequence[str]],
    labels: str,
    model_tags: Sequence[str],
    scheme: str | None = None,
    tag_scheme: str | None = None,
) -> tuple[str, str, list[str]]:
    """`GoldSurvey.schemes` of the gold tag sequences `gold`."""
    survey = GoldSurvey()
    for tags in gold:
        survey.add(tags)
    return survey.schemes(labels, model_tags, scheme, tag_scheme)


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
    counts = ScoreCounts(scheme, tag_scheme)
    counts.add(tagged, gold)
    return Evaluation(counts, list(tagged), seconds, list(warnings))


def write_predictions(
    path: Path, tokens: Sequence[Sequence[str]], gold: Sequence[Sequence[str]], pred
) -> None:
    """``token gold pred`` per line, a blank line after each sentence (conlleval's input)."""
    with atomic_write(path, "w", encoding="utf-8") as handle:
        for sentence, gold_tags, pred_tags in zip(tokens, gold, pred, strict=True):
            for token, g, p in zip(sentence, gold_tags, pred_tags, strict=True):
                handle.write(f"{token} {g} {p}\n")
            handle.write("\n")
