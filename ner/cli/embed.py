"""`ner-embed`: dump every biLM layer of a tokenized text file to HDF5.

Output layout (AllenNLP's former `elmo` command, bilm-tf's `dump_bilm_embeddings`): one float32
dataset per input line, key `str(i)`, shape (L+1, T_i, 2P) with BOS/EOS removed, plus a
`sentence_to_index` dataset holding a JSON object {sentence: key}. The input is streamed in
chunks of lines, so outputs are never all in memory; the file is written under a temporary name
and renamed when complete.
"""

import argparse
import json
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

import h5py
import numpy as np
import torch
from tqdm import tqdm

from ner.bilm.bilm import DEFAULT_STATE, MAX_TOKENS, STATE_MODES, BiLM
from ner.common.files import atomic_path
from ner.data.lines import decode_line

MAX_CACHED_TOKENS = 500_000


def read_sentences(path: Path) -> Iterator[list[str]]:
    """Whitespace-tokenized sentences, one per line, decoded strictly (errors name the line)."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield decode_line(raw, number, "utf-8").split()
            except UnicodeDecodeError as error:
                raise ValueError(f"{path}:{number}: not valid UTF-8 ({error})") from error


def count_lines(path: Path) -> int:
    """Number of lines (a last line without newline counts)."""
    lines, last = 0, b"\n"
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            lines += block.count(b"\n")
            last = block[-1:]
    return lines + (last != b"\n")


def embed_file(
    bilm: BiLM,
    input_file: Path,
    output_file: Path,
    batch_size: int = 64,
    max_tokens: int = MAX_TOKENS,
    chunk_lines: int = 8192,
    progress: bool = True,
) -> int:
    """Write all layers of every line of `input_file` to `output_file`; returns the line count."""
    if bilm.state == "stateful":  # keep batches = consecutive lines across chunk boundaries
        chunk_lines = max(batch_size, chunk_lines // batch_size * batch_size)
    sentence_to_index: dict[str, str] = {}
    cache: dict[str, torch.Tensor] = {}
    lines = iter(read_sentences(input_file))
    written = 0
    with (
        atomic_path(output_file) as partial,
        h5py.File(partial, "w") as out,
        tqdm(total=count_lines(input_file), unit="line", disable=not progress) as bar,
    ):
        while chunk := list(islice(lines, chunk_lines)):
            if len(cache) > MAX_CACHED_TOKENS:
                cache.clear()
            embedded = bilm.embed_sentences(chunk, batch_size, max_tokens, token_cache=cache)
            for tokens, layers in zip(chunk, embedded, strict=True):
                key = str(written)
                out.create_dataset(key, data=layers.cpu().numpy().astype(np.float32))
                sentence_to_index[" ".join(tokens)] = key
                written += 1
            bar.update(len(chunk))
        index = out.create_dataset("sentence_to_index", (1,), dtype=h5py.string_dtype())
        index[0] = json.dumps(sentence_to_index)
    return written


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ner-embed",
        description="Embed a file with one whitespace-tokenized sentence per line; write all biLM "
        "layers to HDF5 (dataset str(i) of shape (3, T_i, 2P), plus sentence_to_index).",
    )
    parser.add_argument("input", type=Path, help="text file, one tokenized sentence per line")
    parser.add_argument("output", type=Path, help="HDF5 file to write")
    parser.add_argument("--options-file", required=True, help="options.json (path or URL)")
    parser.add_argument("--weight-file", required=True, help="weights.hdf5 (path or URL)")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=64,
        help="sentences per batch in stateful mode (default 64)",
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
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
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.batch_size < 1 or args.max_tokens < 1:
        raise SystemExit("ner-embed: --batch-size and --max-tokens must be >= 1")
    if not args.input.is_file():
        raise SystemExit(f"ner-embed: input file not found: {args.input}")
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        bilm = BiLM.from_files(args.options_file, args.weight_file, state=args.state)
        bilm.to(args.device).eval()
        embed_file(
            bilm,
            args.input,
            args.output,
            batch_size=args.batch_size,
            max_tokens=args.max_tokens,
            progress=not args.no_progress,
        )
    except (OSError, ValueError) as error:  # bad options/weights/input: a one-line message
        raise SystemExit(f"ner-embed: {error}") from error
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
