"""The study's committed report follows from its committed summaries: rebuilt with today's
`ner-report` into a scratch copy of its layout (as experiments/README.md shows, never over the
committed files), the per-corpus F1 lists and RESULTS.md's tables come out as committed."""

import shutil
from pathlib import Path

import pytest

from ner.common.paths import PROJECT_ROOT
from ner.reporting.report import write_report

STUDY = PROJECT_ROOT / "experiments" / "results" / "study"


@pytest.mark.slow
def test_the_committed_study_report_is_what_ner_report_writes_today(tmp_path: Path) -> None:
    page = tmp_path / "RESULTS.md"  # beside report/, as in the repository: the same plot links
    shutil.copyfile(STUDY / "RESULTS.md", page)
    write_report(
        [STUDY / "runs"],
        tmp_path / "report",
        study_folder=tmp_path / "corpora",
        insert_into_file=page,
    )
    committed = sorted(p.name for p in (STUDY / "corpora").glob("*.json"))
    assert sorted(p.name for p in (tmp_path / "corpora").glob("*.json")) == committed
    for name in committed:
        rebuilt = (tmp_path / "corpora" / name).read_text(encoding="utf-8")
        assert rebuilt == (STUDY / "corpora" / name).read_text(encoding="utf-8"), name
    assert page.read_text(encoding="utf-8") == (STUDY / "RESULTS.md").read_text(encoding="utf-8"), (
        "experiments/results/study/RESULTS.md differs from what ner-report writes today: rebuild "
        "it as experiments/README.md says"
    )
