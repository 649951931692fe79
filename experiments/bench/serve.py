"""How does `ner-serve` hold up under load? Against `ner-predict` on the same text, side by side.

    .venv/bin/python experiments/bench/serve.py --clients 16 --requests 200 --rounds 1 \\
        --port 8791 --out experiments/results/bench/serve_load.json

The model is the default architecture with random weights over `--bilm` (as in
bench/predict.py); the texts are the first clients × requests sentences of the corpus's test split
as raw text, one per request and one per line. Each round runs, on one CPU thread each:

* ``ner-predict MODEL texts.txt`` (a single process tagging the file in batches): texts/s from the
  tagging time it reports, model loading excluded;
* ``ner-serve MODEL`` with C concurrent clients each sending R requests (`ner.serving.load`),
  every text once: texts/s, p50/p99 latency, errors, how many micro-batches served them, and
  where the CPU went: the server's busiest thread (the model thread), its other threads (HTTP,
  JSON, validation, tokenization) and the clients (threads of this process).

The two take turns (harness.alternate) so both see the same load on a shared machine.
``--server-args`` passes options to ``ner-serve`` (e.g. ``"--batch-wait-ms 20"``) to compare
batching settings.
"""

import argparse
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from harness import (
    alternate,
    bilm_folder,
    corpus_sentences,
    default_tagger_spec,
    run_measured,
    save_default_tagger,
    write_record,
)

from ner.serving.load import run_load

ENV = {**os.environ, "OMP_NUM_THREADS": "1"}


def predict_cpu(model: Path, texts_file: Path) -> tuple[float, str]:
    """CPU seconds of one ner-predict process on the file (one thread), and its log."""
    command = [sys.executable, "-m", "ner.cli.predict", str(model), str(texts_file)]
    done = run_measured([*command, "--threads", "1", "-o", os.devnull], env=ENV)
    if done["returncode"]:
        raise RuntimeError(f"ner-predict failed:\n{done['stderr'][-3000:]}")
    return done["cpu_seconds"], done["stderr"]


def predict_rate(model: Path, texts_file: Path, count: int) -> dict:
    """ner-predict on the file, one thread: texts per second of tagging (load excluded), and the
    CPU seconds of tagging: the process's, less those of the same command on one text (imports
    and model loading)."""
    cpu, log = predict_cpu(model, texts_file)
    one_text = texts_file.with_name("one_text.txt")
    one_text.write_text(texts_file.read_text(encoding="utf-8").split("\n")[0] + "\n")
    startup, _ = predict_cpu(model, one_text)
    seconds = float(re.search(r"input tagged in ([\d.]+) s", log).group(1))
    return {
        "seconds": seconds,
        "texts_per_second": round(count / seconds, 1),
        "tagging_cpu_seconds": round(cpu - startup, 2),
        "texts_per_cpu_second": round(count / (cpu - startup), 1),
    }


def thread_times(pid: int) -> dict[str, tuple[float, float]]:
    """Per thread of process `pid` (by thread id): seconds on a CPU and seconds runnable but
    waiting for one (Linux schedstat)."""
    times = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        running, waiting, _ = (task / "schedstat").read_text().split()
        times[task.name] = (int(running) / 1e9, int(waiting) / 1e9)
    return times


