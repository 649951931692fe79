"""PTB/CoNLL-style tokenization and sentence splitting that keep character offsets.

The tokenizer splits text the way the CoNLL-2003 (Reuters) data was tokenized, so that a tagger
trained on it sees familiar tokens: punctuation, brackets and quotes are split off; clitics become
tokens of their own (``John 's``, ``do n't``); abbreviations (``U.S.``, ``Mr.``), numbers
(``1,000.5``, ``10:30``, ``1996-08-22``) and hyphenated or slashed words (``Anglo-Dutch``,
``and/or``) stay whole. Unlike PTB it never rewrites text: every token is ``text[start:end]``,
quotes included, which is what character-offset output needs.

Two tokenizers share that design: ``news`` (the default, as above) and ``social``, which also
keeps @mentions, #hashtags and emoticons (``:-)``, ``;P``, ``<3``, ``^_^``) whole, for posts and
chat. Both keep URLs and e-mail addresses whole.

The splitter ends a sentence after ``.``, ``!``, ``?``, ``...`` (plus closing quotes and brackets)
when the next token does not start in lower case, and always at a blank line. Titles such as
``Mr.`` never end a sentence; other abbreviations (``U.S.``, ``Inc.``) end one only before a
typical sentence opener (``The``, ``He``, ...).
"""

import functools
import re
import unicodedata
from typing import NamedTuple


class Token(NamedTuple):
    """A token and its character span: ``text == source[start:end]``."""

    text: str
    start: int
    end: int


def _words(text: str) -> list[str]:
    return text.split()


# Titles: an abbreviation that is followed by a name, so it never ends a sentence.
_TITLES = _words(
    "Mr Mrs Ms Messrs Mmes Dr Prof Sen Sens Rep Reps Gov Gen Lt Col Maj Capt Cmdr Adm Sgt Cpl Pvt "
    "Rev Fr Hon Pres Supt Insp Mt Ft St"
)
# Other abbreviations written with a final period (months, US states, company forms, Latin).
_ABBREVIATIONS = _words(
    "Jr Sr Corp Inc Ltd Co Cos Bros Plc Pty Dept Univ Assn Ave Blvd Rd v vs etc approx est cf al "
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Mon Tue Tues Wed Thu Thur Thurs Fri Sat "
    "Ala Ariz Ark Calif Colo Conn Del Fla Ga Ill Ind Kan Kans Ky La Md Mass Mich Minn Miss Mo "
    "Mont Neb Nev Okla Ore Pa Penn Tenn Tex Va Vt Wash Wis Wyo"
)
_TITLE_TOKENS = frozenset(f"{t}." for t in _TITLES) | {"No.", "Nos."}
# Words that typically open a sentence: after an abbreviation such as "U.S." they mark a boundary.
_SENTENCE_OPENERS = frozenset(
    _words(
        "The A An He She It They We I You This That These Those There Here His Her Its Their Our "
        "My Your But And Or So Yet However In On At For If As When While After Before Since "
        "Although Though What Where Why How Who Which Some Many Most All Both Each Other Others "
        "Meanwhile Also Still Then Now Earlier Later"
    )
)
_SENTENCE_END = frozenset({".", "!", "?", "...", "…", "。", "！", "？"})
_CLOSING = frozenset({'"', "'", "''", "”", "’", "»", ")", "]", "}"})
# Zero-width characters that separate nothing visible; they never become (part of) a token.
_IGNORABLE = "\u200b\u2060\ufeff"
TOKENIZERS = ("news", "social")
_CLITIC = re.compile(r"(?:n['’]t|['’](?:s|re|ve|ll|d|m))\Z", re.IGNORECASE)
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")


def _mark_class() -> str:
    """Combining marks (Mn, Mc, Me) as a regex class body: they belong inside words, but `\\w`
    does not match them (NFD accents, Indic vowel signs)."""
    ranges: list[tuple[int, int]] = []
    for code in [*range(0x30000), *range(0xE0100, 0xE01F0)]:
        if unicodedata.category(chr(code)) in ("Mn", "Mc", "Me"):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
    )


def _social_alternatives(word_char: str) -> list[str]:
    """Mentions and hashtags (not after a word: ``C#``, e-mail addresses), kept whole up to a
    clitic that `tokenize` splits off (``@user 's``); emoticons with eyes, an optional nose and
    a repeated mouth (``:-)``, ``;P``, ``=D``, ``:'((``), hearts and ``^_^`` faces."""
    mouth = r"(?P<mouth>[()\[\]DPpOo/\\|*3{}@$])(?P=mouth)*"
    return [
        rf"(?<![\w@#])[@#]{word_char}+(?:['’]{word_char}+)?",
        rf"(?<![:;=])(?:>?[:;]|(?<![\w>])>?=)[-o*'^]?{mouth}(?![\w:;=/\\])",
        r"(?<!\w)(?:<3+|</3|\^[_.-]?\^|-_-|T_T)(?!\w)",
    ]


