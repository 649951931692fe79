"""A server's resident memory under a long stream of varied requests, with and without handing
freed memory back to the system when the model thread is idle.

    .venv/bin/python experiments/bench/serve_memory.py --bursts 1000 \\
        --out experiments/results/bench/serve_memory.json

The model is the default architecture with random weights over the shipped biLM (as in
bench/predict.py). Each burst sends 1-16 requests of 1-8 texts at once to one `MicroBatcher`
(the batching of `ner-serve`) and waits for all of them; the texts are CoNLL-2003 sentences
(all splits) as raw text, drawn at random with a fixed seed, so batches vary in size and new
words keep arriving, as on a live service. Bursts follow each other at once; every `--every`
bursts the clients fall quiet for `--pause` seconds (longer than the batcher's one second of
quiet before it hands memory back). Every variant (precision × idle hook) runs in its own fresh
process on one thread with the same bursts and reports its resident memory (RSS) after loading,
then before and after each pause; its peak; the CPU time of the bursts (pauses excluded) and
the CPU time spent in the idle hook. ``--primitive-cache N`` runs them with oneDNN's primitive
cache (the compiled kernels it keeps per input shape, 1024 by default) limited to N entries,
``--lru-cache N`` likewise torch's own cache of oneDNN operations (``LRU_CACHE_CAPACITY``).
"""

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from predict import REPO, bilm_files, build_model

from ner.common.files import write_json
from ner.common.memory import release_free_memory
from ner.data import load_corpus
from ner.data.tokenize import tokenize_sentences
from ner.model.tagger import Tagger
from ner.serving.batcher import MicroBatcher

SHIPPED_BILM = REPO / "ner" / "pretrained" / "elmo-small-news"
PRECISIONS = ("float32", "bfloat16")
HOOKS = ("release", "none")


def resident_mb() -> float:
    """This process's resident memory now, in MB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def run_variant(model_dir: Path, texts: list[str], args: argparse.Namespace) -> dict:
    """One variant in this process: RSS over the bursts, CPU time, time in the idle hook."""
    torch.set_num_threads(1)
    tagger = Tagger.load(model_dir, precision=args.precision)
    hook_seconds = 0.0

    def timed_release() -> None:
        nonlocal hook_seconds
        started = time.thread_time()
        release_free_memory()
        hook_seconds += time.thread_time() - started

    on_idle = timed_release if args.hook == "release" else None
    batcher = MicroBatcher(tagger, on_idle=on_idle)
    rng = random.Random(args.seed)
    timeline = [[0, round(resident_mb()), None]]  # bursts, RSS before and after the pause
    cpu = 0.0
    started = time.process_time()
    sentences = 0
    for burst in range(1, args.bursts + 1):
        requests = [rng.sample(texts, rng.randint(1, 8)) for _ in range(rng.randint(1, 16))]
        futures = [
            batcher.submit(request, [tokenize_sentences(text) for text in request])
            for request in requests
        ]
        for future in futures:
            sentences += sum(len(result.sentences) for result in future.result(timeout=600))
        if burst % args.every == 0:
            busy = round(resident_mb())
            cpu += time.process_time() - started
            time.sleep(args.pause)
            started = time.process_time()
            timeline.append([burst, busy, round(resident_mb())])
    batcher.close()
    return {
        "precision": args.precision,
        "idle_hook": args.hook,
        "bursts": args.bursts,
        "requests": batcher.requests,
        "batches": batcher.batches,
        "sentences": sentences,
        "cpu_seconds": round(cpu, 1),
        "idle_hook_cpu_seconds": round(hook_seconds, 2),
        "rss_mb_before_and_after_pause": timeline,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bursts", type=int, default=1500)
    parser.add_argument("--every", type=int, default=100, help="pause after every N bursts")
    parser.add_argument("--pause", type=float, default=2.0, help="seconds of quiet")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hooks", nargs="+", choices=HOOKS, default=list(HOOKS))
    parser.add_argument("--primitive-cache", type=int, help="oneDNN primitive cache capacity")
    parser.add_argument("--lru-cache", type=int, help="torch's oneDNN operation cache capacity")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--model", type=Path, help=argparse.SUPPRESS)  # set for a variant's run
    parser.add_argument("--precision", help=argparse.SUPPRESS)
    parser.add_argument("--hook", help=argparse.SUPPRESS)
    args = parser.parse_args()
    corpus = load_corpus("conll2003")
    sentences = [list(tokens) for split in corpus.values() for tokens in split["tokens"]]
    texts = sorted({" ".join(tokens) for tokens in sentences})
    if args.model:  # one variant, in a fresh process started below
        print(json.dumps(run_variant(args.model, texts, args)))
        return
    names = corpus["train"].features["tags"].feature.names
    gold = [[names[i] for i in row] for row in corpus["train"]["tags"]]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        bilm = bilm_files(str(SHIPPED_BILM), Path(tmp))
        model = build_model(sentences, gold, bilm, Path(tmp) / "m")
        for precision, hook in [(p, h) for p in PRECISIONS for h in args.hooks]:
            command = [sys.executable, __file__, "--model", str(model), "--precision", precision]
            command += ["--hook", hook, "--bursts", str(args.bursts), "--every", str(args.every)]
            command += ["--pause", str(args.pause), "--seed", str(args.seed)]
            env = dict(os.environ)
            if args.primitive_cache is not None:
                env["ONEDNN_PRIMITIVE_CACHE_CAPACITY"] = str(args.primitive_cache)
            if args.lru_cache is not None:
                env["LRU_CACHE_CAPACITY"] = str(args.lru_cache)
            done = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
            results.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(json.dumps(results[-1]), flush=True)
    report = {
        "threads": 1,
        "primitive_cache": args.primitive_cache or 1024,
        "lru_cache": args.lru_cache or 1024,
        "variants": results,
    }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_json(args.out, report, indent=2)


if __name__ == "__main__":
    main()
