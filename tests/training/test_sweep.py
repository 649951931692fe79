"""The sweep runner that ner-curve and the study scripts share (ner.training.sweep),
with real child processes that succeed or fail."""

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ner.training import sweep


@dataclass(frozen=True)
class Item:
    name: str
    status: int


def test_a_sweep_runs_every_item_n_at_a_time_and_reports_the_failed(tmp_path):
    items = [Item(f"run{i}", 1 if i == 2 else 0) for i in range(5)]
    started, most_at_once, published = [], [0], []

    def start(item: Item) -> subprocess.Popen:
        started.append(item.name)
        code = f"import time; time.sleep(0.2); raise SystemExit({item.status})"
        return subprocess.Popen([sys.executable, "-c", code])

    def ready(item: Item, running: dict) -> bool:
        most_at_once[0] = max(most_at_once[0], len(running))
        return not (item.name == "run4" and any(i.name == "run3" for i in running))

    failed = sweep.run_sweep(
        items,
        jobs=2,
        start=start,
        finished=lambda item: item.status == 0,
        on_done=lambda item: published.append(item.name),
        ready=ready,
        poll=0.05,
    )
    assert [item.name for item in failed] == ["run2"]
    assert sorted(published) == ["run0", "run1", "run3", "run4"]
    assert sorted(started) == [item.name for item in items]
    assert most_at_once[0] <= 2  # never more than `jobs` running
    assert started.index("run4") > started.index("run3")


def test_a_run_state_follows_its_folder(tmp_path: Path):
    assert sweep.run_state(tmp_path) == "todo"
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "last.pt").write_bytes(b"")
    assert sweep.run_state(tmp_path) == "partial"
    assert sweep.run_state(tmp_path, finished=True) == "done"  # e.g. its committed record
    (tmp_path / "results.json").write_text("{}")
    assert sweep.run_state(tmp_path) == "done"
