"""Tests for the CoNLL-style tokenizer and sentence splitter (ner/data/tokenize.py)."""

import re
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ner.data.tokenize import (
    JOINERS,
    TOKENIZERS,
    Token,
    estimate_tokens,
    split_sentences,
    tokenize,
    tokenize_sentences,
)


def words(text: str) -> list[str]:
    return text.split()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "EU rejects German call to boycott British lamb.",
            ["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."],
        ),
        # punctuation, brackets and quotes split off; quotes kept as written
        (
            '"Hello," he said (twice); ok?',
            ['"', "Hello", ",", '"', "he", "said", "(", "twice", ")", ";", "ok", "?"],
        ),
        ("“Curly” ‘quotes’", ["“", "Curly", "”", "‘", "quotes", "’"]),
        # clitics, also with a typographic apostrophe and when already split
        ("John's car isn't there", ["John", "'s", "car", "is", "n't", "there"]),
        ("can't won't I'm they'll we've he'd", words("ca n't wo n't I 'm they 'll we 've he 'd")),
        ("it’s DON’T", ["it", "’s", "DO", "N’T"]),
        ("John 's car do n't", ["John", "'s", "car", "do", "n't"]),
        ("O'Neill's players' cars", ["O'Neill", "'s", "players", "'", "cars"]),
        # abbreviations keep their period, the sentence period does not stick to words
        (
            "Mr. Smith of the U.S. and Acme Corp. left.",
            words("Mr. Smith of the U.S. and Acme Corp. left ."),
        ),
        ("at 10:30 a.m. on Jan. 5", ["at", "10:30", "a.m.", "on", "Jan.", "5"]),
        ("J. Smith won No. 5", ["J.", "Smith", "won", "No.", "5"]),
        ("U.S.-based Calif.-based", ["U.S.-based", "Calif.-based"]),
        ("the '90s and ’80s", ["the", "'90s", "and", "’80s"]),
        ("No. He said no.", ["No", ".", "He", "said", "no", "."]),
        # numbers, currency, percent, dates
        (
            "$1,000.5 rose 50% to 3.5 on 1996-08-22 or 08/22/96",
            words("$ 1,000.5 rose 50 % to 3.5 on 1996-08-22 or 08/22/96"),
        ),
        ("1,000, 2,000.", ["1,000", ",", "2,000", "."]),
        # hyphens inside words stay (as in CoNLL); dashes split
        (
            "Anglo-Dutch 10-year well-known -- and — not",
            ["Anglo-Dutch", "10-year", "well-known", "--", "and", "—", "not"],
        ),
        ("AT&T and/or word--word", ["AT&T", "and/or", "word", "--", "word"]),
        ("Wait... what?!", ["Wait", "...", "what", "?", "!"]),
        (
            "see https://example.com/a?b=1. Mail me@x.org, ok",
            ["see", "https://example.com/a?b=1", ".", "Mail", "me@x.org", ",", "ok"],
        ),
        # unicode: accents (composed and combining), Greek, Indic vowel signs, CJK
        ("Café naïve Zürich Ελλάδα", ["Café", "naïve", "Zürich", "Ελλάδα"]),
        ("Cafe\u0301 हिन्दी", ["Cafe\u0301", "हिन्दी"]),
        ("東京都。次", ["東京都", "。", "次"]),
        # zero-width characters separate and vanish; non-breaking space is whitespace
        ("a\u200bb\ufeffc\u00a0d", ["a", "b", "c", "d"]),
        ("", []),
        ("   \n\t\u00a0 ", []),
    ],
)
def test_tokenize_conll_style(text: str, expected: list[str]) -> None:
    tokens = tokenize(text)
    assert [t.text for t in tokens] == expected
    assert all(text[t.start : t.end] == t.text for t in tokens)


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a variation selector, a skin tone, ZWJ sequences, flags and keycaps stay on their base
        ("I ❤️ it", ["I", "❤️", "it"]),
        ("👨\u200d👩\u200d👧 family", ["👨\u200d👩\u200d👧", "family"]),
        ("👍🏽 ok 👩🏽\u200d💻", ["👍🏽", "ok", "👩🏽\u200d💻"]),
        (
            "🇺🇸🇫🇷 flags 🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
            ["🇺🇸", "🇫🇷", "flags", "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"],
        ),
        ("1️⃣ ©️!", ["1️⃣", "©️", "!"]),
        ("(\u0301 ok", ["(\u0301", "ok"]),
        ("❤\u200d wow", ["❤\u200d", "wow"]),
        # a joiner or variation selector that extends nothing is dropped, not an invisible token
        ("a \u200d b \ufe0f c\n\U000e0100", ["a", "b", "c"]),
        ("\u200dbc \u200c\ufe0fd", ["bc", "d"]),
        # a URL ends at a zero-width space or word joiner: the next word is a token of its own
        ("see https://x.org/a\u200bnext word", ["see", "https://x.org/a", "next", "word"]),
        ("see www.x.org\u2060next", ["see", "www.x.org", "next"]),
        # URLs keep balanced parentheses and an apostrophe in their path...
        (
            "(https://en.wikipedia.org/wiki/Foo_(bar)).",
            ["(", "https://en.wikipedia.org/wiki/Foo_(bar)", ")", "."],
        ),
        ("see https://x.org/isn't now", ["see", "https://x.org/isn't", "now"]),
        (
            "at https://en.wikipedia.org/wiki/McDonald's",
            ["at", "https://en.wikipedia.org/wiki/McDonald's"],
        ),
        ("https://x.org/a?b=(c) now", ["https://x.org/a?b=(c)", "now"]),
        # ... but not a closing bracket they did not open, nor a possessive after the host
        ("(see https://x.org/a)", ["(", "see", "https://x.org/a", ")"]),
        ("https://x.org/a).", ["https://x.org/a", ")", "."]),
        ("https://x.org's page", ["https://x.org", "'s", "page"]),
        ("www.x.org’s", ["www.x.org", "’s"]),
        ("me@x.org's", ["me@x.org", "'s"]),
    ],
)
def test_emoji_sequences_and_urls(tokenizer: str, text: str, expected: list[str]) -> None:
    tokens = tokenize(text, tokenizer)
    assert [t.text for t in tokens] == expected
    assert all(text[t.start : t.end] == t.text for t in tokens)
    assert estimate_tokens(text) >= len(tokens)


