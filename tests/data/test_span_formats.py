"""Annotation tools' exports as corpora: our prediction jsonl written as each span format and
read back gives the same spans; spans off token boundaries, outside the text, reversed or
overlapping are counted (and snapped, dropped or refused as asked), and a malformed record is
refused with one line naming the file, the record and the field."""

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from ner.common.errors import InputError
from ner.data import prepare_corpus
from ner.data.tag_schemes import tags_to_spans
from ner.data.tokenize import tokenize

# Records as ``ner-predict --format jsonl`` writes them (the fields the formats need).
PREDICTIONS = [
    {
        "text": "John Smith flew to Paris. He met Acme Corp. there.",
        "entities": [
            {"start": 0, "end": 10, "type": "PER"},
            {"start": 19, "end": 24, "type": "LOC"},
            {"start": 33, "end": 43, "type": "ORG"},
        ],
    },
    {"text": "Nothing to see here.", "entities": []},
    {"text": "Berlin is in Germany", "entities": [{"start": 13, "end": 20, "type": "LOC"}]},
]


def spans_of(entities: list[dict]) -> list[tuple[int, int, str]]:
    return [(e["start"], e["end"], e["type"]) for e in entities]


def label_studio(records: list[dict], folder: Path) -> Path:
    tasks = [
        {
            "id": n,
            "data": {"text": r["text"]},
            "annotations": [
                {"was_cancelled": True, "completed_by": 2, "result": []},
                {
                    "completed_by": 1,
                    "result": [
                        {
                            "type": "labels",
                            "from_name": "label",
                            "to_name": "text",
                            "value": {
                                "start": s,
                                "end": e,
                                "text": r["text"][s:e],
                                "labels": [t],
                            },
                        }
                        for s, e, t in spans_of(r["entities"])
                    ],
                },
            ],
        }
        for n, r in enumerate(records, 1)
    ]
    path = folder / "export.json"
    path.write_text(json.dumps(tasks))
    return path


def jsonl(folder: Path, name: str, lines: list[dict]) -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def doccano(records: list[dict], folder: Path) -> Path:
    lines = [
        {"text": r["text"], "label": [list(s) for s in spans_of(r["entities"])]} for r in records
    ]
    return jsonl(folder, "doccano.jsonl", lines)


def spacy(records: list[dict], folder: Path) -> Path:
    lines = [
        {
            "text": r["text"],
            "spans": [{"start": s, "end": e, "label": t} for s, e, t in spans_of(r["entities"])],
        }
        for r in records
    ]
    return jsonl(folder, "spacy.jsonl", lines)


def brat(records: list[dict], folder: Path) -> Path:
    folder = folder / "brat"
    folder.mkdir()
    for n, r in enumerate(records):
        (folder / f"doc{n}.txt").write_text(r["text"])
        lines = [
            f"T{i}\t{t} {s} {e}\t{r['text'][s:e]}"
            for i, (s, e, t) in enumerate(spans_of(r["entities"]), 1)
        ]
        (folder / f"doc{n}.ann").write_text("".join(line + "\n" for line in lines))
    return folder


WRITERS = {"label_studio": label_studio, "doccano": doccano, "spacy": spacy, "brat": brat}


def read_back(
    path: Path, format: str, texts: Sequence[str] = (), **options
) -> tuple[list[list[tuple[int, int, str]]], dict]:
    """The spans of each document (whose `texts` are given) as character offsets, and the
    corpus's span counts."""
    corpus, info = prepare_corpus(
        files={"train": path, "validation": path, "test": path}, format=format, **options
    )
    train = corpus["train"]
    names = train.features["tags"].feature.names
    documents: dict[int, list[str]] = {}
    for row in train:
        documents.setdefault(row["document_id"], []).extend(names[t] for t in row["tags"])
    found = []
    for document, tags in documents.items() if texts else ():
        tokens = tokenize(texts[document])
        found.append(
            [
                (tokens[a].start, tokens[b - 1].end, label)
                for label, a, b in tags_to_spans(tags, "iob2")
            ]
        )
    return found, info.spans


@pytest.mark.parametrize("format", WRITERS)
def test_predictions_written_in_each_format_read_back_as_the_same_spans(
    format, tmp_path, isolated_data_dir
):
    path = WRITERS[format](PREDICTIONS, tmp_path)
    found, counts = read_back(path, format, [r["text"] for r in PREDICTIONS])
    assert found == [spans_of(r["entities"]) for r in PREDICTIONS]
    assert counts["train"]["kept"] == counts["train"]["spans"] == 4
    assert counts["train"]["records"] == 3


def test_a_span_inside_a_token_is_refused_snapped_or_dropped_and_counted(
    tmp_path, isolated_data_dir
):
    lines = [{"text": "Visit Parisian cafes", "label": [[6, 11, "LOC"]]}]
    path = jsonl(tmp_path, "doccano.jsonl", lines)
    with pytest.raises(
        InputError, match=r"doccano.jsonl: line 1: label\[0\] \[6, 11\) LOC: not on token"
    ):
        read_back(path, "doccano")
    _, snapped = read_back(path, "doccano", misaligned="snap")
    assert snapped["train"]["snapped"] == 1 and snapped["train"]["kept"] == 1
    _, dropped = read_back(path, "doccano", misaligned="drop")
    assert dropped["train"]["misaligned_dropped"] == 1 and dropped["train"]["kept"] == 0


