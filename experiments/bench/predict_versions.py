"""Prediction speed of two versions of the code, side by side in one run: sentences/s on one
thread, model load time, peak memory, and whether the outputs are the same.

    mkdir /tmp/ner-old && git archive <commit> ner | tar -x -C /tmp/ner-old   # the older code
    # /tmp/ner-new: the newer code the same way (or the working tree: --new .)
    .venv/bin/python experiments/bench/predict_versions.py --old /tmp/ner-old --new /tmp/ner-new \\
        --bilm ner/pretrained/elmo-small-news --rounds 3 \\
        --out experiments/results/bench/predict_versions.json

`--precision bfloat16` runs the newer version with its LSTM products in bfloat16
(`ner.common.precision`); with `--old` and `--new` the same tree, that measures what the option
alone gives.

The tagger has the default architecture (conf/model/bilstm_crf.yaml with 50-d words over the
CoNLL-2003 vocabulary, char-CNN 16/128/3, the ELMo scalar mix over the given biLM) and random
weights from seed 0, so both versions build exactly the same model; speed does not depend on the
weight values. Each measurement is a fresh process that imports `ner` from one tree, saves the
model with that tree's code, then times `Tagger.load`, `predict_tokens` over the CoNLL-2003 test
sentences (pre-tokenized), `predict` over the same sentences as raw text, and `predict` on the
raw texts in calls of `--micro-batch` texts in corpus order (what `ner-serve` tags per model call
under 16 one-text clients: short, unsorted batches), and reports its peak resident memory. The
versions alternate (old, new, old, new, ...) so both see the same load on a shared machine; the
ratio of the two per round is the figure to read. The predictions of the two
versions are compared tag by tag, and their entity confidences to the largest difference.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, resource, sys, time
import torch
from ner.model.archive import BiLMFiles
from ner.model.tagger import Tagger
from ner.tagger.dataset import Encoder
from ner.tagger.model import TaggerModel

data_file, model_dir, predictions_file = sys.argv[1], sys.argv[2], sys.argv[3]
torch.set_num_threads(1)
data = json.loads(open(data_file, encoding="utf-8").read())
encoder = Encoder.build(data["vocabulary"], data["tags"], max_chars=data["max_chars"])
torch.manual_seed(0)
sizes = {"num_words": len(encoder.words), "num_chars": len(encoder.chars)}
model = TaggerModel(**data["model"], tags=data["tags"], **sizes)
bilm = BiLMFiles(data["bilm"]["options"], data["bilm"]["weights"], "warm")
Tagger(model, encoder, bilm).save(model_dir)
del model, encoder
started = time.perf_counter()
precision = sys.argv[5]  # only a version that has the option is given one
tagger = Tagger.load(model_dir, **({} if precision == "float32" else {"precision": precision}))
load = time.perf_counter() - started
rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
test = data["test"]
tagger.predict_tokens(test[:16])  # warm-up: allocator, lazy imports
started, cpu = time.perf_counter(), time.process_time()
results = tagger.predict_tokens(test)
tokens_wall, tokens_cpu = time.perf_counter() - started, time.process_time() - cpu
started, cpu = time.perf_counter(), time.process_time()
tagger.predict([" ".join(s) for s in test])
text_wall, text_cpu = time.perf_counter() - started, time.process_time() - cpu
group = int(sys.argv[4])
tagger._token_vectors.clear()  # the biLM's char-CNN cache starts empty again
started, cpu = time.perf_counter(), time.process_time()
for first in range(0, len(test), group):  # calls of `group` texts in corpus order, as ner-serve
    tagger.predict([" ".join(s) for s in test[first : first + group]])
group_wall, group_cpu = time.perf_counter() - started, time.process_time() - cpu
with open(predictions_file, "w", encoding="utf-8") as out:
    json.dump([[r.tags, [[e.token_start, e.token_end, e.type, e.confidence]
                         for e in r.entities]] for r in results], out)
print(json.dumps({
    "load_seconds": round(load, 3),
    "pretokenized_sentences_per_second": round(len(test) / tokens_wall, 1),
    "pretokenized_sentences_per_cpu_second": round(len(test) / tokens_cpu, 1),
    "raw_text_sentences_per_second": round(len(test) / text_wall, 1),
    "raw_text_sentences_per_cpu_second": round(len(test) / text_cpu, 1),
    "micro_batches_sentences_per_second": round(len(test) / group_wall, 1),
    "micro_batches_sentences_per_cpu_second": round(len(test) / group_cpu, 1),
    "peak_rss_mb_after_load": round(rss_loaded / 1024),
    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
}))
"""


