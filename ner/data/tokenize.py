"""PTB/CoNLL-style tokenization and sentence splitting that keep character offsets.

The tokenizer splits text the way the CoNLL-2003 (Reuters) data was tokenized, so that a tagger
trained on it sees familiar tokens: punctuation, brackets and quotes are split off; clitics become
tokens of their own (``John 's``, ``do n't``); abbreviations (``U.S.``, ``Mr.``), numbers
(``1,000.5``, ``10:30``, ``1996-08-22``) and hyphenated or slashed words (``Anglo-Dutch``,
``and/or``) stay whole. Unlike PTB it never rewrites text: every token is ``text[start:end]``,
quotes included, which is what character-offset output needs.

Two tokenizers share that design: ``news`` (the default, as above) and ``social``, which also
keeps @mentions, #hashtags and emoticons (``:-)``, ``;P``, ``<3``, ``^_^``) whole, for posts and
chat. Both keep URLs and e-mail addresses whole (a URL with the parentheses it opens, as in
``/wiki/Foo_(bar)``, and an apostrophe in its path; a possessive after a bare host or an address
splits off: ``x.org 's``), and an emoji with what extends it (``❤️``, ``👍🏽``, ``👨‍👩‍👧``,
the flag ``🇺🇸``): combining marks, variation selectors and ZWJ stay on the character before
them; a joiner or variation selector with nothing before it to extend (after a space) is dropped,
and a zero-width space or word joiner ends a URL.

The splitter ends a sentence after ``.``, ``!``, ``?``, ``...`` (plus closing quotes and brackets)
when the next token does not start in lower case, and always at a blank line. Titles such as
``Mr.`` never end a sentence; other abbreviations (``U.S.``, ``Inc.``) end one only before a
typical sentence opener (``The``, ``He``, ...).
"""

import collections
import functools
import re
import unicodedata
from collections.abc import Iterator
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
# Invisible characters that only extend or join the character before them (ZWNJ, ZWJ, the
# combining grapheme joiner, variation selectors), as the body of a regex character class: a
# token never starts with one, so one that no token before it takes in (after a space, at the
# start) is dropped, as a zero-width space is.
JOINERS = "\u200c\u200d\u034f\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef"
TOKENIZERS = ("news", "social")
_CLITIC = re.compile(r"(?:n['’]t|['’](?:s|re|ve|ll|d|m))\Z", re.IGNORECASE)
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")


def _mark_ranges() -> list[tuple[int, int]]:
    """Code point ranges of the combining marks (Mn, Mc, Me): they belong inside words, but
    `\\w` does not match them (NFD accents, Indic vowel signs, variation selectors)."""
    ranges: list[tuple[int, int]] = []
    for code in [*range(0x30000), *range(0xE0100, 0xE01F0)]:
        if unicodedata.category(chr(code)) in ("Mn", "Mc", "Me"):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return ranges


def _class_body(ranges: list[tuple[int, int]]) -> str:
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
    )


def _social_alternatives(word: str) -> list[str]:
    """Mentions and hashtags (not after a word: ``C#``, e-mail addresses), kept whole up to a
    clitic that `tokenize` splits off (``@user 's``); emoticons with eyes, an optional nose and
    a repeated mouth (``:-)``, ``;P``, ``=D``, ``:'((``), hearts and ``^_^`` faces."""
    mouth = r"(?P<mouth>[()\[\]DPpOo/\\|*3{}@$])(?P=mouth)*"
    return [
        rf"(?<![\w@#])[@#]{word}(?:['’]{word})?",
        rf"(?<![:;=])(?:>?[:;]|(?<![\w>])>?=)[-o*'^]?{mouth}(?![\w:;=/\\])",
        r"(?<!\w)(?:<3+|</3|\^[_.-]?\^|-_-|T_T)(?!\w)",
    ]


def check_tokenizer(name: str) -> str:
    """`name` if it is one of `TOKENIZERS`, else a `ValueError` that lists them."""
    if name not in TOKENIZERS:
        raise ValueError(f"unknown tokenizer {name!r}; expected one of {', '.join(TOKENIZERS)}")
    return name


# Emoji modifiers (skin tones) and tag characters (the letters of subdivision flags): like
# combining marks, they extend the character before them.
_EMOJI_EXTENDERS = [(0x1F3FB, 0x1F3FF), (0xE0020, 0xE007F)]


