"""The README's "First five minutes" run as written: each command of its code blocks runs in a
shell (with `.venv/bin/` pointing at this environment's scripts, in an empty folder), except
set-up and the main job; the shipped tagger's output is the one the README shows, and the
quickstart run leaves a model that loads. Slow: the first use fetches GloVe 6B.50d (76 MB)
and CoNLL-2003 (27 MB) into the data folder, and the quickstart trains for about 2 minutes."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ner.common.paths import PROJECT_ROOT
from ner.model.tagger import Tagger

README = PROJECT_ROOT / "README.md"
BIN = Path(sys.executable).parent
SKIPPED = ("scripts/setup.sh", "experiment=conll2003_elmo_glove")


def section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## First five minutes")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def commands() -> list[str]:
    """The shell commands of the section's bash blocks, in order."""
    blocks = re.findall(r"```bash\n(.*?)```", section(), re.DOTALL)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def shown_output() -> list[dict]:
    """The JSON lines the section shows as the shipped tagger's output."""
    block = re.search(r"```json\n(.*?)```", section(), re.DOTALL)
    assert block, "the section shows the tagger's output in a json block"
    return [json.loads(line) for line in block.group(1).splitlines() if line.strip()]


def entities(records: list[dict]) -> list[tuple]:
    """(text, type, start, end, confidence to 2 places) of every entity of `records`."""
    return [
        (e["text"], e["type"], e["start"], e["end"], round(e["confidence"], 2))
        for record in records
        for e in record["entities"]
    ]


def run(command: str, folder: Path) -> str:
    command = command.replace(".venv/bin/", f"{BIN}/")
    done = subprocess.run(
        ["bash", "-c", command], cwd=folder, capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, f"{command}\n{done.stderr[-3000:]}"
    return done.stdout


def test_the_section_has_the_steps() -> None:
    found = commands()
    assert any("ner-predict conll2003 -" in c for c in found)
    assert any("experiment=quickstart" in c for c in found)


@pytest.mark.slow
def test_the_first_five_minutes_run_as_written(tmp_path: Path) -> None:
    for command in commands():
        if any(skipped in command for skipped in SKIPPED):
            continue
        output = run(command, tmp_path)
        if "ner-predict" in command:
            printed = [json.loads(line) for line in output.splitlines()]
            assert entities(printed) == entities(shown_output())
    runs = [path.parent for path in tmp_path.rglob("results.json")]
    assert len(runs) == 1, runs
    results = json.loads((runs[0] / "results.json").read_text())
    assert results["test"]["f1"] >= 0
    assert Tagger.load(runs[0] / "model").predict("Rome")[0].tokens
