"""Test F1 of training runs overall and on test sentences full of words the training data lacks.

    .venv/bin/python experiments/vocabulary/unseen_words.py RUN_DIR [RUN_DIR ...] \
        --corpus conll2003 --max-sentences 3000 --out experiments/results/vocabulary/summary.json

Each run dir holds the ``results.json`` and ``predictions_test.txt`` that ner-train writes. A
token is *unseen* when its lowercased form is not in the (capped) train split; the subset is the
test sentences with at least `--unseen-share` of their tokens unseen. Scores are seqeval's, in
the corpus's own scheme, as ner-train reports them.
"""

import argparse
import json
from pathlib import Path

from ner.embeddings.glove import load_glove_table
from ner.metrics import evaluate_tags
from ner.training.setup import load_splits


def read_predictions(path: Path) -> tuple[list[list[str]], list[list[str]], list[list[str]]]:
    """Tokens, gold and predicted tags per sentence of a ``token gold pred`` file."""
    tokens, gold, predicted = [], [], []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        rows = [line.split(" ") for line in block.splitlines() if line]
        if rows:
            tokens.append([row[0] for row in rows])
            gold.append([row[1] for row in rows])
            predicted.append([row[2] for row in rows])
    return tokens, gold, predicted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--corpus", default="conll2003")
    parser.add_argument("--max-sentences", type=int, default=None)
    parser.add_argument("--unseen-share", type=float, default=0.25)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    corpus = load_splits({"name": args.corpus, "max_sentences": args.max_sentences})
    train = {token.lower() for sentence in corpus.splits["train"].tokens for token in sentence}
    glove = set(load_glove_table().words)
    test = corpus.splits["test"].tokens
    test_tokens = [token.lower() for sentence in test for token in sentence]
    unseen = [token for token in test_tokens if token not in train]
    subset = [
        i
        for i, sentence in enumerate(test)
        if sum(t.lower() not in train for t in sentence) >= args.unseen_share * len(sentence)
    ]
    summary = {
        "corpus": args.corpus,
        "max_sentences": args.max_sentences,
        "test_tokens": len(test_tokens),
        "test_tokens_unseen_in_train_pct": 100 * len(unseen) / len(test_tokens),
        "test_tokens_unseen_in_train_with_glove_pct": 100
        * sum(token in glove for token in unseen)
        / len(test_tokens),
        "unseen_share": args.unseen_share,
        "subset_sentences": len(subset),
        "runs": {},
    }
    for run in args.runs:
        results = json.loads((run / "results.json").read_text())
        tokens, gold, predicted = read_predictions(run / "predictions_test.txt")
        if tokens != [list(sentence) for sentence in test]:
            raise SystemExit(f"{run}: its test predictions are not of this corpus's test split")
        scores = evaluate_tags(
            [gold[i] for i in subset], [predicted[i] for i in subset], corpus.scheme
        )
        summary["runs"][run.name] = {
            "vocabulary": results["config"]["embeddings"].get("vocabulary", "all (before)"),
            "unknown_replacement": results["config"]["embeddings"].get("unknown_replacement", 0),
            "dev_f1": results["dev"]["f1"],
            "test_f1": results["test"]["f1"],
            "test_f1_unseen_subset": scores["f1"],
            "best_epoch": results["best_epoch"],
        }
    text = json.dumps(summary, indent=1)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
