"""docs/data.md's command for an annotation tool's export, run as written from a fresh folder
(plus tiny settings, so that it takes seconds) on a Label Studio export: two annotators, one
cancelled annotation, one span off token boundaries. The refusal names the span; with
``misaligned=snap`` the run trains and results.json counts what was snapped."""

import json
import os
import random
import re
import shlex
import subprocess
import sys
from pathlib import Path

from fixture_files import FIXTURE

from ner.common.paths import PROJECT_ROOT

DOCS = PROJECT_ROOT / "docs" / "data.md"


def documented_command() -> list[str]:
    """The ``ner-train`` command of the annotation-tool section, as arguments."""
    section = DOCS.read_text().split("## Training from an annotation tool's export", 1)[1]
    command = re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1)
    return shlex.split(command.replace("\\\n", " "))


def write_export(path: Path, tasks: int = 80) -> Path:
    """A Label Studio JSON export: each task a sentence naming a person and a place, the first
    annotation cancelled, the second complete; task 2's PER span stops inside a word."""
    rng = random.Random(0)
    people, places = ["Anna", "John Smith", "Mary", "Bob"], ["Paris", "New York", "Rome", "Oslo"]
    exported = []
    for number in range(1, tasks + 1):
        person, place = rng.choice(people), rng.choice(places)
        person = "Anna" if number == 2 else person
        text = f"{person} {rng.choice(['visited', 'flew to', 'left'])} {place}."
        spans = [
            (0, len(person), "PER"),
            (text.index(place), text.index(place) + len(place), "LOC"),
        ]
        if number == 2:
            spans[0] = (0, 3, "PER")  # "Ann" of "Anna"
        result = [
            {"type": "labels", "value": {"start": s, "end": e, "text": text[s:e], "labels": [t]}}
            for s, e, t in spans
        ]
        annotations = [
            {"completed_by": 2, "was_cancelled": True, "result": []},
            {"completed_by": 1, "was_cancelled": False, "result": result},
        ]
        exported.append({"id": number, "data": {"text": text}, "annotations": annotations})
    path.write_text(json.dumps(exported, indent=1))
    return path


def test_a_label_studio_export_trains_with_the_documented_command(tmp_path):
    program, *arguments = documented_command()
    assert program == "ner-train"
    assert "data.name=export.json" in arguments
    assert "data.options.format=label_studio" in arguments
    write_export(tmp_path / "export.json")
    run_dir = tmp_path / "run"
    tiny = [
        "trainer.max_epochs=3",
        "model.hidden_size=16",
        "data.batch_size=8",
        "embeddings=words",
        "embeddings.glove.dim=8",
        f"elmo.options_file={FIXTURE / 'options.json'}",
        f"elmo.weight_file={FIXTURE / 'lm_weights.hdf5'}",
        "logger=none",
        "progress=false",
        f"hydra.run.dir={run_dir}",
    ]

    def train(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "ner.cli.train", *arguments, *tiny, *extra],
            cwd=tmp_path,  # data.name=export.json is relative to where the command runs
            env={**os.environ, "NER_DATA_DIR": str(tmp_path / "data"), "OMP_NUM_THREADS": "1"},
            capture_output=True,
            text=True,
            timeout=300,
        )

    refused = train()
    assert refused.returncode == 2
    assert "export.json: task 2: annotations[1].result[0].value [0, 3) PER: not on token" in (
        refused.stderr
    )
    done = train("data.options.misaligned=snap")
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((run_dir / "results.json").read_text())
    spans = results["data"]["spans"]["total"]
    assert spans["records"] == 80 and spans["spans"] == 160
    assert spans["kept"] == 160 and spans["snapped"] == 1
    assert results["sentences"]["train"] == 64
    assert results["dev"]["support"] > 0
