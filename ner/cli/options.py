"""Command-line options that several commands share, defined once."""

import argparse

from ner.common.precision import PRECISIONS


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """How ner-predict and ner-serve load a model folder: ``--allow-download``, ``--precision``."""
    parser.add_argument(
        "--allow-download",
        action="store_true",
        help="download a biLM that the model folder gives as a URL (default: refuse)",
    )
    add_precision_option(parser)


def add_precision_option(parser: argparse.ArgumentParser) -> None:
    """``--precision`` of the LSTMs' matrix products (ner-predict, ner-serve)."""
    parser.add_argument(
        "--precision",
        choices=tuple(PRECISIONS),
        default="float32",
        help="of the LSTMs' matrix products: float32 (exact, default) or bfloat16 (faster on "
        "CPUs with bfloat16 instructions; confidences move slightly)",
    )