def benchmark_data(bilm: Path, sentences: int | None) -> dict:
    """What both versions read: the model config, vocabulary, tags and test sentences."""
    from ner.data import load_corpus
    from ner.tagger.dataset import entity_types, tag_list

    model = yaml.safe_load((REPO / "conf/model/bilstm_crf.yaml").read_text())
    words = yaml.safe_load((REPO / "conf/embeddings/glove.yaml").read_text())
    model.pop("_target_")
    options = json.loads((bilm / "options.json").read_text())
    corpus = load_corpus("conll2003")
    names = corpus["train"].features["tags"].feature.names
    gold = [[names[i] for i in row] for row in corpus["train"]["tags"]]
    model.update(
        tags=tag_list(entity_types(gold), model["tag_scheme"]),
        word_dim=words["glove"]["dim"],
        char_dim=words["char"]["dim"],
        char_filters=words["char"]["filters"],
        char_width=words["char"]["width"],
        elmo_dim=2 * options["lstm"]["projection_dim"],
        elmo_layers=options["lstm"]["n_layers"] + 1,
    )
    weights = next(bilm.glob("*.hdf5"))
    return {
        "model": {k: v for k, v in model.items() if k != "tags"},
        "tags": model["tags"],
        "max_chars": words["char"]["max_chars"],
        "vocabulary": [list(t) for split in corpus.values() for t in split["tokens"]],
        "test": [list(t) for t in corpus["test"]["tokens"]][:sentences],
        "bilm": {"options": str(bilm / "options.json"), "weights": str(weights)},
    }


def measure(
    tree: Path, data_file: Path, workdir: Path, name: str, group: int, precision: str
) -> dict:
    """One fresh process importing `ner` from `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    predictions = workdir / f"{name}.predictions.json"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            str(data_file),
            str(workdir / name),
            str(predictions),
            str(group),
            precision,
        ],
        capture_output=True,
        text=True,
        cwd=tree,
        env=env,
    )
    if done.returncode:
        raise RuntimeError(f"{tree}: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(old_file: Path, new_file: Path) -> dict:
    """Sentences whose tags are equal, whether the entities (type and tokens) are equal, and the
    largest difference between the two versions' confidences of the same entity."""
    old, new = json.loads(old_file.read_text()), json.loads(new_file.read_text())
    pairs = list(zip(old, new, strict=True))
    same_entities = all([e[:3] for e in a[1]] == [e[:3] for e in b[1]] for a, b in pairs)
    gaps = [abs(e[3] - f[3]) for a, b in pairs for e, f in zip(a[1], b[1], strict=False)]
    return {
        "sentences": len(pairs),
        "sentences_with_identical_tags": sum(a[0] == b[0] for a, b in pairs),
        "entities": sum(len(a[1]) for a in old),
        "identical_entities": same_entities,
        "max_confidence_difference": max(gaps, default=0.0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="checkout of the older code")
    parser.add_argument("--new", type=Path, default=REPO, help="checkout of the newer code")
    parser.add_argument("--bilm", type=Path, default=REPO / "ner/pretrained/elmo-small-news")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sentences", type=int, help="only the first N test sentences")
    parser.add_argument(
        "--micro-batch",
        type=int,
        default=9,
        help="texts per call in the micro-batch timing (ner-serve's mean under 16 clients)",
    )
    parser.add_argument(
        "--precision",
        choices=("float32", "bfloat16"),
        default="float32",
        help="the newer version's LSTM precision (the older one always runs in float32)",
    )
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args()
    precisions = {"old": "float32", "new": args.precision}
    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        data = benchmark_data(args.bilm.resolve(), args.sentences)
        data_file = workdir / "data.json"
        data_file.write_text(json.dumps(data))
        runs: dict[str, list[dict]] = {"old": [], "new": []}
        for round_ in range(args.rounds):
            for side, tree in trees.items():
                name = f"{side}{round_}"
                run = measure(tree, data_file, workdir, name, args.micro_batch, precisions[side])
                runs[side].append(run)
                print(json.dumps({"round": round_ + 1, "version": side, **run}), flush=True)
        outputs = compare(workdir / "old0.predictions.json", workdir / "new0.predictions.json")
    keys = [k for k in runs["old"][0] if k.endswith("per_second") or k.endswith("per_cpu_second")]
    pairs = list(zip(runs["old"], runs["new"], strict=True))
    speedups = {key: round(statistics.median(n[key] / o[key] for o, n in pairs), 2) for key in keys}
    results = {
        "command": "experiments/bench/predict_versions.py " + " ".join(sys.argv[1:]),
        "bilm": os.path.relpath(args.bilm.resolve(), REPO),
        "sentences": len(data["test"]),
        "tokens": sum(len(s) for s in data["test"]),
        "threads": 1,
        "cpus": os.cpu_count(),
        "precision": precisions,
        "runs": runs,
        "median_speedup_new_over_old": speedups,
        "outputs": outputs,
    }
    print(json.dumps({"speedup": speedups, "outputs": outputs}, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
