"""Pretraining speed of two versions of the code, side by side in one run, and the matmul peak.

    git worktree add --detach ../ner-old <commit>      # the code to compare against
    .venv/bin/python experiments/pretrain/speed_versions.py --old ../ner-old --new . \\
        --threads 1 --rounds 3 --steps 8 --out experiments/results/pretrain/speed_versions.json

The corpus (conf/pretrain.yaml's sources) is encoded once, by the new code, into a
temporary .npz; each measurement is a fresh process that imports `ner` from one of the two trees,
builds the default biLM shape and the default batch (64 streams × 20 steps, 2048 negatives,
dropout 0.1, Adam), and times `--steps` training steps after 2 warm-up steps. The versions
alternate (old, new, new, old, old, new, ...) so that both see the same load on a shared
machine. The matmul peak is measured in the same process right before and right after the
steps: the best of several 2048² `torch.mm` timings on the same threads, so a moment of
contention does not lower it. The FLOPs of one step (matmuls and convolutions, forward and
backward, counted by `torch.utils.flop_counter`) over the step time give the share of that peak
each version reaches. Every step is also timed on its own: on a shared machine the fastest step
of a measurement is the one least disturbed by other jobs, so the ratios of those (per round)
are a second, steadier estimate of the speed-up. The losses of the last step are recorded too:
the two versions run the same computation, so they must agree.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CHILD = r"""
import json, sys, time
import numpy as np, torch
import ner
from omegaconf import OmegaConf
from torch.utils.flop_counter import FlopCounterMode
from ner.bilm.char_ids import batch_to_ids
from ner.bilm.options import BiLMOptions
from ner.pretrain.corpus import Split
from ner.pretrain.language_model import BidirectionalLM
from ner.pretrain.streams import StreamBatcher
from ner.pretrain.trainer import train_step

try:  # how `ner-pretrain` sets up its process (threads, allocator)
    from ner.pretrain.trainer import setup_process
except ImportError:  # code from before setup_process: threads only
    setup_process = torch.set_num_threads

data_file, config_file = sys.argv[1], sys.argv[2]
threads, steps, batch_size = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
setup_process(threads)

def matmul_peak(repeats=6):  # best GFLOP/s of a 2048² matmul (output preallocated)
    a, b, c = torch.randn(2048, 2048), torch.randn(2048, 2048), torch.empty(2048, 2048)
    torch.mm(a, b, out=c)
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b, out=c)
        best = max(best, 2 * 2048**3 / (time.perf_counter() - start) / 1e9)
    return best
cfg = OmegaConf.load(config_file)
data = np.load(data_file)
types = [str(t) for t in data["types"]]
split = Split(data["ids"], data["offsets"])
options = BiLMOptions.from_dict(OmegaConf.to_container(cfg.model, resolve=True), "config model")
table = batch_to_ids([types])[0].to(torch.int16)
torch.manual_seed(0)
settings = cfg.pretrain
model = BidirectionalLM(options, int(data["vocab_size"]), table, settings.dropout)
optimizer = torch.optim.Adam(model.parameters(), lr=settings.optimizer.lr, fused=True)
batches = StreamBatcher(split, batch_size, settings.unroll_steps, shuffle=True).batches(0)
state = model.zero_state(batch_size)
generator = torch.Generator().manual_seed(0)

def step():
    global state
    negatives = model.softmax.sampler.sample(settings.n_negative_samples, generator)
    *losses, _, state = train_step(
        model, next(batches), state, negatives, optimizer, settings.clip_norm
    )
    return [float(loss) for loss in losses]

for _ in range(2):
    step()
with FlopCounterMode(display=False) as counter:
    step()
peak_before = matmul_peak()
times = []
for _ in range(steps):
    start = time.perf_counter()
    losses = step()
    times.append(time.perf_counter() - start)
seconds = sum(times) / steps
peak_after = matmul_peak()
positions = batch_size * settings.unroll_steps
flops = counter.get_total_flops()
print(json.dumps({"package": ner.__file__, "seconds_per_step": seconds,
                  "positions_per_s": positions / seconds, "flops_per_step": flops,
                  "best_positions_per_s": positions / min(times),
                  "peak_gflop_per_s": max(peak_before, peak_after),
                  "peak_before_after": [peak_before, peak_after], "last_losses": losses}))
