"""The JSON of `ner-serve`'s API as pydantic models (they also make its OpenAPI schema),
and the limits that keep one request from taking the server down."""

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from ner.data.tokenize import TOKENIZERS

Tokenizer = Literal[TOKENIZERS]  # type: ignore[valid-type]


@dataclass(frozen=True)
class Limits:
    """What one request may ask for (larger requests get a 413 with a message); `timeout`:
    seconds a request may wait for its result before a 503; `read_timeout`: seconds its body
    may take to arrive before a 408."""

    max_body_bytes: int = 1_000_000
    max_texts: int = 1000
    max_text_chars: int = 100_000
    max_tokens: int = 50_000
    timeout: float = 30.0
    read_timeout: float = 10.0


class PredictRequest(BaseModel):
    """Exactly one of `text`, `texts` or `tokens`."""

    model_config = ConfigDict(extra="forbid")

    text: StrictStr | None = Field(None, description="one raw text (split into sentences)")
    texts: list[StrictStr] | None = Field(None, description="several raw texts")
    tokens: list[list[StrictStr]] | None = Field(
        None, description="pre-tokenized sentences, kept exactly as given"
    )
    tokenizer: Tokenizer = Field(  # type: ignore[valid-type]
        "news",
        description="how raw text is tokenized: news (CoNLL/Reuters style) or social "
        "(keeps @mentions, #hashtags, URLs, e-mail addresses and emoticons whole)",
    )
    include_tokens: StrictBool = Field(
        False,
        description="accepted for older clients and ignored: every document has its tokens",
    )


class EntityOut(BaseModel):
    """An entity: ``text == document_text[start:end]`` (Unicode code points)."""

    text: str
    type: str
    start: int
    end: int
    token_start: int
    token_end: int = Field(description="exclusive")
    confidence: float = Field(description="CRF probability of exactly this span and type")


class TokenOut(BaseModel):
    """A token and its character span; for per-token labels also its label and probability."""

    text: str
    start: int
    end: int
    tag: str | None = Field(None, description="per-token labels only: the token's label")
    confidence: float | None = Field(
        None,
        description="per-token labels only: P(this label | text), the CRF marginal or the "
        "softmax probability",
    )


class SentenceOut(BaseModel):
    """A sentence's character span in the document's text."""

    start: int
    end: int


class DocumentOut(BaseModel):
    """One input text, as `ner.model.results.TaggedText.to_json` writes it, the same object as a
    line of ``ner-predict --format jsonl`` (for `tokens` input the text is the sentence's tokens
    joined by spaces)."""

    text: str
    tokens: list[TokenOut]
    tags: list[str] = Field(description="one tag per token, in the scheme of /info tag_scheme")
    sentences: list[SentenceOut]
    entities: list[EntityOut]


class PredictResponse(BaseModel):
    """One document per input text or sentence, in input order."""

    documents: list[DocumentOut]


class ErrorOut(BaseModel):
    """Why a request was refused."""

    detail: str


class HealthOut(BaseModel):
    status: Literal["ok"]
    requests: int = Field(description="requests tagged since the start")
    batches: int = Field(description="model calls that tagged them (micro-batches)")


class BiLMInfo(BaseModel):
    name: str
    layers: int
    output_dim: int
    lstm_dim: int
    projection_dim: int
    state: str


class InfoOut(BaseModel):
    model: str = Field(description="the model directory's name")
    labels: list[str] = Field(description="entity types (per-token labels: every label)")
    label_kind: Literal["spans", "tokens"] = Field(
        "spans", description="spans: entities; tokens: one label per token (part of speech)"
    )
    tags: list[str] = Field(description="tags the model predicts, in its own scheme")
    tag_scheme: str = Field(description="scheme of returned tags")
    model_tag_scheme: str
    tokenizers: list[str]
    bilm: BiLMInfo | None
    dev_f1: float | None = Field(description="the training run's dev F1 (kept in the model folder)")
    test_f1: float | None = Field(
        description="the training run's test F1 (kept in the model folder)"
    )
    dev_accuracy: float | None = Field(None, description="per-token labels: dev accuracy")
    test_accuracy: float | None = Field(None, description="per-token labels: test accuracy")
    archive_sha256: str = Field(description="sha256 of archive.json, which pins every file")
    precision: str = Field(description="of the LSTMs' matrix products: float32 or bfloat16")
    limits: dict[str, float]
