"""Reader for brat standoff annotations: a folder of ``NAME.txt`` texts, each with its
``NAME.ann``, whose text-bound lines ``T1<TAB>TYPE START END<TAB>TEXT`` mark entities by
character offsets. A discontinuous entity (``START END;START END``) cannot be one span: it is
counted and not kept. Relations, events, attributes and notes are counted as ignored."""

from collections.abc import Iterator
from pathlib import Path

from ner.common.errors import InputError, MissingFileError
from ner.data.spans import BadField, BadRecord, RawSpan, SpanFormat, SpanRecord, record_of


def read_brat(folder: Path, fmt: SpanFormat) -> Iterator[SpanRecord | BadRecord]:
    """The documents of a brat folder, one record (or error) per ``.ann`` file, by name."""
    if not folder.is_dir():
        raise InputError(f"{folder}: brat annotations are a folder of .txt and .ann files")
    documents = sorted(folder.glob("*.ann"))
    if not documents:
        raise MissingFileError(f"{folder}: no .ann files")
    for ann in documents:
        text_file = ann.with_suffix(".txt")
        if not text_file.is_file():
            raise MissingFileError(f"{ann}: no {text_file.name} beside it")
        text = text_file.read_text(encoding=fmt.encoding)
        yield record_of(str(ann), lambda ann=ann, text=text: _document(ann, text, fmt.encoding))


def _document(ann: Path, text: str, encoding: str) -> SpanRecord:
    spans, discontinuous, ignored = [], 0, 0
    for number, line in enumerate(ann.read_text(encoding=encoding).splitlines(), 1):
        if not line.strip():
            continue
        if not line.startswith("T"):
            ignored += 1
            continue
        parts = line.split("\t")
        if len(parts) != 3 or len(parts[1].split(" ")) < 3:
            raise BadField(f"line {number}", f"expected 'T<n>\\tTYPE START END\\tTEXT': {line!r}")
        label, *locations = parts[1].split(" ")
        if ";" in " ".join(locations):
            discontinuous += 1
            continue
        try:
            start, end = (int(value) for value in locations)
        except ValueError:
            raise BadField(
                f"line {number}", f"offsets {' '.join(locations)!r} are not two integers"
            ) from None
        spans.append(RawSpan(start, end, label, f"line {number}", parts[2]))
    return SpanRecord(text, spans, str(ann), discontinuous=discontinuous, ignored=ignored)
