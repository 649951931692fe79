"""`ner-embed`: dump every biLM layer of a tokenized text file to HDF5 (the layout:
`ner.features.hdf5`)."""

import argparse
from pathlib import Path

import torch

from ner.bilm.bilm import DEFAULT_STATE, MAX_TOKENS, STATE_MODES
from ner.cli.options import positive_int
from ner.common.errors import NerError, report_user_error
from ner.features.hdf5 import embed_with_files


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ner-embed",
        description="Embed a file with one whitespace-tokenized sentence per line; write all biLM "
        "layers to HDF5 (dataset str(i) of shape (3, T_i, 2P), plus sentence_to_index).",
    )
    parser.add_argument("input", type=Path, help="text file, one tokenized sentence per line")
    parser.add_argument("output", type=Path, help="HDF5 file to write")
    parser.add_argument(
        "--model",
        help="a biLM folder, its format detected: ELMoForManyLangs (config.json, char.dic, "
        "*.pkl) or one options .json with one weights .hdf5 (instead of the two files below); "
        "or a .zip of one (path or URL)",
    )
    parser.add_argument("--options-file", help="options.json (path or URL)")
    parser.add_argument("--weight-file", help="weights.hdf5 (path or URL)")
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        default=64,
        help="sentences per batch in stateful mode (default 64)",
    )
    parser.add_argument(
        "--max-tokens",
        type=positive_int,
        default=MAX_TOKENS,
        help=f"padded tokens per batch in warm/stateless mode (default {MAX_TOKENS})",
    )
    parser.add_argument(
        "--state",
        choices=STATE_MODES,
        default=DEFAULT_STATE,
        help="LSTM state each sentence starts from (default warm; stateful = AllenNLP/bilm-tf)",
    )
    parser.add_argument("--device", default="cpu", help="torch device (default cpu)")
    parser.add_argument(
        "--threads", type=positive_int, help="torch CPU threads (default: torch's choice)"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if (args.model is None) == (args.options_file is None or args.weight_file is None):
        parser.error("give either --model, or both --options-file and --weight-file")
    if args.model is not None and (args.options_file or args.weight_file):
        parser.error("--model replaces --options-file and --weight-file; give one or the other")
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        embed_with_files(
            args.input,
            args.output,
            model=args.model,
            options_file=args.options_file,
            weight_file=args.weight_file,
            state=args.state,
            device=args.device,
            batch_size=args.batch_size,
            max_tokens=args.max_tokens,
            progress=not args.no_progress,
        )
    except NerError as error:  # a missing input, bad biLM files, a line not UTF-8: one line
        return report_user_error("ner-embed", error)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
