"""Reader for Label Studio's JSON export: a list of tasks, each with ``data.text`` and
``annotations``, whose ``result`` holds ``labels`` results with ``value.start``, ``value.end``
(character offsets), ``value.text`` and ``value.labels``.

A task with several annotations is read from one: the first that is not cancelled
(``was_cancelled``), or the one whose ``completed_by`` (an id, or an object with an ``email``)
is `SpanFormat.annotator`. A task without such an annotation is an error (a malformed record).
Results of other types (choices, relations) are counted as ignored annotations.
"""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ner.common.errors import InputError
from ner.data.spans import BadField, BadRecord, RawSpan, SpanFormat, SpanRecord, record_of, required


def read_label_studio(path: Path, fmt: SpanFormat) -> Iterator[SpanRecord | BadRecord]:
    """The tasks of a Label Studio JSON export, one record (or error) per task."""
    try:
        tasks = json.loads(path.read_text(encoding=fmt.encoding))
    except json.JSONDecodeError as error:
        raise InputError(f"{path}:{error.lineno}: not JSON ({error.msg})") from None
    if not isinstance(tasks, list):
        raise InputError(f"{path}: expected Label Studio's JSON export, a list of tasks")
    for number, task in enumerate(tasks, 1):
        where = f"{path}: task {number}"
        yield record_of(where, lambda task=task, where=where: _task(task, where, fmt.annotator))


def _task(task: Any, where: str, annotator: str | None) -> SpanRecord:
    text = required(required(task, "data", dict, "data"), "text", str, "data.text")
    index, annotation = _annotation(required(task, "annotations", list, "annotations"), annotator)
    name = f"annotations[{index}].result"
    spans, ignored = [], 0
    for number, result in enumerate(required(annotation, "result", list, name)):
        field = f"{name}[{number}]"
        if required(result, "type", str, f"{field}.type") != "labels":
            ignored += 1
            continue
        value = required(result, "value", dict, f"{field}.value")
        labels = required(value, "labels", list, f"{field}.value.labels")
        if len(labels) != 1 or not isinstance(labels[0], str):
            raise BadField(f"{field}.value.labels", f"expected one label, got {labels!r:.60}")
        start = required(value, "start", int, f"{field}.value.start")
        end = required(value, "end", int, f"{field}.value.end")
        quoted = value.get("text")
        spans.append(RawSpan(start, end, labels[0], f"{field}.value", quoted))
    return SpanRecord(text, spans, where, ignored=ignored)


def _annotation(annotations: list, annotator: str | None) -> tuple[int, dict]:
    """The annotation to read and its index: `annotator`'s, or the first not cancelled."""
    for index, annotation in enumerate(annotations):
        if not isinstance(annotation, dict) or annotation.get("was_cancelled"):
            continue
        author = annotation.get("completed_by")
        names = (
            {str(author)}
            if not isinstance(author, dict)
            else {
                str(author.get("id")),
                str(author.get("email")),
            }
        )
        if annotator is None or str(annotator) in names:
            return index, annotation
    who = f"by annotator {annotator!r}" if annotator is not None else "not cancelled"
    raise BadField("annotations", f"no annotation {who} among {len(annotations)}")
