"""Which law extrapolates a learning curve better? The held-out check of both on recorded curves.

    .venv/bin/python experiments/curve/check_laws.py [--curve experiments/results/curve/curve.json]

For every variant of the study's CoNLL-2003 learning curves (experiments/results/
learning_curve.json: 2% to 100% of the training set, 3–5 seeds) and for the curve of a
``ner-curve`` report (`--curve`), both with every fraction and from 10% up: each law
(`ner.reporting.extrapolation`, ``offset`` and ``power``) fitted without the whole training set,
predicting it. Prints a Markdown table of the error (predicted − observed mean test F1) and
whether the 95% interval held the observed mean; writes it to
``experiments/results/curve/laws_holdout.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ner.reporting.extrapolation import FORMS, holdout

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "experiments" / "results" / "learning_curve.json"
OUT = ROOT / "experiments" / "results" / "curve" / "laws_holdout.md"


def curves(curve: Path) -> dict[str, list[dict]]:
    """Name → the runs of one learning curve (fraction, train_sentences, test_f1)."""
    runs = json.loads(STUDY.read_text())["runs"]
    found = {
        f"CoNLL-2003 {variant}": [r for r in runs if r["variant"] == variant]
        for variant in sorted({r["variant"] for r in runs})
    }
    where = curve.resolve()
    name = where.relative_to(ROOT).as_posix() if where.is_relative_to(ROOT) else str(curve)
    found[f"`{name}` (ner-curve)"] = json.loads(curve.read_text())["runs"]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--curve", type=Path, default=OUT.parent / "curve.json", help="a ner-curve curve.json"
    )
    args = parser.parse_args()
    lines = [
        "| curve | fractions | observed F1 | "
        + " | ".join(f"{form}: error (interval held?)" for form in FORMS)
        + " |",
        "|---|---|---|" + "---|" * len(FORMS),
    ]
    for name, runs in curves(args.curve).items():
        tried = []
        for lowest in (0.0, 0.1):
            chosen = [r for r in runs if r["fraction"] >= lowest]
            fractions = sorted({r["fraction"] for r in chosen})
            if fractions in tried:  # no fraction below 10%: the same check again
                continue
            tried.append(fractions)
            sizes, f1 = [r["train_sentences"] for r in chosen], [r["test_f1"] for r in chosen]
            cells = []
            for form in FORMS:
                check = holdout(sizes, f1, form)
                cells.append(f"{check.error:+.2f} ({'yes' if check.covered else 'no'})")
            lines.append(
                f"| {name} | {', '.join(f'{f:g}' for f in fractions)} | "
                f"{check.observed_f1:.2f} | " + " | ".join(cells) + " |"
            )
    text = "\n".join(lines) + "\n"
    OUT.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
