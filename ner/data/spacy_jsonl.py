"""Reader for spaCy-style JSON Lines (as Prodigy and ``Doc.to_json`` write them): one object per
line with ``text`` and ``spans`` or ``ents``, a list of ``{"start", "end", "label"}`` (character
offsets). spaCy's binary ``.spacy`` files (DocBin) are not read: they need spaCy itself."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ner.common.errors import InputError
from ner.data.spans import (
    BadField,
    BadRecord,
    RawSpan,
    SpanFormat,
    SpanRecord,
    jsonl_records,
    offsets,
    required,
)


def read_spacy_jsonl(path: Path, fmt: SpanFormat) -> Iterator[SpanRecord | BadRecord]:
    """The lines of a spaCy JSONL file, one record (or error) per line."""
    if path.suffix == ".spacy":
        raise InputError(f"{path}: .spacy (DocBin) files need spaCy; write JSON Lines instead")
    return jsonl_records(path, fmt.encoding, _line)


def _line(value: Any, where: str) -> SpanRecord:
    text = required(value, "text", str, "text")
    key = "spans" if isinstance(value, dict) and "spans" in value else "ents"
    spans = []
    for n, span in enumerate(required(value, key, list, key)):
        name = f"{key}[{n}]"
        if not isinstance(span, dict):
            raise BadField(name, f"expected {{start, end, label}}, got {span!r:.60}")
        start, end = offsets(span.get("start"), span.get("end"), name)
        spans.append(RawSpan(start, end, required(span, "label", str, f"{name}.label"), name))
    return SpanRecord(text, spans, where)
