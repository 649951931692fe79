"""Named raw-text sources for biLM pretraining, read into tokenized sentences.

Each source is fetched from its public URL through `fetch` (with the mirror overrides
`NER_REUTERS_URL` and `NER_NLTK_DATA_URL`), and yields sentences as lists of CoNLL-style tokens:
raw text goes through `ner.data.tokenize`; corpora that are already tokenized are read as tokens.
"""

from __future__ import annotations

import html
import re
import tarfile
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ner.common.downloads import fetch, nltk_corpus_url, reuters_url
from ner.common.errors import InputError
from ner.data.tokenize import split_sentences, tokenize

Sentence = list[str]

# Brown and the Penn Treebank write opening/closing double quotes as `` and ''; CoNLL writes ".
_PTB_QUOTES = {"``": '"', "''": '"'}
_REUTERS_BODY = re.compile(r"<BODY>(.*?)</BODY>", re.DOTALL)
# Control characters that the SGML writes as numeric entities (&#2; &#3; &#5; ...).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_REUTERS_SIGNATURE = re.compile(r"\s*\bReuter\s*$")
_START_MARKER = re.compile(r"^\.START\s*$", re.MULTILINE)


def decode_text(data: bytes) -> str:
    """UTF-8, else Latin-1 (the 1987-2000 corpora mix both; Latin-1 never fails)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def text_sentences(text: str) -> Iterator[Sentence]:
    """Sentence-split and tokenize raw text, one paragraph (blank-line separated) at a time."""
    for paragraph in re.split(r"\n\s*\n", text):
        flat = " ".join(paragraph.split())
        for start, end in split_sentences(flat):
            tokens = [token.text for token in tokenize(flat[start:end])]
            if tokens:
                yield tokens


def line_text_sentences(text: str) -> Iterator[Sentence]:
    """Like `text_sentences` but every non-empty line is its own paragraph (lists, chat logs)."""
    for line in text.splitlines():
        yield from text_sentences(line)


def reuters_bodies(archive: Path) -> Iterator[str]:
    """The article bodies of Reuters-21578 (`reut2-*.sgm` in the tar.gz), without the signature."""
    with tarfile.open(archive, "r:gz") as tar:
        members = sorted(
            (m for m in tar.getmembers() if re.fullmatch(r"(.*/)?reut2-\d+\.sgm", m.name)),
            key=lambda m: m.name,
        )
        if not members:
            raise InputError(f"{archive}: no reut2-*.sgm files; is this the Reuters-21578 archive?")
        for member in members:
            handle = tar.extractfile(member)
            assert handle is not None  # regular files only (filtered by name)
            sgml = handle.read().decode("latin-1")
            for body in _REUTERS_BODY.findall(sgml):
                text = _CONTROL.sub(" ", html.unescape(body))
                yield _REUTERS_SIGNATURE.sub("", text)


def reuters() -> Iterator[Sentence]:
    """Reuters-21578 article bodies (about 2.6M words of 1987 newswire)."""
    archive = fetch(reuters_url(), desc="Reuters-21578")
    for body in reuters_bodies(archive):
        # Paragraphs are indented by 4 spaces; wrapped lines are not.
        yield from text_sentences(re.sub(r"\n {3,}", "\n\n", body))


def nltk_zip(name: str) -> zipfile.ZipFile:
    """Open `packages/corpora/<name>.zip` of nltk_data (public URL or `NER_NLTK_DATA_URL`)."""
    return zipfile.ZipFile(fetch(nltk_corpus_url(name), desc=f"nltk {name}"))


def _members(archive: zipfile.ZipFile, pattern: str) -> list[str]:
    """Sorted member names matching `pattern` (a full-match regex)."""
    names = sorted(n for n in archive.namelist() if re.fullmatch(pattern, n))
    if not names:
        raise InputError(f"{archive.filename}: no member matches {pattern!r}")
    return names


def nltk_raw(name: str, pattern: str, per_line: bool = False) -> Callable[[], Iterator[Sentence]]:
    """A source reading raw-text members of an nltk_data zip and tokenizing them."""

    def read() -> Iterator[Sentence]:
        with nltk_zip(name) as archive:
            for member in _members(archive, pattern):
                # The treebank's raw files start with a `.START` marker line.
                text = _START_MARKER.sub("", decode_text(archive.read(member)))
                yield from (line_text_sentences if per_line else text_sentences)(text)

    read.__doc__ = f"Raw text of nltk_data `{name}`, tokenized like CoNLL."
    return read


def brown() -> Iterator[Sentence]:
    """The Brown corpus, read as tokens from its `word/tag` files (one sentence per line)."""
    with nltk_zip("brown") as archive:
        for member in _members(archive, r"brown/c[a-r]\d\d"):
            for line in decode_text(archive.read(member)).splitlines():
                tokens = [item.rpartition("/")[0] or item for item in line.split()]
                if tokens:
                    yield [_PTB_QUOTES.get(token, token) for token in tokens]


def movie_reviews() -> Iterator[Sentence]:
    """Movie reviews (lowercased, already tokenized, one sentence per line)."""
    with nltk_zip("movie_reviews") as archive:
        for member in _members(archive, r"movie_reviews/(pos|neg)/.*\.txt"):
            for line in decode_text(archive.read(member)).splitlines():
                if tokens := line.split():
                    yield tokens


def train_split(corpus: str) -> Callable[[], Iterator[Sentence]]:
    """A source reading the tokens of the *train* split of a named corpus of `ner.data`.

    Only the split a tagger trains on: never validation or test (CoNLL-2000's validation is carved
    from the end of its train.txt, so it is left out too), so results on those stay clean.
    """

    def read() -> Iterator[Sentence]:
        from ner.data import load_corpus

        for tokens in load_corpus(corpus)["train"]["tokens"]:
            if tokens:
                yield list(normalized(tokens))

    read.__doc__ = f"The tokens of the {corpus} train split (never validation or test)."
    return read


# The splits we evaluate taggers on, per named corpus of `ner.data` (CoNLL-2000's validation is
# the end of its train.txt). No pretraining sentence may equal one of their sentences.
EVALUATION_SPLITS = {
    "conll2003": ("validation", "test"),
    "conll2000": ("validation", "test"),
    "conll2002_nl": ("validation", "test"),
    "conll2002_es": ("validation", "test"),
}


def normalized(tokens: Sequence[str]) -> tuple[str, ...]:
    """A sentence as compared against evaluation text (PTB quotes read as CoNLL's ")."""
    return tuple(_PTB_QUOTES.get(token, token) for token in tokens)


def evaluation_sentences() -> frozenset[tuple[str, ...]]:
    """Every sentence of `EVALUATION_SPLITS`, normalized: what pretraining text must not contain.

    Besides the evaluation text itself this catches short stock sentences that newswire repeats
    ("He declined to elaborate .", ")", "REUTER"); dropping those costs nothing.
    """
    from ner.data import load_corpus

    found: set[tuple[str, ...]] = set()
    for corpus, splits in EVALUATION_SPLITS.items():
        loaded = load_corpus(corpus)
        for split in splits:
            found.update(normalized(tokens) for tokens in loaded[split]["tokens"] if tokens)
    return frozenset(found)


SOURCES: dict[str, Callable[[], Iterator[Sentence]]] = {
    "reuters": reuters,
    "brown": brown,
    "abc": nltk_raw("abc", r"abc/(rural|science)\.txt", per_line=True),
    "treebank": nltk_raw("treebank", r"treebank/raw/wsj_\d+"),
    "state_union": nltk_raw("state_union", r"state_union/.*\.txt"),
    "webtext": nltk_raw("webtext", r"webtext/.*\.txt", per_line=True),
    "movie_reviews": movie_reviews,
    "inaugural": nltk_raw("inaugural", r"inaugural/.*\.txt"),
    "conll2000_train": train_split("conll2000"),
    "conll2003_train": train_split("conll2003"),
}
