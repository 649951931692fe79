"""What does a kill cost? ``ner-predict --output-dir`` killed half-way and rerun, against one
uninterrupted run: wall seconds of the two processes together over the uninterrupted run's, and
the outputs compared byte for byte.

    .venv/bin/python experiments/bench/corpus_resume.py --model outputs/glove_only/model \\
        --megabytes 20 --jobs 2 --rounds 2 --out experiments/results/bench/corpus_resume.json

The corpus is `tag_corpus.py`'s (CoNLL-2003 sentences as raw text, cycled to `--megabytes`).
An uninterrupted run and a killed-and-resumed one take turns round by round, each a fresh
``ner-predict MODEL FILE --output-dir DIR --jobs N --threads 1 --quiet`` into an empty folder.
The killed run gets SIGKILL (its process group: driver and workers, as a lost node or an
out-of-memory kill takes them) as soon as half of the file's shards are kept in
``DIR/.ner-predict/shards/``; the same command is then run again to its end. Model loads,
reading the input and checking the manifest are inside both, as a user's rerun has them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from harness import REPO, alternate, median, write_record
from tag_corpus import one_corpus, one_corpus_parser

CHUNK_LINES = 2000  # ner-predict's default --chunk-lines


def command(model: str, corpus: Path, out: Path, jobs: int) -> list[str]:
    return [
        str(REPO / ".venv/bin/ner-predict"), model, str(corpus), "--output-dir", str(out),
        "--jobs", str(jobs), "--threads", "1", "--quiet",
    ]  # fmt: skip


def uninterrupted(model: str, corpus: Path, out: Path, jobs: int) -> dict:
    started = time.perf_counter()
    subprocess.run(command(model, corpus, out, jobs), check=True, stderr=subprocess.DEVNULL)
    return {"wall_seconds": round(time.perf_counter() - started, 1)}


def killed_and_resumed(model: str, corpus: Path, out: Path, jobs: int, shards: int) -> dict:
    """Run until half of the `shards` are kept, SIGKILL the process group, rerun to the end."""
    kept = out / ".ner-predict" / "shards" / corpus.with_suffix(".jsonl").name
    started = time.perf_counter()
    process = subprocess.Popen(
        command(model, corpus, out, jobs), stderr=subprocess.DEVNULL, start_new_session=True
    )
    while process.poll() is None:
        if kept.is_dir() and len(list(kept.iterdir())) >= shards // 2:
            os.killpg(process.pid, signal.SIGKILL)
            break
        time.sleep(0.1)
    process.wait()
    first = time.perf_counter() - started
    done_at_kill = len(list(kept.iterdir())) if kept.is_dir() else 0
    second = uninterrupted(model, corpus, out, jobs)["wall_seconds"]
    return {
        "wall_seconds": round(first + second, 1),
        "killed_after_seconds": round(first, 1),
        "shards_kept_at_kill": done_at_kill,
        "resumed_seconds": second,
    }


def main() -> None:
    p = one_corpus_parser(__doc__, megabytes=20.0)
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    corpus = one_corpus(args)
    with open(corpus, "rb") as lines:
        shards = -(-sum(1 for _ in lines) // CHUNK_LINES)
    outputs: dict[str, bytes] = {}

    def measure(name: str, number: int) -> dict:
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder)
            if name == "uninterrupted":
                result = uninterrupted(args.model, corpus, out, args.jobs)
            else:
                result = killed_and_resumed(args.model, corpus, out, args.jobs, shards)
            outputs[f"{name}{number}"] = (out / corpus.with_suffix(".jsonl").name).read_bytes()
        return result

    measured = alternate(["uninterrupted", "killed_and_resumed"], args.rounds, measure)
    ratios = [
        round(k["wall_seconds"] / u["wall_seconds"], 3)
        for u, k in zip(measured["uninterrupted"], measured["killed_and_resumed"], strict=True)
    ]
    write_record(
        args.out,
        {
            "corpus_bytes": corpus.stat().st_size,
            "shards": shards,
            "jobs": args.jobs,
            "measurements": measured,
            "resumed_over_uninterrupted": ratios,
            "median_ratio": median(ratios),
            "outputs_identical": len(set(outputs.values())) == 1,
        },
    )


if __name__ == "__main__":
    main()