@functools.cache
def _mark_classes() -> tuple[str, str]:
    """Class bodies of the combining marks in the Basic Multilingual Plane and above it.

    The patterns test the second behind a guard (``(?=[^\\x00-\\uffff])``): `re` tests a class
    of BMP characters with one table lookup but walks a class that also holds higher code
    points range by range, which made that test most of the tokenizer's time."""
    ranges = _mark_ranges()
    return (
        _class_body([r for r in ranges if r[1] <= 0xFFFF]),
        _class_body([r for r in ranges if r[1] > 0xFFFF]),
    )


@functools.cache
def _word() -> str:
    """One or more characters inside a word: `\\w`, combining marks, ZWNJ and ZWJ. The repeat
    is over runs of the BMP class, so a word of BMP characters is one fast run; it is atomic,
    as a shorter run never lets the rest match where the whole run does not."""
    basic, astral = _mark_classes()
    return rf"(?>(?:[\w{basic}\u200c\u200d]+|(?=[^\x00-\uffff])[{astral}])+)"


@functools.cache
def _symbol() -> str:
    """A visible character that no other alternative took, with what extends it: combining
    marks (a variation selector: ``❤️``, a keycap), skin tones, tag characters, and ZWJ with
    the next symbol (``👨‍👩‍👧``); or a pair of regional indicators (a flag: ``🇺🇸``)."""
    basic, astral = _mark_classes()
    astral += _class_body(_EMOJI_EXTENDERS)
    extend = rf"[{basic}]|(?=[^\x00-\uffff])[{astral}]|\u200d[^\s\w{_IGNORABLE}]?"
    return rf"(?:[\U0001F1E6-\U0001F1FF]{{2}}|[^\s{_IGNORABLE}])(?>(?:{extend})*)"


@functools.cache
def _token_pattern(tokenizer: str = "news") -> re.Pattern[str]:
    """The master pattern: alternatives tried in order at each position (compiled on first use);
    `tokenize` tries e-mail addresses right after URLs, ``social`` mentions, hashtags and
    emoticons right after those."""
    word = _word()
    known = "|".join(
        sorted((re.escape(a) for a in _TITLES + _ABBREVIATIONS), key=len, reverse=True)
    )
    alternatives = [
        # URLs without trailing punctuation (e-mail addresses come from `_email_spans`), their
        # closing parentheses added by `_url_end`.
        rf"(?P<url>(?:https?://|www\.)[^\s<>\"{_IGNORABLE}]*[^\s<>\"{_IGNORABLE}.,;:!?'’)\]}}])",
        *(_social_alternatives(word) if tokenizer == "social" else []),
        # U.S. / a.m. / U.S.-based ; Mr. / Corp. ; "No. 5" ; a capital initial such as "J."
        r"(?<!\w)(?:[^\W\d_]\.){2,}(?:-\w+)*(?!\w)",
        rf"(?<!\w)(?=[A-Za-z]+\.)(?:{known})\.(?:-\w+)*(?!\w)",
        r"(?<!\w)Nos?\.(?=\s*\d)",
        r"(?<!\w)[A-Z]\.(?=\s+[A-Z])",
        # A decade ('90s); a clitic written apart ("John 's", "do n't": pre-tokenized text).
        r"(?<!\w)['’]\d0s(?!\w)",
        r"(?<!\w)['’](?i:[sdm]|re|ve|ll)(?!\w)",
        # Words: word characters joined by - / & . ' ’ (inner only) or by , : between digits.
        rf"{word}(?:(?:[-/&.'’]|(?<=\d)[,:](?=\d)){word})*",
        # Multi-character punctuation, then any other visible character (emoji sequences whole).
        r"\.\.\.+|--+|``|''",
        _symbol(),
    ]
    either = "|".join(f"(?:{a})" for a in alternatives)
    return re.compile(f"(?![{JOINERS}])(?:{either})")


# The local part of an e-mail address, found only from the start of a run of its characters,
# with "@" and the domain in a lookahead (group 1) so that the run after the "@" is found too.
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+(?=@(\w[\w-]*(?:\.\w[\w-]*)+))")


