"""What to label next: unlabelled lines ordered by the model's doubt (``ner-predict --rank``).

A line's ``uncertainty`` is 1 minus the probability the model gives its least sure decision
there (`TaggedText.lowest_confidence`): every entity it tagged has the CRF's probability of
exactly that span and type, and every token it left outside an entity has the CRF's marginal
P(O), so a line scores high both where an entity is in doubt and where one may have been missed.
One doubtful decision suffices, and annotators correct decisions, not averages: this is the
"least confident" measure of active learning, on the decisions a user sees. A per-token model
(part of speech) scores its least sure token the same way.

Lines are ordered by that score (as written, to six decimals), highest first, ties in input
order, so the same input and model always give the same order; ``budget`` keeps the first N.
``distinct`` skips a line whose tokens, lowercased and with digits as 0, repeat a line kept
already: a pool of near-copies (score tables, datelines) then spends no budget twice on one.
"""

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO

from ner.data.tag_input import MAX_LINE_CHARS, Line, read_json_lines
from ner.model.inputs import prepared_lines
from ner.model.results import TaggedText
from ner.model.tag_files import RECORD_KEYS, Warn, chunks
from ner.model.tagger import Tagger

RANKINGS = ("uncertainty",)
RANK_INPUT_FORMATS = ("text", "tokens", "jsonl")
SCORE_KEY = "uncertainty"
DIGITS = re.compile(r"\d")


@dataclass(frozen=True)
class Ranked:
    """A tagged input line and its score (rounded as written)."""

    line: Line
    result: TaggedText
    score: float

    def record(self) -> dict:
        """The jsonl output record: ``ner-predict``'s, with the score after the line number."""
        return {
            "line": self.line.number,
            SCORE_KEY: self.score,
            **self.result.to_json(),
            **(self.line.fields or {}),
        }


def uncertainty(result: TaggedText) -> float:
    """1 - the probability of the model's least sure decision in `result`, to six decimals."""
    return round(1.0 - result.lowest_confidence(), 6)


def near_copy_key(result: TaggedText) -> str:
    """What two near-copies share: the tokens, lowercased, digits as 0."""
    return " ".join(DIGITS.sub("0", token.text.lower()) for token in result.tokens)


def ranked(
    items: Iterable[Ranked], budget: int | None = None, distinct: bool = False
) -> list[Ranked]:
    """`items` by score, highest first, ties in line order; with `distinct`, a near-copy of a
    line kept already is passed over; the first `budget` (None: all)."""
    chosen: list[Ranked] = []
    seen: set[str] = set()
    for item in sorted(items, key=lambda item: (-item.score, item.line.number)):
        if budget is not None and len(chosen) == budget:
            break
        if distinct:
            key = near_copy_key(item.result)
            if key in seen:
                continue
            seen.add(key)
        chosen.append(item)
    return chosen


def score_lines(
    tagger: Tagger,
    lines: Iterable[Line],
    *,
    input_format: str = "text",
    batch_size: int = 64,
    chunk_lines: int = 2000,
    text_field: str = "text",
    warn: Warn = lambda message: None,
) -> tuple[list[Ranked], int]:
    """Tag every readable line (`RANK_INPUT_FORMATS`; a JSON record's text is its `text_field`,
    its other fields may not be named like the output's keys) and score it. Returns the scored
    lines in input order and how many lines were skipped (each handed to `warn`)."""
    if input_format not in RANK_INPUT_FORMATS:
        raise ValueError(f"ranking takes {', '.join(RANK_INPUT_FORMATS)} input, not {input_format}")
    if input_format == "jsonl":
        lines, input_format = read_json_lines(lines, text_field, RECORD_KEYS | {SCORE_KEY}), "text"
    scored: list[Ranked] = []
    skipped = 0
    for chunk in chunks(lines, chunk_lines, MAX_LINE_CHARS):
        readable = [line for line in chunk if not line.error]
        for line in chunk:
            if line.error:
                skipped += 1
                warn(line.error)
        texts = [line.text or "" for line in readable]
        prepared = texts if input_format == "text" else prepared_lines(texts)
        results = tagger.predict(prepared, batch_size=batch_size)
        scored += [
            Ranked(line, result, uncertainty(result))
            for line, result in zip(readable, results, strict=True)
        ]
    return scored, skipped


def write_ranked(out: IO[str], items: Iterable[Ranked]) -> int:
    """Write `items` as jsonl records (`Ranked.record`); returns how many."""
    count = 0
    for item in items:
        out.write(json.dumps(item.record(), ensure_ascii=False) + "\n")
        count += 1
    return count
