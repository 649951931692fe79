"""How does `ner-serve` hold up under load? Against `ner-predict` on the same text, side by side.

    .venv/bin/python experiments/bench/serve.py --model conll2003 \\
        --clients 16 --requests 200 --rounds 2 --out experiments/results/bench/serve_cpu.json
    # against an older version of the code (git worktree add --detach OLD_TREE <commit>)
    ... --old OLD_TREE

The model is a shipped tagger's name or a model folder (`--model`), or ``random``: the default
architecture with random weights over `--bilm` (as in bench/predict.py). The texts are the first
clients × requests sentences of the corpus's test split as raw text, one per request and one per
line. The model's process (`ner-predict`, `ner-serve`) runs on one CPU thread pinned to core
`--server-cpu` (``taskset -c``), and this process, which runs the clients, is pinned to core
`--client-cpu`, so the load does not compete for the model's core. Each round runs:

* ``ner-predict MODEL texts.txt`` (a single process tagging the file in batches): texts/s from the
  tagging time it reports, model loading excluded, and texts per CPU-second of tagging (the
  process's CPU time less that of the same command on one text);
* ``ner-serve MODEL`` (this checkout, and with `--old` the old tree's) with C concurrent clients
  each sending R requests (`load_client.py`), every text once: texts/s, texts per CPU-second of
  the whole server process (utime + stime from /proc/PID/stat over the load), p50/p99 latency,
  errors, how many micro-batches served them, and where the CPU went: the server's busiest
  thread (the model thread), its other threads (HTTP, JSON, validation, tokenization) and the
  clients (threads of this process). The server must find as many entities as `ner-predict`.

The set-ups take turns (harness.alternate) so all see the same load on a shared machine; the
figure to read is each round's server texts per CPU-second over `ner-predict`'s.
``--server-args`` passes options to ``ner-serve`` (e.g. ``"--batch-wait-ms 20"``).
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
from load_client import run_load

ENV = {**os.environ, "OMP_NUM_THREADS": "1"}


def pinned(command: list[str], cpu: int | None) -> list[str]:
    """`command` run on core `cpu` only (``taskset -c``), or as it is for None."""
    return command if cpu is None else ["taskset", "-c", str(cpu), *command]


def tree_env(tree: Path | None) -> dict[str, str]:
    """The environment of a process that imports `ner` from `tree` (None: this checkout)."""
    return ENV if tree is None else {**ENV, "PYTHONPATH": str(tree.resolve())}


def predict_cpu(
    model: Path | str, texts_file: Path, cpu: int | None, output: Path | None = None
) -> tuple[float, str]:
    """CPU seconds of one ner-predict process on the file (one thread), and its log."""
    command = [sys.executable, "-m", "ner.cli.predict", str(model), str(texts_file)]
    target = ["-o", str(output), "--format", "jsonl"] if output else ["-o", os.devnull]
    done = run_measured(pinned([*command, "--threads", "1", *target], cpu), env=ENV)
    if done["returncode"]:
        raise RuntimeError(f"ner-predict failed:\n{done['stderr'][-3000:]}")
    return done["cpu_seconds"], done["stderr"]


def predict_rate(model: Path | str, texts_file: Path, count: int, cpu: int | None) -> dict:
    """ner-predict on the file, one thread: texts per second of tagging (load excluded), and the
    CPU seconds of tagging: the process's, less those of the same command on one text (imports
    and model loading); the entities it found."""
    output = texts_file.with_name("predicted.jsonl")
    used, log = predict_cpu(model, texts_file, cpu, output)
    one_text = texts_file.with_name("one_text.txt")
    one_text.write_text(texts_file.read_text(encoding="utf-8").split("\n")[0] + "\n")
    startup, _ = predict_cpu(model, one_text, cpu)
    seconds = float(re.search(r"input tagged in ([\d.]+) s", log).group(1))
    lines = output.read_text(encoding="utf-8").splitlines()
    return {
        "seconds": seconds,
        "texts_per_second": round(count / seconds, 1),
        "tagging_cpu_seconds": round(used - startup, 2),
        "texts_per_cpu_second": round(count / (used - startup), 1),
        "entities": sum(len(json.loads(line)["entities"]) for line in lines),
    }


def tree_commit(tree: Path) -> str:
    """The commit a checkout is at (short hash)."""
    done = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


def process_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used so far, all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
    model: Path | str,
    texts: list[str],
    clients: int,
    requests: int,
    port: int,
    options: list[str],
    cpu: int | None,
    tree: Path | None = None,
) -> dict:
    """ner-serve (of `tree`; None: this checkout) on one thread, pinned to core `cpu`, under
    `clients` × `requests` concurrent requests."""
    command = [sys.executable, "-m", "ner.cli.serve", str(model), "--port", str(port)]
    server = subprocess.Popen(
        pinned([*command, "--threads", "1", *options], cpu),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=tree_env(tree),
        cwd=tree,
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
        process_before = process_cpu_seconds(server.pid)
        report = run_load(url, texts, clients=clients, requests=requests).summary()
        server_cpu = process_cpu_seconds(server.pid) - process_before
        clients_used = client_cpu_seconds() - clients_before
        report["server_cpu_seconds"] = round(server_cpu, 2)
        report["texts_per_server_cpu_second"] = round(report["texts"] / server_cpu, 1)
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
        "--model",
        default="random",
        help="a shipped tagger's name, a model folder, or random (the default architecture)",
    )
    parser.add_argument(
        "--bilm", default="shipped", help="with --model random: shipped | fixture | small | DIR"
    )
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--server-args", default="", help='e.g. "--batch-wait-ms 20"')
    parser.add_argument("--old", type=Path, help="also measure ner-serve of this checkout")
    parser.add_argument("--server-cpu", type=int, default=0, help="core of the model's process")
    parser.add_argument("--client-cpu", type=int, default=1, help="core of the load's clients")
    parser.add_argument("--no-pin", action="store_true", help="run everything on every core")
    parser.add_argument("--out", type=Path, help="write the record here")
    args = parser.parse_args()
    server_cpu = None if args.no_pin else args.server_cpu
    if not args.no_pin:
        os.sched_setaffinity(0, {args.client_cpu})  # the clients are threads of this process
    corpus = corpus_sentences(args.corpus)
    count = args.clients * args.requests
    texts = [" ".join(tokens) for tokens in corpus["test"]["tokens"]][:count]
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if args.model == "random":
            spec = default_tagger_spec(corpus["train"]["tags"], bilm_folder(args.bilm, workdir))
            vocabulary = [s for split in corpus.values() for s in split["tokens"]]
            model: Path | str = save_default_tagger(spec, vocabulary, workdir / "model")
            described = f"default architecture, random weights, {args.bilm} biLM"
        else:
            model = described = args.model
        texts_file = workdir / "texts.txt"
        texts_file.write_text("\n".join(texts) + "\n", encoding="utf-8")
        server_args = shlex.split(args.server_args)
        trees = {"ner_serve": None}
        if args.old is not None:
            trees["ner_serve_old"] = args.old

        def run(name: str, _round: int) -> dict:
            if name == "ner_predict":
                return predict_rate(model, texts_file, len(texts), server_cpu)
            return serve_rate(
                model,
                texts,
                args.clients,
                args.requests,
                args.port,
                server_args,
                server_cpu,
                trees[name],
            )

        measured = alternate(["ner_predict", *trees], args.rounds, run)
    rounds = [{name: measured[name][number] for name in measured} for number in range(args.rounds)]
    figures = {
        "model": described,
        "corpus": f"{args.corpus} test",
        "texts": len(texts),
        "tokens": sum(len(t.split()) for t in texts),
        "threads": 1,
        "pinned": None
        if args.no_pin
        else {"model_process_core": args.server_cpu, "clients_core": args.client_cpu},
        "old_tree_commit": tree_commit(args.old) if args.old else None,
        "rounds": rounds,
    }
    for name in trees:
        # the figure to read: texts per CPU-second of the whole server process over texts per
        # CPU-second of ner-predict's tagging, in the same round
        figures[f"{name}_over_predict_texts_per_cpu_second"] = [
            round(
                r[name]["texts_per_server_cpu_second"] / r["ner_predict"]["texts_per_cpu_second"], 2
            )
            for r in rounds
        ]
        figures[f"{name}_over_predict_texts_per_second"] = [
            round(r[name]["texts_per_second"] / r["ner_predict"]["texts_per_second"], 2)
            for r in rounds
        ]
        figures[f"{name}_p99_ms"] = [r[name]["p99_ms"] for r in rounds]
        figures[f"{name}_same_entities_as_predict"] = [
            r[name]["entities"] == r["ner_predict"]["entities"] for r in rounds
        ]
    write_record(args.out, figures)


if __name__ == "__main__":
    main()
