"""Label Studio's ML-backend protocol, which ``ner-serve`` speaks under `PREFIX`: a project
connected to the model URL ``http://HOST:PORT/label-studio`` asks

- ``GET /label-studio/health``: ``{"status": "UP", "model_class": "ner-serve", "model_version"}``;
- ``POST /label-studio/setup`` with the project's labeling config as ``schema``, checked for a
  <Labels> tag whose ``toName`` is a <Text> tag reading a task field: ``{"model_version"}``;
- ``POST /label-studio/predict`` with ``tasks`` and the ``label_config``: each task's text (the
  field the <Text> tag reads, ``value="$text"``) is tagged as a ``/predict`` text is, and the
  answer is ``{"results": [one prediction per task, in order], "model_version"}``, each
  prediction `ner.model.pre_annotations.label_studio_prediction` under the config's tag names.

A body that does not fit gets a 422 naming the field, as on ``/predict``; so do /setup and
/predict for a model of per-token labels, which has no spans to pre-annotate.
"""

from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

from fastapi import HTTPException

from ner.data.labels import TOKENS
from ner.model.pre_annotations import label_studio_prediction
from ner.model.results import TaggedText

PREFIX = "/label-studio"
MODEL_CLASS = "ner-serve"


@dataclass(frozen=True)
class LabelingNames:
    """What a labeling config names: its <Labels> tag (a result's ``from_name``), the <Text>
    tag that it labels (``to_name``) and the task data field that <Text> reads."""

    from_name: str
    to_name: str
    data_key: str


def labeling_names(config: Any, field: str) -> LabelingNames:
    """The names of the first <Labels> tag of the labeling `config` (the XML of the body's
    `field`) whose ``toName`` is a <Text> tag reading a task field; HTTPException 422 without
    one."""
    if not isinstance(config, str):
        raise HTTPException(422, f"{field}: expected the project's labeling config (XML text)")
    try:
        root = ElementTree.fromstring(config)
    except ElementTree.ParseError as error:
        raise HTTPException(422, f"{field} is not XML: {error}") from None
    texts = {text.get("name"): text for text in root.iter("Text")}
    for labels in root.iter("Labels"):
        text = texts.get(labels.get("toName"))
        value = "" if text is None else text.get("value", "")
        if value.startswith("$") and len(value) > 1:
            return LabelingNames(labels.get("name", ""), text.get("name", ""), value[1:])  # type: ignore[union-attr]
    raise HTTPException(
        422,
        f'{field} has no <Labels> tag whose toName names a <Text> tag with value="$field" '
        '(e.g. <Labels name="label" toName="text"> and <Text name="text" value="$text"/>)',
    )


def task_texts(body: Any) -> tuple[list[str], LabelingNames]:
    """The texts of a /predict body's ``tasks``, in order, and its labeling config's names;
    HTTPException 422 naming the field that does not fit."""
    if not isinstance(body, dict) or not isinstance(body.get("tasks"), list):
        raise HTTPException(422, "tasks: expected a list of Label Studio tasks")
    names = labeling_names(body.get("label_config"), "label_config")
    texts = []
    for index, task in enumerate(body["tasks"]):
        data = task.get("data") if isinstance(task, dict) else None
        text = data.get(names.data_key) if isinstance(data, dict) else None
        if not isinstance(text, str):
            raise HTTPException(
                422,
                f"tasks[{index}].data.{names.data_key}: expected a text, the field that the "
                "labeling config's <Text> tag reads",
            )
        texts.append(text)
    return texts, names


def check_spans(label_kind: str) -> None:
    """HTTPException 422 for a model of per-token labels (`label_kind` ``tokens``)."""
    if label_kind == TOKENS:
        raise HTTPException(
            422, "this model tags per-token labels (e.g. part of speech): it has no entity "
            "spans to pre-annotate",
        )  # fmt: skip


def checked_setup(body: Any) -> None:
    """Check a /setup body: its ``schema`` is a labeling config we can pre-annotate."""
    labeling_names(body.get("schema") if isinstance(body, dict) else None, "schema")


def predictions(
    results: list[TaggedText], names: LabelingNames, model_version: str | None
) -> dict[str, Any]:
    """The /predict answer: one prediction per task, in order, under the config's tag names."""
    return {
        "results": [
            label_studio_prediction(result, model_version, names.from_name, names.to_name)
            for result in results
        ],
        "model_version": model_version,
    }


def health(model_version: str | None) -> dict[str, Any]:
    """The /health answer."""
    return {"status": "UP", "model_class": MODEL_CLASS, "model_version": model_version}
