"""What `--precision bfloat16` changes on trained taggers, and how much faster it is.

    .venv/bin/python experiments/bench/precision_agreement.py MODEL_DIR [MODEL_DIR ...] \\
        --corpus conll2003 --rounds 3 --out experiments/results/bench/precision_agreement.json

For each model directory (a training run's `model/`), the corpus's validation and test sentences
are tagged pre-tokenized, once with the LSTM products in float32 and once in bfloat16
(`ner.common.precision`), on one thread. Reported per split: tokens and sentences whose tag
differs, entities (type and token span) found by one precision only, conlleval F1 of each, and
the largest and mean difference of the confidences of the entities both found. Speed: the test
split tagged `--rounds` times in each precision, alternating, as sentences per CPU-second; the
ratio per round is the figure to read.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import datasets
import torch

from ner.common.files import write_json
from ner.common.precision import PRECISIONS
from ner.data import load_corpus
from ner.metrics import span_scores
from ner.model.tagger import TaggedText, Tagger


def entities(result: TaggedText) -> dict[tuple[str, int, int], float]:
    """(type, first token, end token) → confidence."""
    return {(e.type, e.token_start, e.token_end): e.confidence for e in result.entities}


def agreement(
    gold: list[list[str]], exact: list[TaggedText], reduced: list[TaggedText]
) -> dict[str, float | int]:
    """How the bfloat16 predictions differ from the float32 ones on one split."""
    pairs = list(zip(exact, reduced, strict=True))
    gaps, only_one = [], 0
    for a, b in pairs:
        found_a, found_b = entities(a), entities(b)
        only_one += len(found_a.keys() ^ found_b.keys())
        gaps += [abs(found_a[key] - found_b[key]) for key in found_a.keys() & found_b.keys()]
    return {
        "sentences": len(pairs),
        "tokens": sum(len(a.tags) for a in exact),
        "tokens_with_other_tag": sum(
            x != y for a, b in pairs for x, y in zip(a.tags, b.tags, strict=True)
        ),
        "sentences_with_other_tags": sum(a.tags != b.tags for a, b in pairs),
        "entities_float32": sum(len(a.entities) for a in exact),
        "entities_found_by_one_only": only_one,
        "f1_float32": round(span_scores(gold, [a.tags for a in exact])["f1"], 2),
        "f1_bfloat16": round(span_scores(gold, [b.tags for b in reduced])["f1"], 2),
        "max_confidence_difference": max(gaps, default=0.0),
        "mean_confidence_difference": statistics.fmean(gaps) if gaps else 0.0,
    }


def measure(model_dir: Path, data: datasets.DatasetDict, rounds: int) -> dict:
    """Agreement per split and speed for one model directory."""
    taggers = {p: Tagger.load(model_dir, precision=p) for p in PRECISIONS}
    result: dict = {"model": str(model_dir)}
    splits = {}
    for split in ("validation", "test"):
        names = data[split].features["tags"].feature.names
        gold = [[names[i] for i in row] for row in data[split]["tags"]]
        splits[split] = [list(tokens) for tokens in data[split]["tokens"]]
        predicted = {p: t.predict_tokens(splits[split]) for p, t in taggers.items()}
        result[split] = agreement(gold, predicted["float32"], predicted["bfloat16"])
    test = splits["test"]
    rates: dict[str, list[float]] = {p: [] for p in PRECISIONS}
    for _ in range(rounds):
        for precision, tagger in taggers.items():
            started = time.process_time()
            tagger.predict_tokens(test)
            rates[precision].append(len(test) / (time.process_time() - started))
    result["test_sentences_per_cpu_second"] = {
        precision: [round(rate, 1) for rate in values] for precision, values in rates.items()
    }
    ratios = [b / a for a, b in zip(rates["float32"], rates["bfloat16"], strict=True)]
    result["speedup_median"] = round(statistics.median(ratios), 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", type=Path, nargs="+", help="model directories")
    parser.add_argument("--corpus", default="conll2003")
    parser.add_argument("--rounds", type=int, default=3, help="timed passes per precision")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args()
    torch.set_num_threads(1)
    data = load_corpus(args.corpus)
    results = []
    for model_dir in args.models:
        results.append(measure(model_dir, data, args.rounds))
        print(json.dumps(results[-1]), flush=True)
    report = {
        "command": "experiments/bench/precision_agreement.py " + " ".join(sys.argv[1:]),
        "corpus": args.corpus,
        "threads": 1,
        "cpus": os.cpu_count(),
        "models": results,
    }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_json(args.out, report, indent=2)


if __name__ == "__main__":
    main()
