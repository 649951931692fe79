"""``ner-predict``'s command line: its parser, and the options that its workers take
(`ner.corpus.workers.TagOptions`)."""

import argparse

from ner.cli.options import add_model_options, encoding_name, positive_int
from ner.cli.rank_options import add_rank_options
from ner.corpus.workers import TagOptions
from ner.data.tokenize import TOKENIZERS
from ner.model.tag_files import INPUT_FORMATS, OUTPUT_FORMATS

LOAD_OPTIONS = ("device", "allow_download", "max_length", "tag_scheme", "tokenizer", "precision")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ner-predict",
        description="Tag text with a trained model directory (the model/ folder a run saves).",
    )
    p.add_argument(
        "model", help="model directory (e.g. outputs/<run>/model) or shipped tagger (conll2003)"
    )
    p.add_argument(
        "input",
        nargs="+",
        help="input file (plain, .gz, .bz2 or .xz), or - for stdin; with --output-dir: files, "
        "folders and glob patterns",
    )
    p.add_argument(
        "-o", "--output", default="-", help="output file, replaced when complete (default: stdout)"
    )
    p.add_argument("--format", choices=OUTPUT_FORMATS, default="jsonl", help="output format")
    p.add_argument("--input-format", choices=INPUT_FORMATS, default="text")
    p.add_argument(
        "--text-field", default="text", help="jsonl input: the field that holds the text"
    )
    add_corpus_options(p)
    p.add_argument("--batch-size", type=positive_int, default=64, help="sentences per batch")
    add_model_options(
        p,
        "scheme of the output tags (default: the training corpus's; for scored CoNLL input: "
        "the gold's)",
    )
    p.add_argument(
        "--tokenizer",
        choices=TOKENIZERS,
        default="news",
        help="how text input is tokenized: news (CoNLL-style, default) or social (keeps "
        "@mentions, #hashtags, URLs, e-mail addresses and emoticons whole)",
    )
    p.add_argument(
        "--encoding", type=encoding_name, default="utf-8", help="input encoding (default utf-8)"
    )
    p.add_argument(
        "--chunk-lines",
        type=positive_int,
        default=2000,
        help="input is tagged this many lines (CoNLL: sentences) at a time",
    )
    p.add_argument("--scores", help="write the scores of gold-tagged CoNLL input to this JSON file")
    add_rank_options(p)
    return p


def add_corpus_options(p: argparse.ArgumentParser) -> None:
    """``--output-dir``, ``--jobs``, ``--shard``, ``--quiet``, ``--engine``, ``--ray-address``:
    tagging a corpus."""
    p.add_argument(
        "--output-dir",
        help="tag every input into one output file each under this folder, resumably",
    )
    p.add_argument(
        "--jobs", type=positive_int, default=1, help="worker processes (with --output-dir)"
    )
    p.add_argument(
        "--shard",
        type=shard_part,
        metavar="K/N",
        help="tag only the K-th of N parts (K from 0) into --output-dir, e.g. one job array "
        "task's; a run without it then assembles the files",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines (with --output-dir)")
    p.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="where --output-dir's shards are tagged: worker processes here (local), or --jobs "
        "actors of --threads CPUs each on a Ray cluster (ray; pip install 'ner-elmo[ray]')",
    )
    p.add_argument(
        "--ray-address",
        help="the Ray cluster for --engine ray (default: RAY_ADDRESS, else the one started on "
        "this machine)",
    )


def shard_part(value: str) -> tuple[int, int]:
    """An argparse type: ``K/N`` with 0 <= K < N."""
    part, _, parts = value.partition("/")
    if not (part.isdigit() and parts.isdigit() and int(part) < int(parts)):
        raise argparse.ArgumentTypeError(f"expected K/N with 0 <= K < N, got {value!r}")
    return int(part), int(parts)


def tag_options(args: argparse.Namespace) -> TagOptions:
    """The model and tagging options of `args`, as the corpus workers take them."""
    return TagOptions(
        model=args.model,
        load={key: getattr(args, key) for key in LOAD_OPTIONS},
        threads=args.threads,
        batch_size=args.batch_size,
        chunk_lines=args.chunk_lines,
        input_format=args.input_format,
        output_format=args.format,
        text_field=args.text_field,
        tag_scheme=args.tag_scheme,
        encoding=args.encoding,
    )
