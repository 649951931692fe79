"""A report of training runs (``ner-report``): tables, plots and significance tests of the runs
under some folders, grouped by (corpus, variant), and the ranked trials of every search among
them.

`write_report` writes ``report.md``, ``report.json`` and ``plots/`` into a folder, optionally a
``<corpus>.json`` per corpus (`study_json`) and the tables between the report markers of a
Markdown file (`insert_into`).
"""

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ner.common.errors import file_error
from ner.common.file_names import file_inside
from ner.common.files import write_json, write_text
from ner.reporting.aggregate import markdown, settings_warnings, study_json, summarize
from ner.reporting.runs import ReportError, group_runs, load_runs
from ner.reporting.search import Search, find_searches, load_search, search_json
from ner.reporting.search import markdown as search_markdown
from ner.reporting.significance import DEFAULT_RESAMPLES, compare_all
from ner.reporting.significance import markdown as significance_markdown

BEGIN, END = "<!-- ner-report:begin -->", "<!-- ner-report:end -->"


def build_report(
    roots: Sequence[Path],
    out: Path,
    *,
    plots: bool = True,
    resamples: int = DEFAULT_RESAMPLES,
    searches: Sequence[Path] = (),
) -> tuple[
    list[dict[str, Any]], list[str], dict[str, list[tuple[str, Path]]], list[dict[str, Any]]
]:
    """Summaries per (corpus, variant), warnings, the plots written under ``out/plots``, and the
    significance tests of every two variants of a corpus; the runs in the `searches` folders
    are left out (nothing to summarize is fine when there are searches)."""
    from ner.reporting.plots import corpus_plots

    runs, warnings = load_runs(roots, exclude=searches)
    if not runs:
        if searches:
            return [], warnings, {}, []
        raise ReportError(f"no results.json under {', '.join(map(str, roots))}")
    groups = group_runs(runs)
    summaries = [summarize(c, v, group) for (c, v), group in groups.items()]
    comparisons = compare_all(groups, resamples)
    for summary in summaries:  # portable: relative to where the report is written
        summary["runs"] = [Path(os.path.relpath(d, out)).as_posix() for d in summary["runs"]]
    warnings += settings_warnings(summaries)
    figures: dict[str, list[tuple[str, Path]]] = {}
    if plots:
        for corpus in sorted({s["corpus"] for s in summaries}):
            group = [s for s in summaries if s["corpus"] == corpus]
            figures[corpus] = corpus_plots(group, out / "plots")
    return summaries, warnings, figures, comparisons


def render(
    summaries: Sequence[dict[str, Any]],
    warnings: Sequence[str],
    figures: dict[str, list[tuple[str, Path]]],
    relative_to: Path,
    comparisons: Sequence[dict[str, Any]] = (),
    searches: Sequence[Search] = (),
) -> str:
    """The Markdown report, with plot links relative to the folder of the Markdown file."""
    links = {
        corpus: [(title, Path(os.path.relpath(path, relative_to)).as_posix()) for title, path in ps]
        for corpus, ps in figures.items()
    }
    lines = [line for search in searches for line in search_markdown(search, relative_to)]
    if summaries:
        lines += markdown(summaries, links)
    for corpus in sorted({c["corpus"] for c in comparisons}):
        lines += [f"### {corpus}: significance", "", *significance_markdown(comparisons, corpus)]
    if warnings:
        lines += ["Warnings:", "", *(f"- {w}" for w in warnings), ""]
    return "\n".join(lines)


def insert_into(path: Path, text: str) -> None:
    """Replace what lies between the report markers of `path` with `text`."""
    try:
        content = path.read_text(encoding="utf-8")
    except OSError as error:
        raise file_error(path, error) from None
    if (
        content.count(BEGIN) != 1
        or content.count(END) != 1
        or content.index(BEGIN) > content.index(END)
    ):
        raise ReportError(f"{path}: needs exactly one {BEGIN} line followed by one {END} line")
    head, rest = content.split(BEGIN)
    _, tail = rest.split(END)
    write_text(path, f"{head}{BEGIN}\n{text.strip()}\n{END}{tail}")


def write_report(
    dirs: Sequence[Path],
    out: Path,
    *,
    plots: bool = True,
    resamples: int = DEFAULT_RESAMPLES,
    study_folder: Path | None = None,
    insert_into_file: Path | None = None,
) -> tuple[str, list[str]]:
    """Write the report of the runs under `dirs` into `out` (``report.md``, ``report.json``,
    ``plots/``), per corpus into `study_folder` (``<corpus>.json``, the name made safe: nothing
    is written outside these folders) and between the markers of
    `insert_into_file`; returns the Markdown report and the warnings."""
    if resamples < 1:
        raise ReportError(f"--resamples must be at least 1, got {resamples}")
    search_folders = find_searches(dirs)
    searches = [load_search(folder) for folder in search_folders]
    summaries, warnings, figures, comparisons = build_report(
        dirs, out, plots=plots, resamples=resamples, searches=search_folders
    )
    out.mkdir(parents=True, exist_ok=True)
    report = render(summaries, warnings, figures, out, comparisons, searches)
    write_text(out / "report.md", report)
    content = {
        "groups": summaries,
        "comparisons": comparisons,
        "warnings": warnings,
        "searches": [search_json(search, out) for search in searches],
    }
    write_json(out / "report.json", content)
    if study_folder:
        study_folder.mkdir(parents=True, exist_ok=True)
        for corpus in sorted({s["corpus"] for s in summaries}):
            write_json(file_inside(study_folder, corpus, ".json"), study_json(summaries, corpus))
    if insert_into_file:
        tables = render(summaries, warnings, figures, insert_into_file.parent, comparisons)
        insert_into(insert_into_file, tables)
    return report, warnings
