"""Entity F1 and the WNUT-17 surface-form F1 of finished runs, from their test predictions.

    .venv/bin/python experiments/study/surface_f1.py outputs/learning_curve/wnut17/1 \
        --out experiments/results/adaptation/wnut17_surface_f1.json

Reads ``<DIR>/<variant>/seed<S>/predictions_test.txt`` (``token gold predicted`` lines, as
training writes them) and scores each with `ner.metrics`: the entity F1 (conlleval's reading,
results.json's test F1) and the surface-form F1 (each distinct entity text and type once, as the
shared task's ``wnuteval.py``). Writes every run's figures and each variant's mean ± std as JSON,
and prints them as a Markdown table. The surface-form F1 of a corpus does not add up over its
sentences, so there is no paired test over sentences here: compare the seeds' spread.
"""

import argparse
import json
from pathlib import Path

from ner.metrics import span_scores, surface_forms, surface_scores
from ner.reporting.learning_curve import mean_and_spread, mean_text
from ner.reporting.significance import PREDICTIONS_FILE, read_predictions


def run_scores(predictions_file: Path) -> dict[str, float]:
    """The entity and surface-form F1 (percent) of one run's test predictions."""
    found = read_predictions(predictions_file)
    forms = surface_forms(found.tokens, found.gold, found.predicted)
    return {
        "entity_f1": span_scores(found.gold, found.predicted)["f1"],
        "surface_f1": surface_scores(forms)["f1"],
    }


def variant_scores(folder: Path) -> dict[str, dict[str, float]]:
    """Seed → scores for every ``seed<S>/`` of a variant's folder with test predictions."""
    return {
        path.parent.name: run_scores(path)
        for path in sorted(folder.glob(f"seed*/{PREDICTIONS_FILE}"))
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", type=Path, help="a folder of <variant>/seed<S>/ run folders")
    parser.add_argument("--out", type=Path, required=True, help="the JSON to write")
    args = parser.parse_args()
    scored = {folder.name: variant_scores(folder) for folder in sorted(args.runs.iterdir())}
    found = {variant: seeds for variant, seeds in scored.items() if seeds}
    if not found:
        parser.error(f"{args.runs}: no <variant>/seed<S>/{PREDICTIONS_FILE}")
    summary = {}
    keys = ("entity_f1", "surface_f1")
    print("| variant | seeds | entity F1 | surface-form F1 |\n|---|---|---|---|")
    for variant, seeds in found.items():
        columns = [[scores[key] for scores in seeds.values()] for key in keys]
        summary[variant] = {
            key: dict(zip(("mean", "std"), mean_and_spread(values), strict=True))
            for key, values in zip(keys, columns, strict=True)
        }
        print(f"| {variant} | {len(seeds)} | {mean_text(columns[0])} | {mean_text(columns[1])} |")
    args.out.write_text(json.dumps({"runs": found, "mean_std": summary}, indent=2) + "\n")


if __name__ == "__main__":
    main()