def test_outside_reversed_and_overlapping_spans_are_counted(tmp_path, isolated_data_dir):
    text = "John Smith flew to Paris"
    label = [[0, 10, "PER"], [5, 10, "PER"], [19, 99, "LOC"], [15, 5, "LOC"], [19, 24, "LOC"]]
    path = jsonl(tmp_path, "doccano.jsonl", [{"text": text, "label": label}])
    _, counts = read_back(path, "doccano")
    assert {
        k: counts["train"][k] for k in ("spans", "kept", "outside", "reversed", "overlapping")
    } == {"spans": 5, "kept": 2, "outside": 1, "reversed": 1, "overlapping": 1}


def test_discontinuous_brat_entities_and_relations_are_counted(tmp_path, isolated_data_dir):
    folder = tmp_path / "brat"
    folder.mkdir()
    (folder / "a.txt").write_text("New York and Paris")
    (folder / "a.ann").write_text(
        "T1\tLOC 0 8\tNew York\nT2\tLOC 0 3;13 18\tNew Paris\nR1\tnear Arg1:T1 Arg2:T2\n"
    )
    _, counts = read_back(folder, "brat")
    assert counts["train"]["discontinuous"] == 1
    assert counts["train"]["ignored_annotations"] == 1
    assert counts["train"]["kept"] == 1


@pytest.mark.parametrize(
    "format, content, message",
    [
        ("doccano", '{"text": "a b", "label": [[0, "x", "T"]]}\n', r"line 1: field label\[0\]"),
        (
            "doccano",
            '{"text": "a b", "label": [[0, 1, "T"]]}\n{"label": []}\n',
            "line 2: field text: missing",
        ),
        (
            "spacy",
            '{"text": "a b", "spans": [{"start": 0, "end": 1}]}\n',
            r"line 1: field spans\[0\].label",
        ),
        ("doccano", "{not json\n", "line 1: not JSON"),
    ],
)
def test_a_malformed_record_is_refused_naming_file_record_and_field(
    format, content, message, tmp_path, isolated_data_dir
):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as error:
        read_back(path, format)
    assert str(path) in str(error.value) and "\n" not in str(error.value)


def test_skip_bad_skips_and_counts_malformed_records(tmp_path, isolated_data_dir):
    lines = '{"text": "Paris", "label": [[0, 5, "LOC"]]}\n{"label": []}\n'
    path = tmp_path / "mixed.jsonl"
    path.write_text(lines)
    _, counts = read_back(path, "doccano", skip_bad=True)
    assert counts["train"]["skipped_records"] == 1 and counts["train"]["records"] == 1


def test_label_studio_reads_a_named_annotator_and_checks_the_quoted_text(
    tmp_path, isolated_data_dir
):
    path = label_studio(PREDICTIONS, tmp_path)
    with pytest.raises(
        InputError, match=r"task 1: field annotations: no annotation by annotator '7'"
    ):
        read_back(path, "label_studio", annotator="7")
    tasks = json.loads(path.read_text())
    tasks[0]["annotations"][1]["result"][0]["value"]["text"] = "Jon"
    path.write_text(json.dumps(tasks))
    with pytest.raises(
        InputError, match=r"task 1: field annotations\[1\].result\[0\].value: its text 'Jon'"
    ):
        read_back(path, "label_studio")


def test_span_options_are_refused_for_column_files(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text("Paris B-LOC\n")
    with pytest.raises(InputError, match=r"misaligned='snap'.*does not take it"):
        prepare_corpus(path, misaligned="snap")


def test_a_brat_folder_with_split_subfolders_loads_by_name(tmp_path, isolated_data_dir):
    root = tmp_path / "project"
    for split in ("train", "dev", "test"):
        (root / split).mkdir(parents=True)
        (root / split / "a.txt").write_text("Anna met Bob")
        (root / split / "a.ann").write_text("T1\tPER 0 4\tAnna\nT2\tPER 9 12\tBob\n")
    _, info = prepare_corpus(root, format="brat")
    assert info.sentences == {"train": 1, "validation": 1, "test": 1}
    assert info.spans["total"]["kept"] == 6


@pytest.mark.parametrize(
    "format, line",
    [
        ("doccano", {"entities": [{"start_offset": 0, "end_offset": 6, "label": "LOC"}]}),
        ("spacy", {"ents": [{"start": 0, "end": 6, "label": "LOC"}]}),
    ],
)
def test_the_other_key_of_each_jsonl_format_reads_the_same(
    format, line, tmp_path, isolated_data_dir
):
    path = jsonl(tmp_path, "variant.jsonl", [{"text": "Berlin is big", **line}])
    _, counts = read_back(path, format)
    assert counts["train"]["kept"] == 1


def test_label_studio_names_an_annotator_by_e_mail(tmp_path, isolated_data_dir):
    path = label_studio(PREDICTIONS, tmp_path)
    tasks = json.loads(path.read_text())
    for task in tasks:
        task["annotations"].reverse()  # the complete annotation first, then the cancelled one
        task["annotations"][0]["completed_by"] = {"id": 5, "email": "ann@example.org"}
    path.write_text(json.dumps(tasks))
    texts = [r["text"] for r in PREDICTIONS]
    found, _ = read_back(path, "label_studio", texts, annotator="ann@example.org")
    assert found == [spans_of(r["entities"]) for r in PREDICTIONS]
