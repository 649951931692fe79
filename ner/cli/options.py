"""Command-line options that several commands share, defined once."""

import argparse
import codecs

from ner.common.precision import PRECISIONS
from ner.common.threads import cpu_threads
from ner.data.lines import splits_as_bytes
from ner.data.tag_schemes import SCHEMES


def add_model_options(parser: argparse.ArgumentParser, tag_scheme_help: str) -> None:
    """How ner-predict and ner-serve load and run a model folder: ``--max-length``,
    ``--tag-scheme``, ``--device``, ``--allow-download``, ``--precision``, ``--threads``."""
    parser.add_argument(
        "--threads",
        type=positive_int,
        default=cpu_threads("auto"),
        help="torch CPU threads (of each ner-serve worker; default: half the cores, 1 to 4; "
        "more than free cores spin)",
    )
    parser.add_argument(
        "--max-length", type=positive_int, default=256, help="longer sentences go in pieces"
    )
    parser.add_argument("--tag-scheme", choices=SCHEMES, help=tag_scheme_help)
    parser.add_argument("--device", default="cpu", help="torch device, e.g. cpu or cuda")
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


def positive_int(value: str) -> int:
    """An argparse type: an integer ≥ 1 (otherwise a one-line usage error, status 2)."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be positive, got {number}")
    return number


def encoding_name(value: str) -> str:
    """An argparse type: a text encoding Python knows (otherwise a one-line usage error)."""
    try:
        name = codecs.lookup(value).name
        splits_as_bytes(name)
    except LookupError:
        raise argparse.ArgumentTypeError(f"unknown text encoding {value!r}") from None
    return name
