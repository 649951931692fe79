"""``ner-predict --rank``: its options, their checks, and the ranked output
(`ner.model.ranking`)."""

import argparse
import sys
from collections.abc import Iterable
from typing import IO

from ner.cli.options import positive_int
from ner.common.errors import InputError
from ner.data.tag_input import Line
from ner.model.ranking import RANK_INPUT_FORMATS, RANKINGS, ranked, score_lines, write_ranked
from ner.model.tag_files import Warn
from ner.model.tagger import Tagger


def add_rank_options(p: argparse.ArgumentParser) -> None:
    """``--rank``, ``--budget``, ``--distinct``: what to label next (`ner.model.ranking`)."""
    p.add_argument(
        "--rank",
        choices=RANKINGS,
        help="write the input lines most doubtful first, each with its score: uncertainty = 1 - "
        "the probability of the model's least sure entity or outside token (jsonl output; text, "
        "tokens or jsonl input)",
    )
    p.add_argument(
        "--budget", type=positive_int, help="with --rank: keep only the N most doubtful lines"
    )
    p.add_argument(
        "--distinct",
        action="store_true",
        help="with --rank: pass over a line whose tokens (lowercased, digits as 0) repeat a line "
        "ranked higher",
    )


def check_rank_options(args: argparse.Namespace) -> None:
    """Refuse `--budget` or `--distinct` without `--rank`, and `--rank` with what it cannot do."""
    if args.rank is None:
        if args.budget is not None or args.distinct:
            raise InputError("--budget and --distinct go with --rank")
        return
    if args.output_dir or args.scores:
        raise InputError("--rank writes one ranked file: no --output-dir or --scores")
    if args.input_format not in RANK_INPUT_FORMATS:
        raise InputError(
            f"--rank takes {', '.join(RANK_INPUT_FORMATS)} input, not --input-format "
            f"{args.input_format}"
        )
    if args.format != "jsonl":
        raise InputError(
            f"--rank writes jsonl (each record with its score), not --format {args.format}"
        )


def rank(
    args: argparse.Namespace, tagger: Tagger, lines: Iterable[Line], out: IO[str], warn: Warn
) -> int:
    """Write the lines most doubtful first (`ner.model.ranking`); returns the lines skipped."""
    scored, skipped = score_lines(
        tagger,
        lines,
        input_format=args.input_format,
        batch_size=args.batch_size,
        chunk_lines=args.chunk_lines,
        text_field=args.text_field,
        warn=warn,
    )
    written = write_ranked(out, ranked(scored, args.budget, args.distinct))
    print(
        f"ner-predict: ranked {len(scored)} lines by {args.rank}, wrote {written}", file=sys.stderr
    )
    return skipped