def test_tokens_carry_offsets() -> None:
    assert tokenize("  Hi, U.S.!") == [
        Token("Hi", 2, 4),
        Token(",", 4, 5),
        Token("U.S.", 6, 10),
        Token("!", 10, 11),
    ]


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.characters(codec="utf-8"), max_size=80)
    | st.text("aA1.,'-\"$% \n’", max_size=60)
    | st.text("aD3@#:;=-'()<>^_/.\\| \n", max_size=60)
)
def test_offsets_always_index_the_input(tokenizer: str, text: str) -> None:
    tokens = tokenize(text, tokenizer)
    previous_end = 0
    covered = set()
    for token in tokens:
        assert text[token.start : token.end] == token.text
        assert previous_end <= token.start < token.end
        assert not any(c.isspace() for c in token.text)
        covered.update(range(token.start, token.end))
        previous_end = token.end
    visible = {i for i, c in enumerate(text) if not c.isspace() and c not in "\u200b\u2060\ufeff"}
    assert covered <= visible  # nothing invented
    # nothing lost but a joiner or variation selector that extends no token (invisible alone)
    assert all(re.fullmatch(f"[{JOINERS}]", text[i]) for i in visible - covered)
    # sentences partition the tokens, in order
    sentences = tokenize_sentences(text, tokenizer)
    assert [t for sentence in sentences for t in sentence] == tokens
    assert split_sentences(text, tokenizer) == [(s[0].start, s[-1].end) for s in sentences]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "@john_doe loves #NLProc2024 :-) see https://t.co/x?y=1 or mail a.b@ex.org ;P",
            words("@john_doe loves #NLProc2024 :-) see https://t.co/x?y=1 or mail a.b@ex.org ;P"),
        ),
        ("great game!!! :D <3 ^_^ -_-", ["great", "game", "!", "!", "!", ":D", "<3", "^_^", "-_-"]),
        ("love it:) so sad :'(( =D >:(", words("love it :) so sad :'(( =D >:(")),
        ("@user's #tag's", ["@user", "'s", "#tag", "'s"]),
        ("@José_María #Zürich", ["@José_María", "#Zürich"]),
        # not emoticons, mentions or hashtags
        (
            "C# and F# at 10:30 (8) x=3 ratio:/y",
            words("C # and F # at 10:30 ( 8 ) x = 3 ratio : / y"),
        ),
        ("Note: (see) ok", ["Note", ":", "(", "see", ")", "ok"]),
    ],
)
def test_social_keeps_mentions_hashtags_urls_emails_and_emoticons(text, expected) -> None:
    tokens = tokenize(text, "social")
    assert [t.text for t in tokens] == expected
    assert all(text[t.start : t.end] == t.text for t in tokens)


def test_news_is_the_default_and_splits_social_tokens() -> None:
    assert [t.text for t in tokenize("@ann #tag :)")] == ["@", "ann", "#", "tag", ":", ")"]
    assert tokenize("@ann #tag :)") == tokenize("@ann #tag :)", "news")


def test_social_sentences() -> None:
    text = "Loved it @ann :) Back tomorrow. #excited"
    assert [text[a:b] for a, b in split_sentences(text, "social")] == [
        "Loved it @ann :) Back tomorrow.",
        "#excited",
    ]


