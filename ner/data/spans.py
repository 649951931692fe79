"""Character-offset span annotations (an annotation tool's export) as tagged sentences.

A format reader (`ner.data.label_studio`, `doccano`, `brat`, `spacy_jsonl`) yields one
`SpanRecord` per text: the text and its spans as read. `read_span_file` tokenizes each text with
our tokenizers (`ner.data.tokenize`), aligns the spans to the tokens and writes IOB2 tags, one
`Sentence` per sentence of the text (sentences a span crosses are joined). Nothing disappears
silently: a span outside the text, reversed (or empty), overlapping an earlier one,
discontinuous (brat) or not on token boundaries is counted in a `SpanReport` and logged with its
file and record; a malformed record is an error naming the file, the record and the field
(`skip_bad` skips and counts it instead).
"""

import json
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ner.common.errors import InputError
from ner.data.columns import Sentence
from ner.data.tokenize import Token, check_tokenizer, tokenize, tokenize_sentences

logger = logging.getLogger(__name__)
SPAN_FORMATS = ("label_studio", "doccano", "brat", "spacy")
MISALIGNED = ("error", "snap", "drop")


@dataclass(frozen=True)
class SpanFormat:
    """How span annotations read: the `format` (`SPAN_FORMATS`), the `tokenizer` (``news`` or
    ``social``), what a span off token boundaries becomes (`misaligned`: ``error``, ``snap`` to
    the tokens it touches, or ``drop``), whether a malformed record is skipped and counted
    (`skip_bad`) instead of refused, whose annotation of a Label Studio task is read
    (`annotator`: its ``completed_by`` id or e-mail; None: the first completed one) and the
    files' `encoding`."""

    format: str
    tokenizer: str = "news"
    misaligned: str = "error"
    skip_bad: bool = False
    annotator: str | None = None
    encoding: str = "utf-8"

    def __post_init__(self) -> None:
        if self.format not in SPAN_FORMATS:
            raise InputError(f"format={self.format!r} is not a span format ({SPAN_FORMATS})")
        if self.misaligned not in MISALIGNED:
            raise InputError(
                f"misaligned={self.misaligned!r}; expected one of {', '.join(MISALIGNED)}"
            )
        check_tokenizer(self.tokenizer)


class BadField(InputError):
    """A record's field that cannot be read: `field` names it (``label[2][0]``)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"field {field}: {problem}")
        self.field = field


@dataclass(frozen=True)
class RawSpan:
    """A span as read: characters `start` to `end` (exclusive) labelled `label`; `quoted` is
    the span's text as the file states it (checked against the text), `field` where it is."""

    start: int
    end: int
    label: str
    field: str
    quoted: str | None = None


@dataclass
class SpanRecord:
    """One annotated text and its spans; `where` names the file and record (``export.json:
    record 3``). `discontinuous` and `ignored` count annotations the reader could not keep
    (brat's discontinuous entities; relations, events and attributes)."""

    text: str
    spans: list[RawSpan]
    where: str
    discontinuous: int = 0
    ignored: int = 0


@dataclass
class SpanReport:
    """What aligning one file's spans found: records read and skipped, spans read, kept,
    snapped to tokens, dropped off token boundaries, outside the text, reversed or empty,
    overlapping an earlier span, discontinuous, and other annotations ignored."""

    records: int = 0
    skipped_records: int = 0
    spans: int = 0
    kept: int = 0
    snapped: int = 0
    misaligned_dropped: int = 0
    outside: int = 0
    reversed: int = 0
    overlapping: int = 0
    discontinuous: int = 0
    ignored_annotations: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    def add(self, other: "SpanReport") -> None:
        """Add `other`'s counts to these."""
        for name, value in other.to_dict().items():
            setattr(self, name, getattr(self, name) + value)


class BadRecord(InputError):
    """A malformed record: the message names the file, the record and the field."""


def record_of(where: str, parse: Callable[[], SpanRecord]) -> SpanRecord | BadRecord:
    """`parse()`, or the error naming `where` and the field that a malformed record raised."""
    try:
        return parse()
    except BadField as error:
        return BadRecord(f"{where}: {error}")


