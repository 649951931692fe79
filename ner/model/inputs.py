"""Texts as a `ner.model.tagger.Tagger` tags them: each split into sentences of tokens that keep
their character offsets into the text. Raw text is tokenized like CoNLL (`ner.data.tokenize`);
pre-tokenized input keeps every token exactly as given."""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ner.common.errors import InputError
from ner.data.tokenize import Token, tokenize_sentences

_WHITESPACE_TOKEN = re.compile(r"\S+")


@dataclass(frozen=True)
class PreparedText:
    """A text ready to tag: its sentences of tokens, with offsets into `text`."""

    text: str
    sentences: list[list[Token]]


class TooManyTokens(InputError):
    """Texts that hold more tokens than a caller's limit: `tokens` counted up to text `index`."""

    def __init__(self, tokens: int, index: int, limit: int) -> None:
        super().__init__(f"{tokens} tokens up to text {index}; the limit is {limit}")
        self.tokens, self.index, self.limit = tokens, index, limit


def prepared_texts(
    texts: Sequence[str], tokenizer: str, max_tokens: int | None = None
) -> list[PreparedText]:
    """Raw texts split into sentences by `tokenizer` (`ner.data.tokenize.TOKENIZERS`);
    `TooManyTokens` at the first text that takes the count past `max_tokens`, so refused input
    costs at most one text's tokenizing beyond the limit."""
    prepared, tokens = [], 0
    for index, text in enumerate(texts):
        sentences = tokenize_sentences(text, tokenizer)
        tokens += sum(map(len, sentences))
        if max_tokens is not None and tokens > max_tokens:
            raise TooManyTokens(tokens, index, max_tokens)
        prepared.append(PreparedText(text, sentences))
    return prepared


def whitespace_tokens(line: str) -> list[Token]:
    """Pre-tokenized input: whitespace-separated tokens with their offsets into `line`."""
    return [Token(m.group(), m.start(), m.end()) for m in _WHITESPACE_TOKEN.finditer(line)]


def joined_tokens(tokens: Sequence[str], sentence: int = 0) -> tuple[str, list[Token]]:
    """Pre-tokenized input as a text: `tokens` joined by single spaces, each kept exactly (a
    no-break or inner space stays inside its token), with its offsets into that text.
    sentence: the sentence's index, for error messages."""
    text, result, start = [], [], 0
    for position, token in enumerate(tokens):
        if not isinstance(token, str):
            raise TypeError(
                f"sentence {sentence}, token {position} is a {type(token).__name__}, not a string"
            )
        if not token or token.isspace():
            raise ValueError(
                f"sentence {sentence}, token {position} ({token!r}) is empty or whitespace only; "
                "every token needs a visible character"
            )
        result.append(Token(token, start, start + len(token)))
        text.append(token)
        start += len(token) + 1
    return " ".join(text), result


def prepared_lines(lines: Sequence[str]) -> list[PreparedText]:
    """Pre-tokenized lines: each one sentence of whitespace-separated tokens (none if blank),
    with offsets into the line itself."""
    return [PreparedText(line, [whitespace_tokens(line)] if line.strip() else []) for line in lines]


def prepared_tokens(sentences: Sequence[Sequence[str]]) -> list[PreparedText]:
    """Pre-tokenized sentences: each one text of its tokens joined by single spaces (no sentence
    for an empty list); `joined_tokens` raises for a token that is not a visible string."""
    joined = [joined_tokens(tokens, index) for index, tokens in enumerate(sentences)]
    return [PreparedText(text, [tokens] if tokens else []) for text, tokens in joined]
