"""A tagged text as an annotation tool's pre-annotation: a Label Studio task with a prediction,
or a doccano JSONL record, built from the one result type (`TaggedText`).

Label Studio (``ner-predict --format label_studio``, and ``ner-serve``'s Label Studio ML
backend): each entity becomes a ``labels`` result with its character offsets, text and type and
its confidence (P(this exact span has this type | text) under the CRF) as its ``score``; the
prediction's own ``score`` is its least sure entity's confidence (a text without entities has
none), so sorting tasks by prediction score puts the most doubtful first. doccano: ``label``
holds ``[start, end, type]`` per entity. Both read back with `ner.data.label_studio` and
`ner.data.doccano` as the same spans.
"""

from typing import Any

from ner.model.results import TaggedText

# The names of a Label Studio labeling config's <Labels> (from_name) and <Text> (to_name) tags,
# and the task data key that <Text> reads (value="$text"), unless the config says otherwise.
FROM_NAME = "label"
TO_NAME = "text"
TEXT_KEY = "text"


def label_studio_prediction(
    result: TaggedText,
    model_version: str | None,
    from_name: str = FROM_NAME,
    to_name: str = TO_NAME,
) -> dict[str, Any]:
    """One Label Studio prediction of `result`: a ``labels`` result per entity with its
    confidence as ``score``, the least sure entity's confidence as the prediction's ``score``
    (absent without entities) and the model's version.

    # Parameters
    result: the tagged text.
    model_version: the model's version (`ner.model.archive.model_version`), or None.
    from_name: the name of the labeling config's <Labels> tag.
    to_name: the name of its <Text> tag.
    """
    regions = [
        {
            "id": f"ner-{index}",
            "from_name": from_name,
            "to_name": to_name,
            "type": "labels",
            "value": {
                "start": entity.start,
                "end": entity.end,
                "text": entity.text,
                "labels": [entity.type],
            },
            "score": round(entity.confidence, 6),
        }
        for index, entity in enumerate(result.entities)
    ]
    prediction: dict[str, Any] = {"model_version": model_version, "result": regions}
    if regions:
        prediction["score"] = min(region["score"] for region in regions)
    return prediction


def label_studio_task(
    result: TaggedText, fields: dict[str, Any] | None, model_version: str | None
) -> dict[str, Any]:
    """A Label Studio task to import: ``data`` holds the text (under ``text``) and the input
    record's other `fields`; ``predictions`` holds `label_studio_prediction`."""
    return {
        "data": {TEXT_KEY: result.text, **(fields or {})},
        "predictions": [label_studio_prediction(result, model_version)],
    }


def doccano_record(result: TaggedText, fields: dict[str, Any] | None) -> dict[str, Any]:
    """A line of doccano's JSONL import: ``text``, ``label`` as ``[start, end, type]`` per
    entity, and the input record's other `fields`."""
    spans = [[entity.start, entity.end, entity.type] for entity in result.entities]
    return {"text": result.text, "label": spans, **(fields or {})}
