"""``ner-data`` (also ``python -m ner.cli.data``): prepare corpora (download, check, cache) and
report their sizes.

ner-data prepare conll2003 conll2000 --glove
ner-data prepare path/to/folder --columns tokens pos chunk tags --tag-scheme bioes
ner-data prepare mydata.tsv --columns tokens tags --holdout 0.1
ner-data list
"""

import argparse
import logging
import sys

from ner.common.errors import NerError, report_user_error
from ner.data.builder import SPLITS
from ner.data.corpora import NAMED_CORPORA, prepare_corpus
from ner.data.tag_schemes import SCHEMES
from ner.embeddings.glove import load_glove


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ner-data", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="list the named corpora")
    prepare = commands.add_parser("prepare", help="download, check and cache corpora")
    prepare.add_argument(
        "corpora", nargs="+", help="named corpora, folders of column files or column files"
    )
    prepare.add_argument(
        "--glove",
        nargs="?",
        const="glove.6B.50d",
        metavar="SOURCE",
        help="also load GloVe (default glove.6B.50d, or a path/URL) and report coverage",
    )
    prepare.add_argument("--tag-scheme", choices=SCHEMES, help="convert tags (default: keep)")
    prepare.add_argument("--lenient", action="store_true", default=None, help="repair bad tags")
    prepare.add_argument("--columns", nargs="+", help="column names of column files")
    prepare.add_argument("--validation-fraction", type=float, help="carve validation from train")
    prepare.add_argument(
        "--holdout",
        type=float,
        help="carve each missing dev/test split from train, this fraction each (e.g. 0.1)",
    )
    prepare.add_argument(
        "--holdout-seed", type=int, default=0, help="picks the held-out sentences (default 0)"
    )
    prepare.add_argument("--nltk-data-url", help="nltk_data mirror (URL or folder)")
    return parser


def _prepare(args: argparse.Namespace) -> None:
    header = f"{'corpus':<16}{'split':<12}{'sentences':>10}{'tokens':>10}  scheme       repaired"
    print(header)
    prepared = []
    for name in args.corpora:
        corpus, info = prepare_corpus(
            name,
            tag_scheme=args.tag_scheme,
            lenient=args.lenient,
            columns=args.columns,
            validation_fraction=args.validation_fraction,
            holdout=args.holdout,
            holdout_seed=args.holdout_seed,
            nltk_data_url=args.nltk_data_url,
        )
        prepared.append((info.name, corpus))
        scheme = (
            info.source_scheme
            if info.tag_scheme == info.source_scheme
            else f"{info.source_scheme}>{info.tag_scheme}"
        )
        for split in SPLITS:
            print(
                f"{info.name:<16}{split:<12}{info.sentences[split]:>10,}{info.tokens[split]:>10,}"
                f"  {scheme:<13}{info.repairs[split]:>8}"
            )
    if args.glove:
        for name, corpus in prepared:
            tokens = [
                t for split in SPLITS for sentence in corpus[split]["tokens"] for t in sentence
            ]
            vocabulary = sorted(set(tokens))
            vectors = load_glove(args.glove, vocabulary)
            print(
                f"GloVe {vectors.source} ({vectors.dim}-d) on {name}: {int(vectors.found.sum()):,} "
                f"of {len(vocabulary):,} word types found; token coverage "
                f"{vectors.coverage(tokens):.2f}%"
            )


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    if args.command == "list":
        for name, corpus in NAMED_CORPORA.items():
            print(f"{name:<16}{corpus.description}")
        return 0
    try:
        _prepare(args)
    except NerError as error:  # a bad file, a checksum mismatch, a failed download: one line
        return report_user_error("ner-data", error)
    return 0


if __name__ == "__main__":
    sys.exit(main())