def test_unknown_tokenizer() -> None:
    with pytest.raises(
        ValueError, match="unknown tokenizer 'tweets'; expected one of news, social"
    ):
        tokenize("x", "tweets")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("He left. She stayed.", ["He left.", "She stayed."]),
        (
            '"Hello," he said. "Bye." (Really.) Then?! Yes.',
            ['"Hello," he said.', '"Bye."', "(Really.)", "Then?!", "Yes."],
        ),
        ("Mr. Smith met Dr. Jones at St. Paul's.", ["Mr. Smith met Dr. Jones at St. Paul's."]),
        ("The U.S. Treasury sold bonds. It rose.", ["The U.S. Treasury sold bonds.", "It rose."]),
        ("He lives in the U.S. He likes it.", ["He lives in the U.S.", "He likes it."]),
        (
            "Prices fell 2.5 percent. 10 firms cut jobs.",
            ["Prices fell 2.5 percent.", "10 firms cut jobs."],
        ),
        ("e.g. this stays. ok? lower case goes on", ["e.g. this stays. ok? lower case goes on"]),
        ("Title without period\n\nNext paragraph.", ["Title without period", "Next paragraph."]),
        ("wrapped line\ncontinues here.", ["wrapped line\ncontinues here."]),
        ("東京都。次の文。", ["東京都。", "次の文。"]),
        ("", []),
        ("  \n ", []),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert [text[a:b] for a, b in split_sentences(text)] == expected


# Runs where a pattern that retries a long alternative at every position takes quadratic time:
# the e-mail alternative once rescanned the rest of a run of ``[\w.+-]`` from each position.
MEGABYTE = 1_000_000
ADVERSARIAL = ["+", "a+", ".+.", "@@@", "a+.+@@-x.@+a'+"]
_TIME_ONE = """
import sys, time
from ner.data.tokenize import tokenize
unit, tokenizer, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = (unit * (size // len(unit) + 1))[:size]
tokenize("warm up", tokenizer)
started = time.perf_counter()
tokenize(text, tokenizer)
print(time.perf_counter() - started)
"""


def repeated(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


@pytest.mark.slow
@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_tokenize_time_is_linear_on_adversarial_input(tokenizer: str) -> None:
    """1 MB of each adversarial run takes about as long as 1 MB of ``x,`` (as many tokens, no
    long run): at most 4 times as long. A quadratic tokenizer took 5 s for 64 kB of ``+`` and
    would take half an hour for 1 MB; each run is timed in a child process that is stopped as
    soon as it passes the bound, so a regression fails in seconds instead of hanging."""
    tokenize("warm up", tokenizer)
    started = time.perf_counter()
    assert len(tokenize(repeated("x,", MEGABYTE), tokenizer)) == MEGABYTE
    baseline = time.perf_counter() - started
    bound = 4 * baseline
    for unit in ADVERSARIAL:
        command = [sys.executable, "-c", _TIME_ONE, unit, tokenizer, str(MEGABYTE)]
        try:
            child = subprocess.run(
                command, capture_output=True, text=True, check=True, timeout=bound + 10
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"1 MB of {unit!r} took over {bound + 10:.1f} s ({baseline:.2f} s for x,)")
        seconds = float(child.stdout)
        assert seconds <= bound, f"1 MB of {unit!r}: {seconds:.2f} s, x,: {baseline:.2f} s"


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@pytest.mark.parametrize("unit", [*ADVERSARIAL, "x,"])
def test_adversarial_runs_are_tokenized_as_before(tokenizer: str, unit: str) -> None:
    text = repeated(unit, 3000)
    tokens = tokenize(text, tokenizer)
    assert "".join(t.text for t in tokens) == text
    assert len(tokens) <= estimate_tokens(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("EU rejects German call to boycott British lamb.", 9),
        ('"Hello," he said (twice); ok?', 12),
        ("", 0),
        (" \u200b\n", 0),
        ("+" * 50, 50),
        ("U.S. John's", 7),  # 3 tokens: the estimate never falls short, it may exceed
    ],
)
def test_estimate_tokens_examples(text: str, expected: int) -> None:
    assert estimate_tokens(text) == expected
    assert estimate_tokens(text) >= len(tokenize(text))


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet=st.characters(codec="utf-8"), max_size=80)
    | st.text("aA1.,'-\"$% \n’", max_size=60)
    | st.text("aD3@#:;=-'()<>^_/.\\| \n", max_size=60)
    | st.text("ab.+-@_ x.oc:/htpsw'’()", max_size=60)
    | st.text("a1 ❤\ufe0f\u200d\u0301\U0001f3fd\U0001f1fa.'", max_size=40)
)
def test_estimate_tokens_is_an_upper_bound(tokenizer: str, text: str) -> None:
    assert estimate_tokens(text) >= len(tokenize(text, tokenizer))
