"""Chunk tag schemes (IOB1, IOB2, BIOES): detection, validation, conversion and lenient repair.

Every scheme is a one-to-one encoding of a set of non-overlapping typed spans, so conversion goes
through spans: decode in the source scheme, encode in the target one. That makes conversions
round-trip exactly on valid input.

- IOB1 (original CoNLL-2003 files): a chunk starts with ``I-X``; ``B-X`` only marks a chunk that
  directly follows another chunk of the same type.
- IOB2 (a.k.a. BIO; CoNLL-2000/2002, HF ``conll2003``): every chunk starts with ``B-X``.
- BIOES (a.k.a. BIOUL/BILOU with other letters): ``B-X I-X* E-X`` or ``S-X`` for a single token.

Tags are ``"O"`` or ``"<prefix>-<type>"``; the type may itself contain hyphens.
"""

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from ner.common.errors import NerError

SCHEMES = ("iob1", "iob2", "bioes")
OUTSIDE = "O"
_PREFIXES = {"iob1": "BI", "iob2": "BI", "bioes": "BIES"}


class TagSchemeError(NerError, ValueError):
    """A tag or tag sequence that the scheme does not allow; `position` is the token index."""

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position


class Span(NamedTuple):
    """A typed chunk covering tokens ``start`` (inclusive) to ``end`` (exclusive)."""

    label: str
    start: int
    end: int


def split_tag(tag: str, scheme: str | None = None) -> tuple[str, str]:
    """``"B-PER"`` -> ``("B", "PER")``; ``"O"`` -> ``("O", "")``. Raises on an unknown prefix."""
    if tag == OUTSIDE:
        return OUTSIDE, ""
    prefix, sep, label = tag.partition("-")
    allowed = _PREFIXES[scheme] if scheme else "BIES"
    if not sep or not label or len(prefix) != 1 or prefix not in allowed:
        schemes = scheme.upper() if scheme else "IOB1/IOB2/BIOES"
        expected = ", ".join(f"{p}-<type>" for p in allowed)
        raise TagSchemeError(f"unknown tag {tag!r}: expected 'O' or one of {expected} ({schemes})")
    return prefix, label


def _check_scheme(scheme: str) -> str:
    name = scheme.lower()
    if name not in SCHEMES:
        raise ValueError(f"unknown tag scheme {scheme!r}; expected one of {', '.join(SCHEMES)}")
    return name


def _parse(tags: Sequence[str], scheme: str) -> list[tuple[str, str]]:
    parsed = []
    for i, tag in enumerate(tags):
        try:
            parsed.append(split_tag(tag, scheme))
        except TagSchemeError as error:
            raise TagSchemeError(str(error), i) from None
    return parsed


def tags_to_spans(tags: Sequence[str], scheme: str, *, lenient: bool = False) -> list[Span]:
    """Decode a tag sequence into spans. Strict mode raises `TagSchemeError` at the first tag the
    scheme does not allow; lenient mode repairs it (a stray ``I-``/``E-`` opens a chunk, an
    unfinished BIOES chunk is closed) the way most taggers decode their own output."""
    scheme = _check_scheme(scheme)
    spans: list[Span] = []
    open_label, open_start = "", 0  # the chunk being read; "" when outside

    def close(end: int) -> None:
        nonlocal open_label
        if open_label:
            spans.append(Span(open_label, open_start, end))
        open_label = ""

    def fail(i: int, why: str) -> None:
        if not lenient:
            previous = f"after {tags[i - 1]!r}" if i else "at the start of the sentence"
            raise TagSchemeError(
                f"tag {tags[i]!r} {previous} is not allowed in {scheme.upper()}: {why}", i
            )

    for i, (prefix, label) in enumerate(_parse(tags, scheme)):
        continues = open_label == label
        if prefix == OUTSIDE:
            if scheme == "bioes" and open_label:
                fail(i, f"the {open_label} chunk was not closed with E-{open_label}")
            close(i)
        else:
            if scheme == "iob1" and prefix == "B" and not continues:
                fail(i, f"B-{label} may only follow a {label} chunk (IOB1 starts chunks with I-)")
            if scheme == "iob2" and prefix == "I" and not continues:
                fail(i, f"a chunk must start with B-{label} (IOB2)")
            if scheme == "bioes" and prefix in "BS" and open_label:
                fail(i, f"the {open_label} chunk was not closed with E-{open_label}")
            if scheme == "bioes" and prefix in "IE" and not continues:
                fail(i, f"a chunk must start with B-{label} or be S-{label} (BIOES)")
            # B and S always open a chunk; I and E open one only in IOB1 or when repairing.
            if prefix in "BS" or not continues:
                close(i)
                open_label, open_start = label, i
            if prefix in "ES":
                close(i + 1)
    if scheme == "bioes" and open_label and not lenient:
        raise TagSchemeError(
            f"the sentence ends inside a {open_label} chunk: its last tag {tags[-1]!r} should be "
            f"E-{open_label} or S-{open_label} (BIOES)",
            len(tags) - 1,
        )
    close(len(tags))
    return spans


