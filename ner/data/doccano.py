"""Reader for doccano's JSONL export of sequence labeling projects: one object per line with
``text`` and ``label``, a list of ``[start, end, type]`` (character offsets), or, as newer
versions write it, ``entities``, a list of ``{"start_offset", "end_offset", "label"}``."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def read_doccano(path: Path, fmt: SpanFormat) -> Iterator[SpanRecord | BadRecord]:
    """The lines of a doccano JSONL export, one record (or error) per line."""
    return jsonl_records(path, fmt.encoding, _line)


def _line(value: Any, where: str) -> SpanRecord:
    text = required(value, "text", str, "text")
    if "entities" in value:
        spans = [
            RawSpan(
                *offsets(
                    required(entity, "start_offset", int, f"entities[{n}].start_offset"),
                    required(entity, "end_offset", int, f"entities[{n}].end_offset"),
                    f"entities[{n}]",
                ),
                required(entity, "label", str, f"entities[{n}].label"),
                f"entities[{n}]",
            )
            for n, entity in enumerate(required(value, "entities", list, "entities"))
        ]
        return SpanRecord(text, spans, where)
    spans = []
    for n, item in enumerate(required(value, "label", list, "label")):
        if not isinstance(item, list) or len(item) != 3 or not isinstance(item[2], str):
            raise BadField(f"label[{n}]", f"expected [start, end, type], got {item!r:.60}")
        spans.append(RawSpan(*offsets(item[0], item[1], f"label[{n}]"), item[2], f"label[{n}]"))
    return SpanRecord(text, spans, where)
