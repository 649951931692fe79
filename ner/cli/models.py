"""``ner-models``: the taggers shipped with the package, their cards, and compact copies of
trained ones.

ner-models list
ner-models show conll2003
ner-models export outputs/main_job/model my-tagger --corpus conll2003
"""

import argparse
import sys
from pathlib import Path

from ner.common.errors import NerError, exit_for_user


def build_parser() -> argparse.ArgumentParser:
    """The ``ner-models`` command line (docs/cli.md documents every option)."""
    parser = argparse.ArgumentParser(prog="ner-models", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="action", required=True)
    commands.add_parser("list", help="the shipped taggers: task, labels, scores, size, licence")
    show = commands.add_parser("show", help="print a model's card: what it tags, its scores")
    show.add_argument(
        "model", help="a shipped tagger's name, or a model folder (./NAME for a folder named so)"
    )
    export = commands.add_parser(
        "export", help="write a compact copy of a model folder, with a measured card.json"
    )
    export.add_argument("model", help="a model folder (a run's model/) or a shipped tagger")
    export.add_argument(
        "target",
        type=Path,
        help="the folder to write: new, empty or an earlier export (replaced; its MODEL_CARD.md"
        " is kept)",
    )
    export.add_argument("--corpus", help="score dev/test on this named corpus (default: the run's)")
    export.add_argument("--about", help="one line on what the tagger is, for the card")
    export.add_argument("--licence", help="the training data's licence, for the card")
    export.add_argument("--command", help="the command that trained it, for the card")
    export.add_argument(
        "--force", action="store_true", help="replace a TARGET that is not an earlier export"
    )
    return parser


def list_shipped(args: argparse.Namespace) -> None:
    """One row per shipped tagger."""
    from ner.model.card_view import card_metric
    from ner.model.shipped import read_card, shipped_taggers

    print(f"{'name':<11} {'about':<16} {'dev':>6} {'test':>6} {'size':>8}  labels; licence")
    for name, folder in shipped_taggers().items():
        card = read_card(folder)
        scores = card["scores"]
        dev, test = (scores[split][card_metric(card)] for split in ("validation", "test"))
        size = f"{card['bytes'] / 1e6:.1f} MB"
        print(
            f"{name:<11} {card['about']:<16} {dev:>6.2f} {test:>6.2f} {size:>8}  "
            f"{', '.join(card['labels'])}; {card['licence']}"
        )


def show(args: argparse.Namespace) -> None:
    """The card of a shipped tagger or model folder, headed by which of the two it is."""
    from ner.model.card_view import card_text
    from ner.model.shipped import resolve_model, shipped_taggers

    folder = resolve_model(args.model)
    shipped = shipped_taggers().get(args.model) == folder
    what = "the shipped tagger in" if shipped else "the model folder"
    print(card_text(folder, f"{args.model}: {what} {folder}"))


def export(args: argparse.Namespace) -> None:
    """Compact copy of `args.model` at `args.target` with its card (`ner.model.export`)."""
    from ner.model.export import export_model

    texts = {key: getattr(args, key) for key in ("about", "licence", "command")}
    card = export_model(
        args.model,
        args.target,
        corpus=args.corpus,
        texts={key: text for key, text in texts.items() if text is not None},
        force=args.force,
    )
    test = card["scores"]["test"]
    score = test.get("f1", test.get("accuracy"))
    print(f"ner-models: wrote {args.target} ({card['bytes'] / 1e6:.1f} MB), test {score:.2f}")


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        {"list": list_shipped, "show": show, "export": export}[args.action](args)
    except NerError as error:
        exit_for_user("ner-models", error)


if __name__ == "__main__":
    sys.exit(main())