def continues_chunk(previous: str, current: str) -> bool:
    """Whether tag `current`, right after tag `previous`, extends `previous`'s chunk as
    `tags_to_spans(lenient=True)` reads them: an ``I-``/``E-`` tag of the type of a ``B-``/``I-``
    tag. Any other tag but ``O`` opens a chunk."""
    (previous_prefix, previous_type), (prefix, kind) = split_tag(previous), split_tag(current)
    return previous_prefix in ("B", "I") and prefix in ("I", "E") and previous_type == kind


def spans_to_tags(spans: Iterable[Span], length: int, scheme: str) -> list[str]:
    """Encode non-overlapping spans as ``length`` tags in `scheme`."""
    scheme = _check_scheme(scheme)
    tags = [OUTSIDE] * length
    previous: Span | None = None
    for span in sorted(spans, key=lambda s: s.start):
        label, start, end = span
        if start < 0 or end > length or start >= end or (previous and start < previous.end):
            raise ValueError(f"span {span} overlaps another or lies outside 0..{length}")
        tags[start:end] = [f"I-{label}"] * (end - start)
        follows_same = previous is not None and (previous.label, previous.end) == (label, start)
        if (
            scheme == "iob2"
            or (scheme == "bioes" and end - start > 1)
            or (scheme == "iob1" and follows_same)
        ):
            tags[start] = f"B-{label}"
        if scheme == "bioes":
            tags[end - 1] = f"E-{label}" if end - start > 1 else f"S-{label}"
        previous = span
    return tags


def convert_tags(
    tags: Sequence[str], source: str, target: str, *, lenient: bool = False
) -> list[str]:
    """Re-encode a valid `source`-scheme tag sequence in the `target` scheme (exact, reversible).
    `lenient` repairs an invalid sequence first (see `tags_to_spans`): for a model's own
    predictions, which unconstrained decoding does not keep valid."""
    return spans_to_tags(tags_to_spans(tags, source, lenient=lenient), len(tags), target)


def repair_tags(tags: Sequence[str], scheme: str) -> tuple[list[str], int]:
    """The nearest valid sequence in `scheme` (see `tags_to_spans(lenient=True)`) and how many
    tags changed. Unknown prefixes still raise: there is no safe guess for them."""
    repaired = spans_to_tags(tags_to_spans(tags, scheme, lenient=True), len(tags), scheme)
    return repaired, sum(a != b for a, b in zip(tags, repaired, strict=True))


def _openings(tags: Sequence[str], opened: dict[str, int]) -> None:
    """Count into `opened` the chunks of `tags` that ``B-`` and ``I-`` open, and the ``E-`` and
    ``S-`` tags (as ``ES``)."""
    previous_label = ""
    for tag in tags:
        prefix, label = split_tag(tag)
        if prefix in "ES":
            opened["ES"] += 1
            return
        if prefix in "BI" and label != previous_label:
            opened[prefix] += 1
        previous_label = label


class SchemeSurvey:
    """`guess_scheme` and `detect_scheme` reading a corpus one sequence at a time (`add`), so a
    corpus of any size is read once in small memory: it counts how chunks open and keeps each
    scheme's first error (after one, that scheme is no longer checked)."""

    def __init__(self) -> None:
        self.opened = {"B": 0, "I": 0, "ES": 0}
        self.errors: dict[str, TagSchemeError] = {}
        self.sequences = 0

    def add(self, tags: Sequence[str], *, validate: bool = True) -> None:
        if not self.opened["ES"]:
            _openings(tags, self.opened)
        for scheme in SCHEMES if validate else ():
            if scheme not in self.errors:
                try:
                    tags_to_spans(tags, scheme)
                except TagSchemeError as error:
                    self.errors[scheme] = TagSchemeError(
                        f"sequence {self.sequences}, token {error.position}: {error}",
                        error.position,
                    )
        self.sequences += 1

    def guess(self) -> str:
        """See `guess_scheme`."""
        if self.opened["ES"]:
            return "bioes"
        return "iob1" if self.opened["I"] > self.opened["B"] else "iob2"

    def scheme(self) -> str:
        """See `detect_scheme`."""
        scheme = self.guess()
        if scheme in self.errors:
            raise self.errors[scheme]
        return scheme


def guess_scheme(sequences: Iterable[Sequence[str]]) -> str:
    """The scheme a corpus most likely uses, without validating it.

    Any ``E-``/``S-`` tag means BIOES. Otherwise, chunks opened by ``I-`` (after ``O``, another type
    or at the start) mean IOB1 and chunks opened by ``B-`` mean IOB2; when both occur the more
    frequent wins, so the other kind shows up as the errors. No chunks at all reads as IOB2.
    """
    survey = SchemeSurvey()
    for tags in sequences:
        survey.add(tags, validate=False)
        if survey.opened["ES"]:
            break
    return survey.guess()


def detect_scheme(sequences: Iterable[Sequence[str]]) -> str:
    """The scheme ("iob1" | "iob2" | "bioes") of a corpus; raises `TagSchemeError` naming the
    sequence and position of the first tag that the detected scheme does not allow."""
    survey = SchemeSurvey()
    for tags in sequences:
        survey.add(tags)
    return survey.scheme()
