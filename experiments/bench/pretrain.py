"""How fast does the biLM pretrain? Positions/s of `ner-pretrain`'s training step per set-up (two
versions of the code, two precisions, other batch sizes), side by side, and the matmul peak.

    .venv/bin/python experiments/bench/pretrain.py --threads 1 --rounds 3 --steps 8 \\
        --out experiments/results/pretrain/speed.json
    git worktree add --detach OLD_TREE <commit>      # the code to compare against
    .venv/bin/python experiments/bench/pretrain.py --old OLD_TREE --threads 1 --rounds 8 \\
        --steps 6 --out experiments/results/pretrain/speed_vs_earlier_code.json
    # float32 against mixed precision (pretrain.precision=bfloat16), same code
    .venv/bin/python experiments/bench/pretrain.py --precisions float32 bfloat16 --threads 1 \\
        --rounds 6 --steps 6 --out experiments/results/pretrain/speed_bfloat16_vs_float32.json

The corpus (conf/pretrain.yaml's sources) is encoded once, by the new code, into a temporary .npz
(``--set KEY=VALUE`` changes conf/pretrain.yaml for every set-up, e.g. another biLM size: ``--set
model.lstm.dim=256 model.lstm.projection_dim=64``); each measurement is a fresh process that
imports `ner` from one of the two trees, builds the default biLM shape and the default batch (64
streams × 20 steps, 2048 negatives, dropout 0.1, Adam), and times `--steps` training steps after 2
warm-up steps, in one of `--precisions` (the old tree: float32). The set-ups alternate (old, new,
new, old, old, new, ...) so that all see the same load on a shared machine. Every step is timed on
its own, in wall time and in the process's CPU time: CPU time leaves out the turns other jobs took
on the core, and the fastest step of a measurement is the one least disturbed by them, so the per-
round ratios of those are steadier estimates of the speed-up than wall time on a shared machine.
The matmul peak is measured in the same process right before and right after the steps, in float32
and in bfloat16: the best GFLOP per CPU-second of several 2048² `torch.mm`, so a moment of
contention does not lower it. The FLOPs of the float32 step (matmuls and convolutions, forward and
backward, counted by `torch.utils.flop_counter`) per CPU-second of a step give the share of its
precision's peak each set-up reaches (mixed precision runs the char-CNN's filters as one product
over zero-padded taps: more multiplications for the same result, not counted as work). The losses
of the last step are recorded too: the same computation in the same precision must give the same
losses.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from harness import (
    REPO,
    alternate,
    fresh_process,
    matmul_peak,
    paired_ratios,
    tree_label,
    write_record,
)


def measure(job: dict) -> dict:
    """One measurement, in this process (a fresh one, importing `ner` from the tree measured)."""
    import torch
    from omegaconf import OmegaConf
    from torch.utils.flop_counter import FlopCounterMode

    import ner
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

    threads, steps, batch_size = job["threads"], job["steps"], job["batch_size"]
    precision = job["precision"]
    setup_process(threads)
    cfg = OmegaConf.load(job["config"])
    data = np.load(job["data"])
    types = [str(t) for t in data["types"]]
    split = Split(data["ids"], data["offsets"])
    options = BiLMOptions.from_dict(OmegaConf.to_container(cfg.model, resolve=True), "model")
    table = batch_to_ids([types])[0].to(torch.int16)
    torch.manual_seed(0)
    settings = cfg.pretrain
    model = BidirectionalLM(options, int(data["vocab_size"]), table, settings.dropout)
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.optimizer.lr, fused=True)
    batches = StreamBatcher(split, batch_size, settings.unroll_steps, shuffle=True).batches(0)
    state = model.zero_state(batch_size)
    generator = torch.Generator().manual_seed(0)

    def step() -> list[float]:
        nonlocal state
        negatives = model.softmax.sampler.sample(settings.n_negative_samples, generator)
        mixed = () if precision == "float32" else (precision,)  # older code: float32 only
        *losses, _, state = train_step(
            model, next(batches), state, negatives, optimizer, settings.clip_norm, *mixed
        )
        return [float(loss) for loss in losses]

    for _ in range(2):
        step()
    with FlopCounterMode(display=False) as counter:
        step()
    peaks = {"float32": [matmul_peak()], "bfloat16": [matmul_peak("bfloat16")]}
    times, cpu_times = [], []
    for _ in range(steps):
        start, cpu_start = time.perf_counter(), time.thread_time()
        losses = step()
        times.append(time.perf_counter() - start)
        cpu_times.append(time.thread_time() - cpu_start)
    peaks["float32"].append(matmul_peak())
    peaks["bfloat16"].append(matmul_peak("bfloat16"))
    seconds = sum(times) / steps
    positions = batch_size * settings.unroll_steps
    return {
        "package": ner.__file__,
        "precision": precision,
        "seconds_per_step": seconds,
        "positions_per_s": positions / seconds,
        "flops_per_step": counter.get_total_flops(),
        "best_positions_per_s": positions / min(times),
        "cpu_seconds_per_step": sum(cpu_times) / steps,
        "cpu_positions_per_s": positions * steps / sum(cpu_times),
        "best_cpu_positions_per_s": positions / min(cpu_times),
        "peak_gflop_per_s": max(peaks["float32"]),
        "peak_before_after": peaks["float32"],
        "bf16_peak_gflop_per_s": max(peaks["bfloat16"]),
        "bf16_peak_before_after": peaks["bfloat16"],
        "last_losses": losses,
    }


def encode(path: Path, config: Path) -> None:
    """The corpus of `config`, encoded once (train split only) into `path`."""
    from omegaconf import OmegaConf

    from ner.pretrain.corpus import encode_corpus
    from ner.pretrain.vocabulary import vocabulary_size

    cfg = OmegaConf.load(config)
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


def main() -> None:
    from omegaconf import OmegaConf

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, help="tree of the code to compare to (float32)")
    parser.add_argument("--new", type=Path, default=REPO, help="tree of the new code")
    parser.add_argument(
        "--precisions",
        nargs="+",
        choices=["float32", "bfloat16"],
        default=["float32"],
        help="pretrain.precision of the new code's measurements (each one a set-up)",
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument(
        "--set", nargs="*", default=[], help="conf/pretrain.yaml overrides, e.g. model.lstm.dim=256"
    )
    parser.add_argument("--out", type=Path, help="write the record here")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # a measurement's job (JSON)
    parser.add_argument(
        "--new-batch-sizes",
        type=int,
        nargs="*",
        default=[],
        help="also measure the new code with these numbers of streams (batching is a lever too)",
    )
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(json.loads(args.child))))
        return
    from hydra import compose, initialize_config_module

    import ner.pretrain.config  # noqa: F401  (registers the schema and the groups)

    with initialize_config_module("ner.conf", version_base="1.3"):
        settings = compose("pretrain", overrides=args.set)  # conf/pretrain.yaml's defaults
    if args.old is not None and args.old.resolve() == args.new.resolve():
        parser.error("--old and --new are the same tree")
    if args.old is None and "float32" not in args.precisions:
        parser.error("without --old, --precisions needs float32 (the baseline)")
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "corpus.npz"
        config = Path(folder) / "pretrain.yaml"  # conf/pretrain.yaml with --set applied
        OmegaConf.save(settings, config)
        encode(data, config)
        default_batch = int(settings.pretrain.batch_size)
        setups: dict[str, tuple[Path, int, str]] = {}
        if args.old is not None:
            setups["old"] = (args.old, default_batch, "float32")
        for precision in args.precisions:
            name = "new" if precision == "float32" else f"new_{precision}"
            setups[name] = (args.new, default_batch, precision)
        for batch in args.new_batch_sizes:
            setups[f"new_batch{batch}"] = (args.new, batch, "float32")

        def run(name: str, number: int) -> dict:
            root, batch, precision = setups[name]
            job = {"data": str(data), "config": str(config), "threads": args.threads,
                   "steps": args.steps, "batch_size": batch, "precision": precision}  # fmt: skip
            result = fresh_process(Path(__file__), ["--child", json.dumps(job)], root)
            return {**result, "batch_size": batch}

        measured = alternate(list(setups), args.rounds, run)
    base = "old" if args.old is not None else "new"
    peaks = [r["peak_gflop_per_s"] for results in measured.values() for r in results]
    bf16_peaks = [r["bf16_peak_gflop_per_s"] for results in measured.values() for r in results]
    # the free core's rates: contention only ever lowers a timing
    peak = {"float32": max(peaks), "bfloat16": max(bf16_peaks)}
    useful_flops = measured[base][0]["flops_per_step"]  # the float32 step's: the same work
    summary = {}
    for name, results in measured.items():
        precision = setups[name][2]
        rate = statistics.median(r["positions_per_s"] for r in results)
        # GFLOP (of the float32 step) per CPU-second, on average and in the fastest step
        achieved = [useful_flops / r["cpu_seconds_per_step"] / 1e9 for r in results]
        best = [
            useful_flops * r["best_cpu_positions_per_s"] / r["cpu_positions_per_s"] for r in results
        ]
        best = [b / r["cpu_seconds_per_step"] / 1e9 for b, r in zip(best, results, strict=True)]
        summary[name] = {
            "tree": tree_label(setups[name][0]),
            "batch_size": setups[name][1],
            "precision": precision,
            "positions_per_s": [round(r["positions_per_s"], 1) for r in results],
            "median_positions_per_s": round(rate, 1),
            # the fastest step of each measurement: the least disturbed by other jobs
            "best_step_positions_per_s": [round(r["best_positions_per_s"], 1) for r in results],
            # positions per second of this process's CPU time: other jobs' turns left out
            "cpu_positions_per_s": [round(r["cpu_positions_per_s"], 1) for r in results],
            "median_cpu_positions_per_s": round(
                statistics.median(r["cpu_positions_per_s"] for r in results), 1
            ),
            "gflop_per_step_counted": round(results[0]["flops_per_step"] / 1e9, 2),
            "achieved_gflop_per_cpu_s": [round(a, 1) for a in achieved],
            # per measurement: its GFLOP/s over the best matmul rate of its precision in that
            # same process
            "share_of_own_matmul_peak": [
                round(
                    a
                    / r["bf16_peak_gflop_per_s" if precision == "bfloat16" else "peak_gflop_per_s"],
                    3,
                )
                for a, r in zip(achieved, results, strict=True)
            ],
            "best_step_share_of_matmul_peak": round(max(best) / peak[precision], 3),
            "last_losses": [r["last_losses"] for r in results],
        }
    report = {
        "threads": args.threads,
        "rounds": args.rounds,
        "steps_per_measurement": args.steps,
        "baseline": base,
        "matmul_peak_gflop_per_s": {
            "max": round(peak["float32"], 1),
            "all": [round(p, 1) for p in peaks],
        },
        "bf16_matmul_peak_gflop_per_s": {
            "max": round(peak["bfloat16"], 1),
            "all": [round(p, 1) for p in bf16_peaks],
        },
        "useful_gflop_per_step": round(useful_flops / 1e9, 2),
        f"speedup_over_{base}": {
            name: round(
                entry["median_positions_per_s"] / summary[base]["median_positions_per_s"], 2
            )
            for name, entry in summary.items()
            if name != base
        },
        "paired_speedups": paired_ratios(measured, base, "positions_per_s"),
        "paired_best_step_speedups": paired_ratios(measured, base, "best_positions_per_s"),
        "paired_cpu_speedups": paired_ratios(measured, base, "cpu_positions_per_s"),
        "paired_best_cpu_step_speedups": paired_ratios(measured, base, "best_cpu_positions_per_s"),
        **summary,
    }
    write_record(args.out, report)


if __name__ == "__main__":
    main()
