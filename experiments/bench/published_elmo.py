"""What a published ELMo costs on CPU before training starts: the feature cache for CoNLL-2003.

The training run's first step with `elmo=original` (or small/medium) is one pass of the frozen
biLM over every sentence of the three splits into the feature cache (`ner.features`). This
builds that cache, through the same code, for the first --sentences sentences of CoNLL-2003
train with an untrained biLM of the published shape (experiments/bench/published_shapes.yaml;
speed does not depend on the weights, and the real files cannot be downloaded here), and
extrapolates the build time to the whole corpus by its token count. On one thread the process's
CPU time is what the build takes on an idle core; it is the figure extrapolated, since other jobs
on a shared machine stretch the wall time but hardly the CPU time (both are recorded). The cache
size follows from the token count exactly (tokens × 3 layers × width × 2 bytes, float16), the
download size from the parameter count (float32 HDF5).

    .venv/bin/python experiments/bench/published_elmo.py --shape original --sentences 300

Prints one JSON record (also written to experiments/results/bench/published_elmo_<shape>.json).
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch
import yaml

from ner.bilm.bilm import BiLM
from ner.bilm.options import BiLMOptions
from ner.common.files import write_json
from ner.data import load_corpus
from ner.features.elmo import ElmoFeatures

ROOT = Path(__file__).resolve().parents[2]
SHAPES = ROOT / "experiments" / "bench" / "published_shapes.yaml"
RESULTS = ROOT / "experiments" / "results" / "bench"


def corpus_tokens() -> tuple[list[list[str]], int]:
    """The train sentences and the token count of train + validation + test."""
    corpus = load_corpus("conll2003")
    total = sum(sum(map(len, corpus[split]["tokens"])) for split in corpus)
    return corpus["train"]["tokens"], total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shape", default="original", choices=["small", "medium", "original"])
    parser.add_argument("--sentences", type=int, default=300)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    train, total_tokens = corpus_tokens()
    sentences = train[: args.sentences]
    tokens = sum(map(len, sentences))
    options = BiLMOptions.from_dict(yaml.safe_load(SHAPES.read_text())[args.shape])
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        torch.manual_seed(0)
        bilm = BiLM(options)
        parameters = sum(p.numel() for p in bilm.parameters())
        bilm.save(work / "options.json", work / "weights.hdf5")
        features = ElmoFeatures(
            {"options_file": str(work / "options.json"), "weight_file": str(work / "weights.hdf5"),
             "state": "warm", "batch_size": 64},
            cache_dir=work / "cache",
            progress=False,
        )  # fmt: skip
        started, cpu_started = time.perf_counter(), time.process_time()
        features.source(sentences)
        seconds = time.perf_counter() - started
        cpu_seconds = time.process_time() - cpu_started
        width = features.output_dim
    record = {
        "command": f"experiments/bench/published_elmo.py --shape {args.shape} "
        f"--sentences {args.sentences} --threads {args.threads}",
        "shape": args.shape,
        "parameters": parameters,
        "download_mb": round(parameters * 4 / 1e6),
        "slice": {
            "sentences": len(sentences),
            "tokens": tokens,
            "wall_seconds": round(seconds, 1),
            "cpu_seconds": round(cpu_seconds, 1),
        },
        "tokens_per_cpu_second": round(tokens / cpu_seconds),
        "corpus_tokens": total_tokens,
        "extrapolated_build_minutes": round(total_tokens / (tokens / cpu_seconds) / 60, 1),
        "cache_mb": round(total_tokens * 3 * width * 2 / 1e6),
        "threads": args.threads,
    }
    write_json(RESULTS / f"published_elmo_{args.shape}.json", record, indent=1)
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
