"""``ner-predict --format label_studio`` and ``--format doccano``: the entities of the jsonl
output as an annotation tool's pre-annotations, read back by our own readers of those tools'
files as the same spans (`ner.model.pre_annotations`, `ner.data.label_studio`, `doccano`)."""

import hashlib
import json
from pathlib import Path

import pytest
from tiny_tagger import one_thread, saved_model

from ner.cli.predict import main
from ner.data.doccano import read_doccano
from ner.data.label_studio import read_label_studio
from ner.data.spans import SpanFormat, SpanRecord

TEXTS = [
    "Peter Smith lives in Rome. Anna went to Berlin!",
    "",
    "John Smith went to Paris .",
    "nothing to see here",
]
CONLL = "Peter B-PER\nSmith I-PER\nlives O\nin O\nRome B-LOC\n\nAnna B-PER\nwent O\n"


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread():
        yield


def predict(*args: str) -> int:
    return main([str(saved_model()), *args, "--threads", "1"])


def tagged(tmp_path: Path, capsys, output_format: str, *args: str) -> tuple[str, str]:
    """The output of the input file ``in`` in `output_format` (written to a file), and stderr."""
    output = tmp_path / f"out.{output_format}"
    status = predict(str(tmp_path / "in"), "-o", str(output), "--format", output_format, *args)
    err = capsys.readouterr().err
    assert status == 0, err
    return output.read_text(encoding="utf-8"), err


def jsonl_spans(text: str) -> list[list[tuple[int, int, str, float]]]:
    """Each jsonl record's entities: (start, end, type, confidence)."""
    records = [json.loads(line) for line in text.splitlines()]
    return [
        [(e["start"], e["end"], e["type"], e["confidence"]) for e in r["entities"]] for r in records
    ]


def read_back(records: list) -> list[list[tuple[int, int, str]]]:
    spans = []
    for record in records:
        assert isinstance(record, SpanRecord), record
        spans.append([(span.start, span.end, span.label) for span in record.spans])
    return spans


def test_label_studio_tasks_carry_the_entities_as_scored_predictions(tmp_path, capsys):
    (tmp_path / "in").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    expected = jsonl_spans(tagged(tmp_path, capsys, "jsonl")[0])
    tasks = json.loads(tagged(tmp_path, capsys, "label_studio")[0])
    assert [task["data"] for task in tasks] == [{"text": text} for text in TEXTS]
    manifest = (saved_model() / "archive.json").read_bytes()
    version = f"{saved_model().parent.name}-{hashlib.sha256(manifest).hexdigest()[:12]}"
    for task, spans in zip(tasks, expected, strict=True):
        (prediction,) = task["predictions"]
        assert prediction["model_version"] == version
        results = prediction["result"]
        assert [(r["from_name"], r["to_name"], r["type"]) for r in results] == [
            ("label", "text", "labels")
        ] * len(spans)
        found = [(r["value"]["start"], r["value"]["end"], *r["value"]["labels"], r["score"])
                 for r in results]  # fmt: skip
        assert found == spans
        text = task["data"]["text"]
        assert all(
            text[r["value"]["start"] : r["value"]["end"]] == r["value"]["text"] for r in results
        )
        if spans:  # as sure as its least sure entity
            assert prediction["score"] == min(span[3] for span in spans)
        else:
            assert "score" not in prediction
    assert expected[0] and not expected[1]

    # Accepted in Label Studio, the predictions are annotations: our reader gets the same spans.
    for task in tasks:
        task["annotations"] = [{"result": task.pop("predictions")[0]["result"]}]
    exported = tmp_path / "export.json"
    exported.write_text(json.dumps(tasks), encoding="utf-8")
    spans = read_back(list(read_label_studio(exported, SpanFormat("label_studio"))))
    assert spans == [[span[:3] for span in record] for record in expected]


def test_doccano_lines_read_back_as_the_same_spans(tmp_path, capsys):
    (tmp_path / "in").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    expected = jsonl_spans(tagged(tmp_path, capsys, "jsonl")[0])
    out, _ = tagged(tmp_path, capsys, "doccano")
    records = [json.loads(line) for line in out.splitlines()]
    assert [record["text"] for record in records] == TEXTS
    spans = read_back(list(read_doccano(tmp_path / "out.doccano", SpanFormat("doccano"))))
    assert spans == [[span[:3] for span in record] for record in expected]
    assert records[0]["label"] == [list(span) for span in spans[0]]


def test_json_input_fields_ride_along_unless_they_clash(tmp_path, capsys):
    lines = [
        {"id": 7, "text": TEXTS[0]},
        {"id": 8, "text": TEXTS[2], "label": "gold"},  # doccano's own key: refused there
    ]
    (tmp_path / "in").write_text("".join(json.dumps(line) + "\n" for line in lines))
    tasks = json.loads(tagged(tmp_path, capsys, "label_studio", "--input-format", "jsonl")[0])
    assert [task["data"] for task in tasks] == lines
    out, err = tagged(tmp_path, capsys, "doccano", "--input-format", "jsonl")
    assert "line 2: its field 'label' is a key of the output record" in err
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert record["id"] == 7 and record["text"] == TEXTS[0] and record["label"]


def test_conll_input_and_empty_input(tmp_path, capsys):
    (tmp_path / "in").write_text(CONLL)
    tasks = json.loads(tagged(tmp_path, capsys, "label_studio", "--input-format", "conll")[0])
    assert [task["data"]["text"] for task in tasks] == ["Peter Smith lives in Rome", "Anna went"]
    out, _ = tagged(tmp_path, capsys, "doccano", "--input-format", "conll")
    assert [json.loads(line)["text"] for line in out.splitlines()] == [
        "Peter Smith lives in Rome",
        "Anna went",
    ]
    (tmp_path / "in").write_text("")
    assert json.loads(tagged(tmp_path, capsys, "label_studio")[0]) == []


def test_corpus_mode_writes_doccano_and_refuses_label_studio(tmp_path, capsys):
    (tmp_path / "in").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    single, _ = tagged(tmp_path, capsys, "doccano")
    out = tmp_path / "corpus"
    status = predict(str(tmp_path / "in"), "--output-dir", str(out), "--format", "doccano")
    assert status == 0, capsys.readouterr().err
    assert (out / "in.jsonl").read_text(encoding="utf-8") == single
    status = predict(str(tmp_path / "in"), "--output-dir", str(tmp_path / "ls"),
                     "--format", "label_studio")  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2
    assert "--format label_studio writes one document per input" in err
    assert "use jsonl, conll or doccano" in err