def client_cpu_seconds() -> float:
    """CPU seconds this process (the load's client threads) has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def serve_rate(
    model: Path, texts: list[str], clients: int, requests: int, port: int, options: list[str]
) -> dict:
    """ner-serve on one thread under `clients` × `requests` concurrent requests."""
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ner.cli.serve",
            str(model),
            "--port",
            str(port),
            "--threads",
            "1",
            *options,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=ENV,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        health = None
        while health is None:  # until the model is loaded and the port is open
            if server.poll() is not None:
                raise RuntimeError(f"ner-serve exited with status {server.returncode}")
            try:
                health = json.loads(urllib.request.urlopen(f"{url}/health", timeout=5).read())
            except OSError:
                time.sleep(0.5)
        server_before, clients_before = thread_times(server.pid), client_cpu_seconds()
        report = run_load(url, texts, clients=clients, requests=requests).summary()
        clients_used = client_cpu_seconds() - clients_before
        # (cpu, waiting for a core) of each server thread during the load, busiest first
        server_used = sorted(
            (
                (
                    cpu - server_before.get(tid, (0.0, 0.0))[0],
                    wait - server_before.get(tid, (0.0, 0.0))[1],
                )
                for tid, (cpu, wait) in thread_times(server.pid).items()
            ),
            reverse=True,
        )
        after = json.loads(urllib.request.urlopen(f"{url}/health").read())
        report["micro_batches"] = after["batches"] - health["batches"]
        report["texts_per_micro_batch"] = round(report["texts"] / report["micro_batches"], 1)
        model_cpu, model_wait = server_used[0]
        report["texts_per_model_thread_cpu_second"] = round(report["texts"] / model_cpu, 1)
        report["cpu_seconds"] = {
            "server_model_thread": round(model_cpu, 2),
            "server_other_threads": round(sum(cpu for cpu, _ in server_used[1:]), 2),
            "clients": round(clients_used, 2),
        }
        # the model thread's time: tagging, runnable but without a free core, and the rest
        # (waiting for requests or for the interpreter lock)
        report["model_thread_seconds"] = {
            "on_cpu": round(model_cpu, 2),
            "waiting_for_a_core": round(model_wait, 2),
            "idle_or_waiting_for_the_lock": round(report["seconds"] - model_cpu - model_wait, 2),
        }
        return report
    finally:
        server.terminate()
        server.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default="conll2003", help="a named corpus or a folder")
    parser.add_argument(
        "--bilm", default="shipped", help="shipped | fixture | small | medium | original | DIR"
    )
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--server-args", default="", help='e.g. "--batch-wait-ms 20"')
    parser.add_argument("--out", type=Path, help="write the record here")
    args = parser.parse_args()
    corpus = corpus_sentences(args.corpus)
    count = args.clients * args.requests
    texts = [" ".join(tokens) for tokens in corpus["test"]["tokens"]][:count]
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        spec = default_tagger_spec(corpus["train"]["tags"], bilm_folder(args.bilm, workdir))
        vocabulary = [s for split in corpus.values() for s in split["tokens"]]
        model = save_default_tagger(spec, vocabulary, workdir / "model")
        texts_file = workdir / "texts.txt"
        texts_file.write_text("\n".join(texts) + "\n", encoding="utf-8")
        server_args = shlex.split(args.server_args)

        def run(name: str, _round: int) -> dict:
            if name == "ner_predict":
                return predict_rate(model, texts_file, len(texts))
            return serve_rate(model, texts, args.clients, args.requests, args.port, server_args)

        measured = alternate(["ner_predict", "ner_serve"], args.rounds, run)
    rounds = [
        {"ner_predict": p, "ner_serve": s}
        for p, s in zip(measured["ner_predict"], measured["ner_serve"], strict=True)
    ]
    ratios = [
        r["ner_serve"]["texts_per_second"] / r["ner_predict"]["texts_per_second"] for r in rounds
    ]
    figures = {
        "model": f"default architecture, random weights, {args.bilm} biLM",
        "corpus": f"{args.corpus} test",
        "texts": len(texts),
        "tokens": sum(len(t.split()) for t in texts),
        "threads": 1,
        "rounds": rounds,
        "serve_over_predict_texts_per_second": [round(r, 2) for r in ratios],
        # the model's efficiency alone: texts per CPU-second of the server's model thread over
        # texts per CPU-second of ner-predict's tagging
        "serve_model_thread_over_predict_texts_per_cpu_second": [
            round(
                r["ner_serve"]["texts_per_model_thread_cpu_second"]
                / r["ner_predict"]["texts_per_cpu_second"],
                2,
            )
            for r in rounds
        ],
    }
    write_record(args.out, figures)


if __name__ == "__main__":
    main()