def required(mapping: Any, key: str, kind: type | tuple[type, ...], name: str) -> Any:
    """``mapping[key]`` checked to be a `kind`; `name` is the field's full name for errors."""
    if not isinstance(mapping, dict):
        raise BadField(name.rsplit(".", 1)[0], f"expected an object, got {mapping!r:.60}")
    if key not in mapping:
        raise BadField(name, "missing")
    value = mapping[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        expected = (
            kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        )
        raise BadField(name, f"expected {expected}, got {value!r:.60}")
    return value


def offsets(start: Any, end: Any, name: str) -> tuple[int, int]:
    """A span's character offsets, checked to be integers."""
    for value, part in ((start, "start"), (end, "end")):
        if not isinstance(value, int) or isinstance(value, bool):
            raise BadField(name, f"the {part} offset {value!r:.40} is not an integer")
    return start, end


def jsonl_records(
    path: Path, encoding: str, parse: Callable[[Any, str], SpanRecord]
) -> Iterator[SpanRecord | BadRecord]:
    """The records of a JSON Lines file, `parse`d from each non-blank line's value and its
    place (``file: line N``), or the error naming the line (not JSON) and the field."""
    with path.open(encoding=encoding) as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                where = f"{path}: line {number}"
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as error:
                    yield BadRecord(f"{where}: not JSON ({error.msg})")
                    continue
                yield record_of(where, lambda: parse(value, where))  # noqa: B023 (called now)


def read_span_file(
    path: Path, records: Iterable[SpanRecord | BadRecord], fmt: SpanFormat, document: int
) -> tuple[list[Sentence], SpanReport]:
    """The sentences of one file's `records` (document ids from `document` on, one per
    record) and what aligning their spans found. Raises the first malformed record's error
    unless `fmt.skip_bad`, and one for a span off token boundaries (``misaligned=error``)."""
    report = SpanReport()
    sentences: list[Sentence] = []
    for record in records:
        try:
            if isinstance(record, BadRecord):
                raise record
            found, counts = _record_sentences(record, fmt, document)
        except BadRecord as error:
            if not fmt.skip_bad:
                raise InputError(f"{error} (skip_bad=true skips such records)") from None
            logger.warning("skipped: %s", error)
            report.skipped_records += 1
            continue
        report.add(counts)
        sentences += found
        document += 1
    if not sentences:
        raise InputError(f"{path}: no text with tokens (records read: {report.records})")
    return sentences, report


def _record_sentences(
    record: SpanRecord, fmt: SpanFormat, document: int
) -> tuple[list[Sentence], SpanReport]:
    """One record's sentences and counts; a malformed span raises `BadRecord`."""
    counts = SpanReport(
        records=1, discontinuous=record.discontinuous, ignored_annotations=record.ignored
    )
    tokens = tokenize(record.text, fmt.tokenizer)
    try:
        tags = record_tags(record, tokens, fmt, counts)
    except BadField as error:
        raise BadRecord(f"{record.where}: {error}") from None
    line = _record_number(record.where)
    sentences = []
    for first, last in _sentence_bounds(record.text, tags, fmt.tokenizer):
        fields = {"tokens": [t.text for t in tokens[first:last]], "tags": tags[first:last]}
        sentences.append(Sentence(fields, document, [line] * (last - first)))
    return sentences, counts


def _record_number(where: str) -> int:
    """The number ending `where` (``line 3``, ``record 3``): what errors about a tag name."""
    tail = where.rsplit(" ", 1)[-1]
    return int(tail) if tail.isdigit() else 1


def record_tags(
    record: SpanRecord, tokens: list[Token], fmt: SpanFormat, report: SpanReport
) -> list[str]:
    """IOB2 tags for `tokens` from `record`'s spans; counts and logs the spans it cannot keep.
    Raises `BadField` for a span whose quoted text differs from the text it points at."""
    starts = {t.start: i for i, t in enumerate(tokens)}
    ends = {t.end: i + 1 for i, t in enumerate(tokens)}
    tags = ["O"] * len(tokens)
    taken: list[tuple[int, int, RawSpan]] = []
    for span in sorted(record.spans, key=lambda s: (s.start, -s.end)):
        report.spans += 1
        where = f"{record.where}: {span.field} [{span.start}, {span.end}) {span.label}"
        if span.start < 0 or span.end > len(record.text):
            report.outside += 1
            logger.warning("%s: outside the text (%d characters)", where, len(record.text))
            continue
        if span.start >= span.end:
            report.reversed += 1
            logger.warning("%s: reversed or empty", where)
            continue
        covered = record.text[span.start : span.end]
        if span.quoted is not None and span.quoted != covered:
            raise BadField(span.field, f"its text {span.quoted!r:.40} is {covered!r:.40} there")
        bounds = _token_bounds(span, starts, ends, tokens, fmt, report, where)
        if bounds is None:
            continue
        clash = next((kept for a, b, kept in taken if bounds[0] < b and a < bounds[1]), None)
        if clash is not None:
            report.overlapping += 1
            logger.warning(
                "%s: overlaps %s [%d, %d), kept", where, clash.label, clash.start, clash.end
            )
            continue
        taken.append((*bounds, span))
        report.kept += 1
        tags[bounds[0] : bounds[1]] = [f"B-{span.label}"] + [f"I-{span.label}"] * (
            bounds[1] - bounds[0] - 1
        )
    return tags


def _token_bounds(
    span: RawSpan,
    starts: dict[int, int],
    ends: dict[int, int],
    tokens: list[Token],
    fmt: SpanFormat,
    report: SpanReport,
    where: str,
) -> tuple[int, int] | None:
    """The tokens `span` covers (first, last exclusive), snapped or None (dropped) when it is
    off token boundaries and `fmt.misaligned` says so."""
    if span.start in starts and span.end in ends:
        return starts[span.start], ends[span.end]
    touched = [i for i, t in enumerate(tokens) if t.start < span.end and span.start < t.end]
    texts = " ".join(repr(tokens[i].text) for i in touched) or "no token"
    if fmt.misaligned == "error":
        raise InputError(
            f"{where}: not on token boundaries (it touches {texts}); misaligned=snap widens "
            "it to those tokens, misaligned=drop drops it (both count it)"
        )
    if fmt.misaligned == "drop" or not touched:
        report.misaligned_dropped += 1
        logger.warning("%s: not on token boundaries (%s), dropped", where, texts)
        return None
    report.snapped += 1
    logger.warning("%s: not on token boundaries, snapped to %s", where, texts)
    return touched[0], touched[-1] + 1


def _sentence_bounds(text: str, tags: list[str], tokenizer: str) -> list[tuple[int, int]]:
    """Token ranges of the sentences of `text`, joined where an entity crosses a boundary."""
    bounds: list[tuple[int, int]] = []
    first = 0
    for sentence in tokenize_sentences(text, tokenizer):
        last = first + len(sentence)
        if bounds and tags[first].startswith("I-"):
            bounds[-1] = (bounds[-1][0], last)
        else:
            bounds.append((first, last))
        first = last
    return bounds


def merged_reports(reports: Iterable[dict[str, int]]) -> dict[str, int]:
    """The counts of several files' reports (`SpanReport.to_dict`) added up."""
    total: dict[str, int] = {}
    for report in reports:
        for key, value in report.items():
            total[key] = total.get(key, 0) + value
    return total
