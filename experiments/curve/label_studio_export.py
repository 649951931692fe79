"""A Label Studio JSON export made from a column corpus, to run ``ner-curve`` as a user would.

    .venv/bin/python experiments/curve/label_studio_export.py NLTK_DATA/corpora/conll2002.zip \\
        outputs/curve_es/export.json --member conll2002/esp.train --sentences 4000

Reads the first `--sentences` sentences of a column file (``token ... tag`` per line, IOB2 tags
last, a blank line between sentences; `--member`: the file inside a zip archive such as
nltk_data's ``conll2002.zip``) and writes them as Label Studio tasks: the tokens joined by spaces
as ``data.text``, each entity a ``labels`` result with its character offsets, in one completed
annotation, as Label Studio exports a labelled project.
"""

from __future__ import annotations

import argparse
import json
import sys
import zipfile
from pathlib import Path

from seqeval.metrics.sequence_labeling import get_entities


def sentences(lines: list[str]) -> list[tuple[list[str], list[str]]]:
    """(tokens, tags) of every sentence of a column file's lines."""
    found: list[tuple[list[str], list[str]]] = [([], [])]
    for line in lines:
        fields = line.split()
        if not fields:
            if found[-1][0]:
                found.append(([], []))
            continue
        found[-1][0].append(fields[0])
        found[-1][1].append(fields[-1])
    return [sentence for sentence in found if sentence[0]]


def task(number: int, tokens: list[str], tags: list[str]) -> dict:
    """One Label Studio task: the sentence's text and its entities as character spans."""
    starts, offset = [], 0
    for token in tokens:
        starts.append(offset)
        offset += len(token) + 1
    text = " ".join(tokens)
    result = []
    for kind, first, last in get_entities(tags):
        start, end = starts[first], starts[last] + len(tokens[last])
        value = {"start": start, "end": end, "text": text[start:end], "labels": [kind]}
        result.append({"type": "labels", "from_name": "label", "to_name": "text", "value": value})
    annotation = {"completed_by": 1, "was_cancelled": False, "result": result}
    return {"id": number, "data": {"text": text}, "annotations": [annotation]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="a column file, or a zip holding one")
    parser.add_argument("out", type=Path, help="the Label Studio export to write")
    parser.add_argument("--member", help="the column file inside the zip")
    parser.add_argument("--sentences", type=int, help="the first N sentences (default: all)")
    args = parser.parse_args()
    if args.member:
        with zipfile.ZipFile(args.source) as archive:
            text = archive.read(args.member).decode("utf-8")
    else:
        text = args.source.read_text(encoding="utf-8")
    chosen = sentences(text.splitlines())[: args.sentences]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tasks = [task(number, tokens, tags) for number, (tokens, tags) in enumerate(chosen, 1)]
    args.out.write_text(json.dumps(tasks, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(tasks)} tasks → {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