def check_tokenizer(name: str) -> str:
    """`name` if it is one of `TOKENIZERS`, else a `ValueError` that lists them."""
    if name not in TOKENIZERS:
        raise ValueError(f"unknown tokenizer {name!r}; expected one of {', '.join(TOKENIZERS)}")
    return name


@functools.cache
def _token_pattern(tokenizer: str = "news") -> re.Pattern[str]:
    """The master pattern: alternatives tried in order at each position (compiled on first use);
    ``social`` tries mentions, hashtags and emoticons right after URLs and e-mail addresses."""
    word_char = rf"[\w{_mark_class()}\u200c\u200d]"
    known = "|".join(
        sorted((re.escape(a) for a in _TITLES + _ABBREVIATIONS), key=len, reverse=True)
    )
    alternatives = [
        # URLs and e-mail addresses, without trailing punctuation.
        r"(?:https?://|www\.)[^\s<>\"]*[^\s<>\".,;:!?'’)\]}]",
        r"[\w.+-]+@\w[\w-]*(?:\.\w[\w-]*)+",
        *(_social_alternatives(word_char) if tokenizer == "social" else []),
        # U.S. / a.m. / U.S.-based ; Mr. / Corp. ; "No. 5" ; a capital initial such as "J."
        r"(?<!\w)(?:[^\W\d_]\.){2,}(?:-\w+)*(?!\w)",
        rf"(?<!\w)(?:{known})\.(?:-\w+)*(?!\w)",
        r"(?<!\w)Nos?\.(?=\s*\d)",
        r"(?<!\w)[A-Z]\.(?=\s+[A-Z])",
        # A decade ('90s); a clitic written apart ("John 's", "do n't": pre-tokenized text).
        r"(?<!\w)['’]\d0s(?!\w)",
        r"(?<!\w)['’](?i:[sdm]|re|ve|ll)(?!\w)",
        # Words: word characters joined by - / & . ' ’ (inner only) or by , : between digits.
        rf"{word_char}+(?:(?:[-/&.'’]|(?<=\d)[,:](?=\d)){word_char}+)*",
        # Multi-character punctuation, then any other single visible character.
        r"\.\.\.+|--+|``|''",
        rf"[^\s{_IGNORABLE}]",
    ]
    return re.compile("|".join(f"(?:{a})" for a in alternatives))


def tokenize(text: str, tokenizer: str = "news") -> list[Token]:
    """Split `text` into tokens (`tokenizer`: ``news``, CoNLL-style, or ``social``);
    `text[t.start:t.end] == t.text` for every token.

    Whitespace and zero-width characters separate tokens and are never part of one; every other
    character belongs to exactly one token. Empty or whitespace-only text gives ``[]``.
    """
    tokens: list[Token] = []
    for match in _token_pattern(check_tokenizer(tokenizer)).finditer(text):
        start, end = match.span()
        clitic = _CLITIC.search(match.group())
        if clitic is not None and clitic.start() > 0:
            split = start + clitic.start()
            tokens.append(Token(text[start:split], start, split))
            start = split
        tokens.append(Token(text[start:end], start, end))
    return tokens


def _boundary_after(text: str, tokens: list[Token], index: int) -> bool:
    """Whether a sentence ends after `tokens[index]`, judging by it, its neighbours and the gap."""
    if index + 1 == len(tokens):
        return True
    token, following = tokens[index], tokens[index + 1]
    if _PARAGRAPH_BREAK.search(text, token.end, following.start):
        return True
    if token.text not in _CLOSING and not token.text.endswith(tuple(_SENTENCE_END)):
        return False
    if following.start == token.end and (
        following.text in _CLOSING or following.text in _SENTENCE_END
    ):
        return False  # keep '?!' and closing quotes and brackets ('." )') with their sentence
    # Walk back over closing quotes and brackets glued to the final punctuation.
    while (
        index > 0
        and tokens[index].text in _CLOSING
        and tokens[index - 1].end == tokens[index].start
    ):
        index -= 1
    final = tokens[index].text
    if final in {"。", "！", "？"}:
        return True
    if following.text[0].islower():
        return False
    if final in _SENTENCE_END:
        return True
    if final.endswith(".") and len(final) > 1 and final not in _TITLE_TOKENS:
        # "U.S." or "Inc." closes a sentence only before a typical sentence opener.
        return following.text in _SENTENCE_OPENERS
    return False


def tokenize_sentences(text: str, tokenizer: str = "news") -> list[list[Token]]:
    """Tokenize `text` (see `tokenize`) and split it into sentences; offsets index `text`."""
    tokens = tokenize(text, tokenizer)
    sentences: list[list[Token]] = []
    current: list[Token] = []
    for index, token in enumerate(tokens):
        current.append(token)
        if _boundary_after(text, tokens, index):
            sentences.append(current)
            current = []
    return sentences


def split_sentences(text: str, tokenizer: str = "news") -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the sentences of `text`, from the first character of a
    sentence's first token to the last of its last token (surrounding whitespace excluded)."""
    return [(group[0].start, group[-1].end) for group in tokenize_sentences(text, tokenizer)]
