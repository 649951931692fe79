"""Aggregate training runs into tables and plots: ``python -m ner.cli.report DIR... [options]``.

Finds every ``results.json`` under the DIRs (single runs, Hydra multiruns, the study's committed
summaries in ``experiments/results/study/runs``) and writes ``report.md``, ``report.json`` and
``plots/`` into ``--out`` (default: the first DIR); what they hold: `ner.reporting.report` and
docs/cli.md.
"""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ner.common.errors import NerError, report_user_error
from ner.reporting.report import write_report
from ner.reporting.significance import DEFAULT_RESAMPLES


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
        report, warnings = write_report(
            args.dirs,
            out,
            plots=not args.no_plots,
            resamples=args.resamples,
            study_folder=args.study_json,
            insert_into_file=args.insert_into,
        )
    except NerError as error:  # no runs, a malformed results.json or search, bad markers
        return report_user_error("ner-report", error)
    for warning in warnings:
        print(f"ner-report: warning: {warning}", file=sys.stderr)
    print(report)
    print(f"\nwritten: {out / 'report.md'}, {out / 'report.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
