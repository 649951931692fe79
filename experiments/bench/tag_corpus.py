"""How fast and how lean is ``ner-predict --output-dir``? Tokens/s of ``--jobs 2`` against
``--jobs 1`` (one thread each), and the peak memory of the driver and of each worker process,
on raw-text corpora of the given sizes.

    .venv/bin/python experiments/bench/tag_corpus.py --model conll2003 --megabytes 2 --jobs 1 2 \\
        --rounds 2 --out experiments/results/bench/corpus.json

The corpus is CoNLL-2003's sentences (train, dev, test; tokens joined by spaces), one per line,
cycled until the file has the size asked for (with ``--real-every N``, every N-th line, the
others 999 spaces; one N for every size or one per size). With ``--repeat`` the larger files
cycle the smallest file's lines instead, so that a memory run tags the same sentences from a
small file and from one a hundred times its size:

    .venv/bin/python experiments/bench/tag_corpus.py --megabytes 2 200 --real-every 1 8 \\
        --repeat --jobs 1 2 --rounds 1 --out experiments/results/bench/corpus_memory.json

(2 MB: 26,206 sentences; 200 MB: those lines and the first 2,057 again, each followed by seven
filler lines, so that it is tagged in minutes). Each measurement is a fresh ``ner-predict``
process into an empty output folder, with ``--threads 1 --quiet``; its tokens/s are the closing
summary line's (wall time of the run, model loads included), its memory the largest VmHWM of
the driver and of any worker, read every 0.2 s while it runs. The set-ups take turns round by
round, and the ``--jobs`` ratios are per round.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
import time
from itertools import count, cycle
from pathlib import Path

from harness import REPO, alternate, corpus_sentences, median, memory_mb, write_record

SUMMARY = re.compile(r"([\d,]+) tokens, .* in ([\d,.]+) s \(([\d,]+) tokens/s\)")


def make_corpus(
    path: Path, megabytes: float, real_every: int = 1, base: Path | None = None
) -> Path:
    """A raw-text file of about `megabytes` MB: CoNLL-2003 sentences, one per line, cycled (or
    the lines of the file `base`); with `real_every` N > 1 only every N-th line is one of them,
    the others 999 spaces (lines that cost the tagger almost nothing, so that a file of hundreds
    of MB is tagged in minutes)."""
    if path.exists() and abs(path.stat().st_size / 1e6 - megabytes) < 0.01 * megabytes + 0.01:
        return path
    if base is not None:
        sentences = cycle(base.read_text(encoding="utf-8").splitlines())
    else:
        splits = corpus_sentences("conll2003")
        sentences = cycle([" ".join(s) for split in splits.values() for s in split["tokens"]])
    lines = (next(sentences) if n % real_every == 0 else " " * 999 for n in count())
    written, target = 0, int(megabytes * 1e6)
    with open(path, "w", encoding="utf-8") as out:
        for line in lines:
            if written >= target:
                break
            out.write(line + "\n")
            written += len(line.encode()) + 1
    return path


def one_corpus_parser(doc: str, megabytes: float) -> argparse.ArgumentParser:
    """The options of a benchmark that tags one corpus of `make_corpus`: --model, --megabytes
    (default `megabytes`), --rounds, --workdir and --out; `doc`: the script's docstring."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--model", default="conll2003", help="model folder or shipped tagger")
    p.add_argument("--megabytes", type=float, default=megabytes)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()))
    p.add_argument("--out", type=Path, help="write the record (JSON) here")
    return p


def one_corpus(args: argparse.Namespace) -> Path:
    """The corpus of `one_corpus_parser`'s options: `args.megabytes` MB of sentences."""
    return make_corpus(args.workdir / f"corpus-{args.megabytes:g}MB-1.txt", args.megabytes)


def descendants(pid: int) -> list[int]:
    """The process ids of `pid`'s children and their children."""
    found = []
    try:
        tasks = Path(f"/proc/{pid}/task").iterdir()
        children = [int(c) for t in tasks for c in (t / "children").read_text().split()]
    except (FileNotFoundError, ProcessLookupError):
        return found
    for child in children:
        found += [child, *descendants(child)]
    return found


def tag(model: str, corpus: Path, jobs: int, options: tuple[str, ...] = ()) -> dict:
    """One ``ner-predict`` run (with more `options`): its tokens/s and the peak memory of the
    driver and of its worker processes (None when it has none: one job, or a Ray cluster's)."""
    with tempfile.TemporaryDirectory() as out:
        command = [str(REPO / ".venv/bin/ner-predict"), model, str(corpus), "--output-dir", out]
        command += ["--jobs", str(jobs), "--threads", "1", "--quiet", *options]
        process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        peaks: dict[int, float] = {}
        while process.poll() is None:
            for pid in [process.pid, *descendants(process.pid)]:
                reading = memory_mb(pid)
                if reading is not None:
                    peaks[pid] = max(peaks.get(pid, 0.0), reading[1])
            time.sleep(0.2)
        err = process.stderr.read()
    if process.returncode:
        raise RuntimeError(f"ner-predict failed:\n{err[-3000:]}")
    tokens, wall, rate = SUMMARY.search(err).groups()
    workers = [peak for pid, peak in peaks.items() if pid != process.pid]
    return {
        "tokens": int(tokens.replace(",", "")),
        "wall_seconds": float(wall.replace(",", "")),
        "tokens_per_second": int(rate.replace(",", "")),
        "driver_peak_mb": round(peaks.get(process.pid, 0.0), 1),
        "worker_peak_mb": round(max(workers), 1) if workers else None,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="conll2003", help="model folder or shipped tagger")
    p.add_argument("--megabytes", type=float, nargs="+", default=[2.0])
    p.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument(
        "--real-every",
        type=int,
        nargs="+",
        default=[1],
        help="only every N-th line a sentence (memory runs); one N, or one per --megabytes",
    )
    p.add_argument(
        "--repeat", action="store_true", help="larger corpora repeat the smallest (memory runs)"
    )
    p.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()))
    p.add_argument("--out", type=Path, help="write the record (JSON) here")
    args = p.parse_args()
    sizes = sorted(args.megabytes)
    real_every = dict(
        zip(
            sizes,
            args.real_every * len(sizes) if len(args.real_every) == 1 else args.real_every,
            strict=True,
        )
    )
    corpora: dict[float, Path] = {}
    for size in sizes:  # larger corpora repeat the smallest one
        base = next(iter(corpora.values()), None) if args.repeat else None
        name = f"corpus-{size:g}MB-{real_every[size]}{'-repeat' if base else ''}.txt"
        corpora[size] = make_corpus(args.workdir / name, size, real_every[size], base)
    setups = {f"{size:g}MB jobs={jobs}": (size, jobs) for size in corpora for jobs in args.jobs}
    measured = alternate(
        list(setups),
        args.rounds,
        lambda name, _: tag(args.model, corpora[setups[name][0]], setups[name][1]),
    )
    figures = {"setups": measured, "medians": {}}
    for name, results in measured.items():
        figures["medians"][name] = {
            key: median(r[key] for r in results)
            for key in ("tokens_per_second", "driver_peak_mb", "worker_peak_mb")
        }
    for size in corpora:
        first, *others = [f"{size:g}MB jobs={jobs}" for jobs in args.jobs]
        for other in others:
            ratios = [
                b["tokens_per_second"] / a["tokens_per_second"]
                for a, b in zip(measured[first], measured[other], strict=True)
            ]
            figures["medians"][f"{other} / {first}"] = median(ratios)
    write_record(args.out, figures)


if __name__ == "__main__":
    main()
