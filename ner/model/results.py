"""What a `ner.model.tagger.Tagger` returns, and its one JSON shape.

`TaggedText.to_json` is the object of every tagged text the package writes: a line of
``ner-predict --format jsonl``, a document of the ``ner-serve`` API and what the entity page
draws. Offsets are character offsets into the text; token indices end exclusive.
"""

from dataclasses import dataclass, field
from typing import Any

from ner.data.tokenize import Token


@dataclass(frozen=True)
class Entity:
    """A tagged span: ``text == source[start:end]``; tokens ``token_start`` to ``token_end``
    (exclusive); `confidence` = P(this exact span has this type | text) under the CRF."""

    text: str
    type: str
    start: int
    end: int
    token_start: int
    token_end: int
    confidence: float

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "type": self.type,
            "start": self.start,
            "end": self.end,
            "token_start": self.token_start,
            "token_end": self.token_end,
            "confidence": round(self.confidence, 6),
        }


@dataclass
class TaggedText:
    """One input text: its tokens (with offsets), one tag per token, sentence spans (token
    indices, end exclusive) and entities; for per-token labels `confidences` holds each token's
    label probability (None for span models); `outside`: the lowest marginal P(O) among the
    tokens tagged O (1.0 when none is)."""

    text: str
    tokens: list[Token]
    tags: list[str]
    sentences: list[tuple[int, int]]
    entities: list[Entity]
    confidences: list[float] | None = None
    outside: float = 1.0

    def lowest_confidence(self) -> float:
        """The probability the model gives its least sure decision in this text: an entity's
        confidence, or a token's P(O) where it tagged no entity; for per-token labels, a
        token's label probability. 1.0 for a text without tokens."""
        if self.confidences is not None:
            return min(self.confidences, default=1.0)
        return min([self.outside, *(entity.confidence for entity in self.entities)])

    def token_json(self) -> list[dict[str, Any]]:
        """The tokens with offsets; for per-token labels also each one's tag and confidence."""
        tokens = [{"text": t.text, "start": t.start, "end": t.end} for t in self.tokens]
        if self.confidences is not None:
            for token, tag, confidence in zip(tokens, self.tags, self.confidences, strict=True):
                token.update(tag=tag, confidence=round(confidence, 6))
        return tokens

    def to_json(self) -> dict[str, Any]:
        """The ``--format jsonl`` object."""
        return {
            "text": self.text,
            "tokens": self.token_json(),
            "tags": self.tags,
            "sentences": [
                {"start": self.tokens[a].start, "end": self.tokens[b - 1].end}
                for a, b in self.sentences
            ],
            "entities": [entity.to_json() for entity in self.entities],
        }


@dataclass
class TaggedSentence:
    """One token list's tags and entity spans: (type, start, end exclusive, confidence), in
    token indices; per-token labels have no spans but one confidence per tag. outside: the
    lowest marginal P(O) among the tokens tagged O (1.0 when none is)."""

    tags: list[str]
    spans: list[tuple[str, int, int, float]]
    confidences: list[float] = field(default_factory=list)
    outside: float = 1.0
