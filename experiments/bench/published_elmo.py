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

    .venv/bin/python experiments/bench/published_elmo.py --shape original --sentences 300 \
        --out experiments/results/bench/published_elmo_original.json

Prints one JSON record (`harness.write_record`), written to --out when given.
"""

import argparse
import tempfile
import time
from pathlib import Path

import torch
from harness import published_shape, random_bilm, write_record

from ner.data import load_corpus
from ner.features.elmo import ElmoFeatures


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
    parser.add_argument("--out", type=Path, help="write the record here")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    train, total_tokens = corpus_tokens()
    sentences = train[: args.sentences]
    tokens = sum(map(len, sentences))
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        options, weights = random_bilm(published_shape(args.shape), work)
        features = ElmoFeatures(
            {"options_file": str(options), "weight_file": str(weights), "state": "warm",
             "batch_size": 64},
            cache_dir=work / "cache",
            progress=False,
        )  # fmt: skip
        parameters = sum(p.numel() for p in features.bilm().parameters())
        started, cpu_started = time.perf_counter(), time.process_time()
        features.source(sentences)
        seconds = time.perf_counter() - started
        cpu_seconds = time.process_time() - cpu_started
        width = features.output_dim
    figures = {
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
    write_record(args.out, figures)


if __name__ == "__main__":
    main()