"""


def encode(path: Path) -> None:
    """The default corpus, encoded once (train split only) into `path`."""
    from omegaconf import OmegaConf

    from ner.pretrain.corpus import encode_corpus
    from ner.pretrain.vocabulary import vocabulary_size

    cfg = OmegaConf.load(Path(__file__).resolve().parents[2] / "conf" / "pretrain.yaml")
    corpus = encode_corpus(
        list(cfg.corpus.sources), cfg.corpus.heldout_per_mille, cfg.corpus.max_sentence_tokens
    )
    vocab = vocabulary_size(corpus.train_counts, cfg.vocab.max_size, cfg.vocab.min_count)
    np.savez(
        path,
        ids=corpus.train.ids,
        offsets=corpus.train.offsets,
        types=np.array(corpus.types),
        vocab_size=vocab,
    )


def run(code: str, root: Path | None, *args: str) -> str:
    """Run `code` in a fresh interpreter; `root` first on the path (its `ner` package)."""
    env = dict(os.environ)
    if root is not None:  # `python -c` puts its working folder first on the path
        env["PYTHONPATH"] = str(root.resolve())
    result = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode:
        raise RuntimeError(f"measurement failed in {root}:\n{result.stderr[-3000:]}")
    return result.stdout.strip().splitlines()[-1]


def main() -> None:
    from omegaconf import OmegaConf

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="tree of the code to compare to")
    parser.add_argument("--new", type=Path, default=Path("."), help="tree of the new code")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--new-batch-sizes",
        type=int,
        nargs="*",
        default=[],
        help="also measure the new code with these numbers of streams (batching is a lever too)",
    )
    args = parser.parse_args()
    config = Path(__file__).resolve().parents[2] / "conf" / "pretrain.yaml"
    if args.old.resolve() == args.new.resolve():
        parser.error("--old and --new are the same tree")
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "corpus.npz"
        encode(data)
        default_batch = int(OmegaConf.load(config).pretrain.batch_size)
        setups = {"old": (args.old, default_batch), "new": (args.new, default_batch)}
        for batch in args.new_batch_sizes:
            setups[f"new_batch{batch}"] = (args.new, batch)
        measured: dict[str, list[dict]] = {name: [] for name in setups}
        for round_number in range(args.rounds):
            order = list(setups.items())
            # Every other round in reverse, so that a load that changes during the run does not
            # always favour the version measured second.
            for name, (root, batch) in order[:: -1 if round_number % 2 else 1]:
                line = run(
                    CHILD,
                    root,
                    str(data),
                    str(config),
                    str(args.threads),
                    str(args.steps),
                    str(batch),
                )
                measured[name].append({**json.loads(line), "batch_size": batch})
                print(name, measured[name][-1], flush=True)
    peaks = [r["peak_gflop_per_s"] for results in measured.values() for r in results]
    peak = max(peaks)  # the free core's rate: contention only ever lowers a timing
    summary = {}
    for name, results in measured.items():
        rate = statistics.median(r["positions_per_s"] for r in results)
        flops = results[0]["flops_per_step"]
        achieved = [r["flops_per_step"] / r["seconds_per_step"] / 1e9 for r in results]
        summary[name] = {
            "tree": str(setups[name][0]),
            "batch_size": setups[name][1],
            "positions_per_s": [round(r["positions_per_s"], 1) for r in results],
            "median_positions_per_s": round(rate, 1),
            # the fastest step of each measurement: the least disturbed by other jobs
            "best_step_positions_per_s": [round(r["best_positions_per_s"], 1) for r in results],
            "gflop_per_step": round(flops / 1e9, 2),
            "achieved_gflop_per_s": [round(a, 1) for a in achieved],
            # per measurement: its GFLOP/s over the best matmul rate of that same process
            "share_of_own_matmul_peak": [
                round(a / r["peak_gflop_per_s"], 3) for a, r in zip(achieved, results, strict=True)
            ],
            "best_share_of_matmul_peak": round(max(achieved) / peak, 3),
            "last_losses": [r["last_losses"] for r in results],
        }
    report = {
        "command": " ".join(sys.argv),
        "threads": args.threads,
        "rounds": args.rounds,
        "steps_per_measurement": args.steps,
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "matmul_peak_gflop_per_s": {"max": round(peak, 1), "all": [round(p, 1) for p in peaks]},
        "speedup_over_old": {
            name: round(
                entry["median_positions_per_s"] / summary["old"]["median_positions_per_s"], 2
            )
            for name, entry in summary.items()
            if name != "old"
        },
        # new / old of the measurements taken next to each other (round r: old and new back to
        # back), which cancels most of a load that changes between rounds
        "paired_speedups": {
            name: [
                round(new["positions_per_s"] / old["positions_per_s"], 2)
                for new, old in zip(measured[name], measured["old"], strict=True)
            ]
            for name in summary
            if name != "old"
        },
        "paired_best_step_speedups": {
            name: [
                round(new["best_positions_per_s"] / old["best_positions_per_s"], 2)
                for new, old in zip(measured[name], measured["old"], strict=True)
            ]
            for name in summary
            if name != "old"
        },
        **summary,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
