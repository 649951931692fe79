"""Re-evaluate a saved training run on any split of its corpus or of another corpus.

    python -m ner.cli.evaluate RUN_DIR [--split test] [--corpus NAME_OR_PATH] [--checkpoint best]

The run's model is loaded as a `Tagger` (its ``model/`` folder, or a checkpoint restored into
one) and scored by the code of ``ner-predict --scores`` (`ner.model.evaluation`). Prints the
scores (seqeval default and strict, per type) as JSON and writes them, with a ``token gold pred``
predictions file, next to the run: ``eval_<corpus>_<split>.{json,txt}``.
"""

import argparse
import json
import logging
from pathlib import Path

import torch

from ner.common.errors import NerError, exit_for_user
from ner.common.threads import cpu_threads
from ner.training.reevaluate import evaluate_run


def build_parser() -> argparse.ArgumentParser:
    """The ``ner-evaluate`` command line (docs/cli.md documents every option)."""
    parser = argparse.ArgumentParser(prog="ner-evaluate", description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", type=Path, help="a training run's output directory")
    parser.add_argument("--split", default="test", choices=["train", "validation", "test"])
    parser.add_argument("--corpus", help="another corpus name or folder (default: the run's)")
    parser.add_argument("--checkpoint", default="best", choices=["best", "last"])
    parser.add_argument(
        "--max-sentences",
        type=int,
        help="cap the split (default: the run's data.max_sentences; none with --corpus)",
    )
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--threads", default="auto", help="torch CPU threads (auto: half the cores)"
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    """The ``ner-evaluate`` command."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    torch.set_num_threads(cpu_threads(args.threads))
    try:
        scores = evaluate_run(
            args.run_dir,
            split=args.split,
            corpus=args.corpus,
            checkpoint=args.checkpoint,
            max_sentences=args.max_sentences,
            batch_size=args.batch_size,
            device=args.device,
        )
    except NerError as error:  # not a run, a corpus that cannot be read: one line, status 2
        exit_for_user("ner-evaluate", error)
    print(json.dumps(scores, indent=1))


if __name__ == "__main__":
    main()
