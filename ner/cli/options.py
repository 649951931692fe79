"""Command-line options that several commands share, defined once."""

import argparse

from ner.common.precision import PRECISIONS


def add_precision_option(parser: argparse.ArgumentParser) -> None:
    """``--precision`` of the LSTMs' matrix products (ner-predict, ner-serve)."""
    parser.add_argument(
        "--precision",
        choices=tuple(PRECISIONS),
        default="float32",
        help="of the LSTMs' matrix products: float32 (exact, default) or bfloat16 (faster on "
        "CPUs with bfloat16 instructions; confidences move slightly)",
    )