def _email_spans(text: str) -> list[tuple[int, int, int]]:
    """``(start, at, end)`` for each run ``text[start:at]`` of local-part characters that an
    ``@`` and a domain follow: from any position of the run, an address reaches ``end``.

    Tried at every position, as an alternative of the master pattern, ``[\\w.+-]+@...`` would
    rescan the rest of the run from each one: quadratic in a run such as ``+++…`` that holds no
    address. Every position of a run reaches the same ``@`` and domain, so one scan per run
    decides them all and tokenizing stays linear in the length of the text."""
    if "@" not in text:
        return []
    return [(m.start(), m.end(), m.end(1)) for m in _EMAIL.finditer(text)]


# A clitic after an e-mail address ("me@x.org's"), whose domain stops before the apostrophe.
_CLITIC_AFTER = re.compile(r"['’](?i:[sdm]|re|ve|ll)(?!\w)")


def _url_end(text: str, start: int, end: int) -> tuple[int, bool]:
    """The end of the URL matched at ``text[start:end]`` once the ``)`` that close a ``(``
    inside it are added (``/wiki/Foo_(bar)``), and whether a clitic at its end is split off:
    only after a bare host (``x.org's``), as in a path the apostrophe is part of the URL
    (``/wiki/McDonald's``)."""
    depth = text.count("(", start, end) - text.count(")", start, end)
    while depth > 0 and text.startswith(")", end):
        end, depth = end + 1, depth - 1
    address = text[start:end]
    return end, "/" not in (address.partition("://")[2] or address)


def _token_spans(text: str, tokenizer: str) -> Iterator[tuple[int, int, bool]]:
    """``(start, end, clitic)`` of each token before clitics are split off (`clitic`: whether
    one may be): the matches of the master pattern, with e-mail addresses taking precedence over
    every alternative but URLs, as if they were the second alternative."""
    pattern = _token_pattern(tokenizer)
    emails = collections.deque(_email_spans(text))
    position = 0
    while True:
        for match in pattern.finditer(text, position):
            start, end = match.span()
            clitic = True
            while emails and emails[0][1] <= start:
                emails.popleft()
            if match.lastgroup == "url":
                end, clitic = _url_end(text, start, end)
            elif emails and emails[0][0] <= start:
                end = emails[0][2]
                after = _CLITIC_AFTER.match(text, end)
                end = end if after is None else after.end()
            yield start, end, clitic
            if end != match.end():
                position = end
                break  # go on after the longer token
        else:
            return


def tokenize(text: str, tokenizer: str = "news") -> list[Token]:
    """Split `text` into tokens (`tokenizer`: ``news``, CoNLL-style, or ``social``);
    `text[t.start:t.end] == t.text` for every token.

    Whitespace and zero-width characters separate tokens and are never part of one; so are
    joiners and variation selectors (`JOINERS`) that extend no token (after a space, at the
    start); every other character belongs to exactly one token. Empty or whitespace-only text
    gives ``[]``. The time taken grows linearly with the length of `text`, whatever its content.
    """
    tokens: list[Token] = []
    for start, end, may_split in _token_spans(text, check_tokenizer(tokenizer)):
        clitic = _CLITIC.search(text, start, end) if may_split and end - start > 2 else None
        if clitic is not None and clitic.start() > start:
            tokens.append(Token(text[start : clitic.start()], start, clitic.start()))
            start = clitic.start()
        tokens.append(Token(text[start:end], start, end))
    return tokens


@functools.cache
def _unit_pattern() -> re.Pattern[str]:
    """A run of word characters, or any other character that `tokenize` keeps."""
    return re.compile(rf"{_word()}|[^\s{_IGNORABLE}]")


def estimate_tokens(text: str) -> int:
    """An upper bound of ``len(tokenize(text, tokenizer))`` for every tokenizer, found in one
    regex pass that takes a third of the tokenizer's time or less: each run of word characters
    counts one, each other visible character one.

    A bound, because every token either holds a character outside the word class (counted for
    the first such character, which no other token holds) or is made of word characters only,
    and a run holds at most one token of the second kind (a word reaches the end of its run).
    It equals the token count for plain words and punctuation and exceeds it for tokens that
    join several units (``U.S.`` counts 4, ``John's`` 3 for two tokens).
    """
    return _unit_pattern().subn("", text)[1]


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
