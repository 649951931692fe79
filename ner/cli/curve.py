"""How much more data do I need: a learning curve of your training config, extrapolated.

    ner-curve data.name=mydata experiment=quickstart --out curve [--fractions 0.125 0.25 0.5 1]
        [--seeds 3] [--jobs 1] [--fit offset|power]

Trains ``ner-train OVERRIDES`` on nested fractions of the training split with several seeds
(`ner.training.curve`), resumable, then fits a power law to the error and writes, into
``--out``, ``curve.md`` (F1 at 2× and 4× your data with an interval, the paired tests between
fractions, the held-out check), ``curve.json`` and ``curve.png``; docs/curve.md explains them.
"""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from hydra.errors import HydraException
from omegaconf.errors import OmegaConfBaseException

from ner.common.errors import InputError, NerError, report_user_error
from ner.reporting.curve_report import MIN_FRACTIONS, headline
from ner.reporting.extrapolation import DEFAULT_FORM, DEFAULT_LEVEL, DEFAULT_RESAMPLES, FORMS
from ner.training.api import compose_config
from ner.training.curve import CurvePlan, collect, train_runs

FRACTIONS = (0.125, 0.25, 0.5, 1.0)
SEEDS = 3


def build_parser() -> argparse.ArgumentParser:
    """The ``ner-curve`` command line (docs/cli.md documents every option)."""
    parser = argparse.ArgumentParser(
        prog="ner-curve", description=__doc__.splitlines()[0].rstrip(".")
    )
    parser.add_argument(
        "overrides", nargs="*", metavar="OVERRIDE", help="ner-train overrides of every run"
    )
    parser.add_argument("--out", type=Path, required=True, help="the curve's folder")
    parser.add_argument(
        "--fractions",
        type=float,
        nargs="+",
        default=list(FRACTIONS),
        help="training fractions, 1 among them (default %(default)s)",
    )
    parser.add_argument("--seeds", type=int, default=SEEDS, help="seeds per fraction (default 3)")
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time, 1 thread each")
    parser.add_argument(
        "--fit", choices=FORMS, default=DEFAULT_FORM, help="the law (default %(default)s)"
    )
    parser.add_argument(
        "--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap and test resamples"
    )
    parser.add_argument(
        "--level", type=float, default=DEFAULT_LEVEL, help="the interval's coverage (0.95)"
    )
    parser.add_argument("--report-only", action="store_true", help="train nothing, report")
    return parser


def check(args: argparse.Namespace) -> None:
    """Refuse option values the curve cannot use, in one line each."""
    fractions = args.fractions
    if any(not 0 < f <= 1 for f in fractions) or len(set(fractions)) != len(fractions):
        raise InputError(f"--fractions {fractions}: expected distinct values in (0, 1]")
    if 1 not in fractions or len(fractions) < MIN_FRACTIONS:
        raise InputError(
            f"--fractions {fractions}: expected {MIN_FRACTIONS} or more, 1 (the whole training "
            "set) among them: the law is checked by fitting the others and predicting 1"
        )
    if args.seeds < 2:
        raise InputError(f"--seeds {args.seeds}: expected 2 or more (the interval needs them)")
    if args.jobs < 1 or args.resamples < 1:
        raise InputError("--jobs and --resamples: expected 1 or more")
    if not 0 < args.level < 1:
        raise InputError(f"--level {args.level}: expected a coverage in (0, 1), e.g. 0.95")


def plan_of(args: argparse.Namespace) -> CurvePlan:
    """The curve's plan, after composing the overrides as ``ner-train`` would (a bad override
    stops here, before any run starts)."""
    try:
        config = compose_config(args.overrides)
    except (HydraException, OmegaConfBaseException) as error:
        message = str(error).strip().splitlines()[0]
        raise InputError(f"overrides {' '.join(args.overrides)}: {message}") from None
    return CurvePlan(
        out=args.out.resolve(),
        overrides=args.overrides,
        fractions=args.fractions,
        seeds=args.seeds,
        full_epochs=int(config.trainer.max_epochs),
        form=args.fit,
        resamples=args.resamples,
        level=args.level,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """The ``ner-curve`` command: 0 when every run finished and the report was written."""
    args = build_parser().parse_intermixed_args(argv)
    try:
        check(args)
        plan = plan_of(args)
        failed = [] if args.report_only else train_runs(plan, args.jobs)
        if failed:
            names = ", ".join(run.name for run in failed)
            print(f"ner-curve: run(s) failed: {names}; see their seed logs", file=sys.stderr)
        report = collect(plan)
    except NerError as error:
        return report_user_error("ner-curve", error)
    print("\n".join(headline(report)))
    print(f"written: {plan.out / 'curve.md'}, curve.json, curve.png", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
