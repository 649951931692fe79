"""Aggregate training runs into tables and plots: ``python -m ner.cli.report DIR... [options]``.

Finds every ``results.json`` under the DIRs (single runs, Hydra multiruns, the study's committed
summaries in ``experiments/results/study/runs``), groups the runs by (corpus, variant) and writes
into ``--out`` (default: the first DIR):

- ``report.md`` and ``report.json``: mean ± std over seeds of dev and test F1, per-type test F1,
  best epoch, epochs run, minutes per run and the learned ELMo mix weights;
- ``plots/dev_f1_<corpus>.png``, ``plots/per_type_f1_<corpus>.png`` and
  ``plots/mix_weights_<corpus>.png``;
- for every two variants of a corpus, whether their test F1 differ: an exact permutation test
  over seeds, and a paired approximate-randomisation test over the test sentences of the seeds
  both ran, read from the runs' ``predictions_test.txt`` (``--resamples``, default 10,000).

``--study-json DIR`` also writes ``DIR/<corpus>.json`` as ``{"variants": {name: {"test_f1": [...],
"dev_f1": [...], "seeds": [...]}}}`` (F1 in percent, per seed). ``--insert-into FILE`` replaces
the part of FILE between ``<!-- ner-report:begin -->`` and ``<!-- ner-report:end -->`` with the
tables. Seeds run twice (the newest counts) and seeds run with different settings are reported
as warnings, in the report and on stderr.

A hyperparameter search under the DIRs (a folder with ``search.yaml``, from ``ner-train -m
hparams_search=optuna``) is reported on its own: its trials ranked by dev F1 with their searched
values, the best one marked and given as a ready-to-run ``ner-train`` command
(``searches`` in ``report.json``); its trials are not pooled as seeds.
"""

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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
    content = path.read_text(encoding="utf-8")
    if (
        content.count(BEGIN) != 1
        or content.count(END) != 1
        or content.index(BEGIN) > content.index(END)
    ):
        raise ReportError(f"{path}: needs exactly one {BEGIN} line followed by one {END} line")
    head, rest = content.split(BEGIN)
    _, tail = rest.split(END)
    write_text(path, f"{head}{BEGIN}\n{text.strip()}\n{END}{tail}")


def build_parser() -> argparse.ArgumentParser:
    """The ``ner-report`` command line (docs/cli.md documents every option)."""
    parser = argparse.ArgumentParser(
        prog="ner-report", description=__doc__.splitlines()[0].split(": ")[0]
    )
    parser.add_argument(
        "dirs", nargs="+", type=Path, metavar="DIR", help="run folders to search for results.json"
    )
    parser.add_argument("--out", type=Path, help="where report.md/json and plots/ go")
    parser.add_argument("--study-json", type=Path, help="write <DIR>/<corpus>.json per corpus")
    parser.add_argument("--insert-into", type=Path, help="Markdown file with report markers")
    parser.add_argument("--no-plots", action="store_true", help="tables only")
    parser.add_argument(
        "--resamples",
        type=int,
        default=DEFAULT_RESAMPLES,
        help="random swaps of the paired test over test sentences (default %(default)s)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = args.out or (args.dirs[0] if args.dirs[0].is_dir() else args.dirs[0].parent)
    try:
        if args.resamples < 1:
            raise ReportError(f"--resamples must be at least 1, got {args.resamples}")
        search_folders = find_searches(args.dirs)
        searches = [load_search(folder) for folder in search_folders]
        summaries, warnings, figures, comparisons = build_report(
            args.dirs,
            out,
            plots=not args.no_plots,
            resamples=args.resamples,
            searches=search_folders,
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
        if args.study_json:
            args.study_json.mkdir(parents=True, exist_ok=True)
            for corpus in sorted({s["corpus"] for s in summaries}):
                write_json(args.study_json / f"{corpus}.json", study_json(summaries, corpus))
        if args.insert_into:
            insert_into(
                args.insert_into,
                render(summaries, warnings, figures, args.insert_into.parent, comparisons),
            )
    except (ReportError, OSError) as error:
        print(f"ner-report: error: {error}", file=sys.stderr)
        return 2
    for warning in warnings:
        print(f"ner-report: warning: {warning}", file=sys.stderr)
    print(report)
    print(f"\nwritten: {out / 'report.md'}, {out / 'report.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
