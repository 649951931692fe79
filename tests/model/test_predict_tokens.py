"""`Tagger.predict_tokens` keeps the caller's tokens exactly: one tag per given token, whatever
characters the tokens hold (no-break spaces, combining marks, emoji, ...)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiny_tagger import one_thread, saved_model

from ner.model.tagger import Tagger


@pytest.fixture(scope="module")
def tagger() -> Tagger:
    return Tagger.load(saved_model())


def check_alignment(tokens: list[str], result) -> None:
    assert [t.text for t in result.tokens] == tokens
    assert len(result.tags) == len(tokens)
    assert all(result.text[t.start : t.end] == t.text for t in result.tokens)
    for entity in result.entities:
        assert result.text[entity.start : entity.end] == entity.text


def test_tokens_with_inner_spaces_stay_whole(tagger: Tagger) -> None:
    tokens = ["Anna", "went", "to", "New\u00a0York", "and", "São Paulo", "."]
    with one_thread():
        (result,) = tagger.predict_tokens([tokens])
    check_alignment(tokens, result)
    assert result.text == "Anna went to New\u00a0York and São Paulo ."


def test_empty_sentence_gives_an_empty_result(tagger: Tagger) -> None:
    with one_thread():
        empty, full = tagger.predict_tokens([[], ["Rome"]])
    assert (empty.text, empty.tokens, empty.tags, empty.entities) == ("", [], [], [])
    assert [t.text for t in full.tokens] == ["Rome"]


@pytest.mark.parametrize("bad", ["", " ", "\u00a0", "\t\n"])
def test_empty_or_whitespace_token_is_a_clear_error(tagger: Tagger, bad: str) -> None:
    with pytest.raises(ValueError, match=r"sentence 1, token 2 .* empty or whitespace"):
        tagger.predict_tokens([["Rome"], ["Anna", "likes", bad, "Rome"]])


def test_token_that_is_not_a_string_is_a_clear_error(tagger: Tagger) -> None:
    with pytest.raises(TypeError, match=r"sentence 0, token 1 .* int"):
        tagger.predict_tokens([["Rome", 7]])  # type: ignore[list-item]


visible = st.text(min_size=1, max_size=12).filter(lambda token: not token.isspace())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(visible, min_size=0, max_size=8), min_size=1, max_size=4))
def test_one_tag_per_input_token(tagger: Tagger, sentences: list[list[str]]) -> None:
    with one_thread():
        results = tagger.predict_tokens(sentences)
    assert len(results) == len(sentences)
    for tokens, result in zip(sentences, results, strict=True):
        check_alignment(tokens, result)
