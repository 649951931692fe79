"""``ner-models``: the taggers shipped with the package, and compact copies of trained ones.

ner-models list
ner-models export outputs/main_job/model my-tagger --corpus conll2003
"""

import argparse
import sys
from pathlib import Path

import torch

from ner.common.errors import NerError, exit_for_user
from ner.common.files import write_json, write_text


def build_parser() -> argparse.ArgumentParser:
    """The ``ner-models`` command line (docs/cli.md documents every option)."""
    parser = argparse.ArgumentParser(prog="ner-models", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="the shipped taggers: task, labels, scores, size, licence")
    export = commands.add_parser(
        "export", help="write a compact copy of a model folder, with a measured card.json"
    )
    export.add_argument("model", help="a model folder (a run's model/) or a shipped tagger")
    export.add_argument(
        "target",
        type=Path,
        help="the folder to write (replaced if present; its MODEL_CARD.md is kept)",
    )
    export.add_argument("--corpus", help="score dev/test on this named corpus (default: the run's)")
    export.add_argument("--about", help="one line on what the tagger is, for the card")
    export.add_argument("--licence", help="the training data's licence, for the card")
    export.add_argument("--command", help="the command that trained it, for the card")
    return parser


def list_shipped() -> None:
    """One row per shipped tagger."""
    from ner.model.shipped import read_card, shipped_taggers

    print(f"{'name':<11} {'about':<16} {'dev':>6} {'test':>6} {'size':>8}  labels; licence")
    for name, folder in shipped_taggers().items():
        card = read_card(folder)
        scores = card["scores"]
        metric = "accuracy" if card["task"] == "per-token labels" else "f1"
        dev, test = (scores[split][metric] for split in ("validation", "test"))
        size = f"{card['bytes'] / 1e6:.1f} MB"
        print(
            f"{name:<11} {card['about']:<16} {dev:>6.2f} {test:>6.2f} {size:>8}  "
            f"{', '.join(card['labels'])}; {card['licence']}"
        )


def export(args: argparse.Namespace) -> None:
    """Compact copy of `args.model` at `args.target`, then its card measured on one thread."""
    from ner.model.cards import measure_card
    from ner.model.shipped import CARD, portable_config
    from ner.model.tagger import Tagger

    tagger = Tagger.load(args.model)
    glove = tagger.config.get("embeddings", {}).get("glove", {}).get("source")
    config = portable_config(tagger.config)
    prose = args.target / "MODEL_CARD.md"  # hand-written: kept when the folder is replaced
    kept = prose.read_text(encoding="utf-8") if prose.is_file() else None
    tagger.save(args.target, config=config, compact=True, pretrained_source=glove)
    if kept is not None:
        write_text(prose, kept)
    torch.set_num_threads(1)
    compact = Tagger.load(args.target)
    corpus = args.corpus or tagger.config.get("data", {}).get("name")
    if not corpus:
        raise NerError(f"{args.model}: the run's corpus is unknown; name it with --corpus")
    card = {"about": args.about or "", "licence": args.licence or "", "command": args.command or ""}
    card.update(measure_card(compact, args.target, corpus))
    write_json(args.target / CARD, card, indent=2)
    test = card["scores"]["test"]
    score = test.get("f1", test.get("accuracy"))
    print(f"ner-models: wrote {args.target} ({card['bytes'] / 1e6:.1f} MB), test {score:.2f}")


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        list_shipped() if args.command == "list" else export(args)
    except NerError as error:
        exit_for_user("ner-models", error)


if __name__ == "__main__":
    sys.exit(main())
