"""Speed of `ner-embed` against the plain per-time-step baseline (AllenNLP's algorithm).

Setup: CoNLL-2003 validation sentences, random weights of AllenNLP's published "small" ELMo
shape (1024/128, 2048 filters), CPU, 2 threads. The baseline
(`ner.bilm.reference.ReferenceBiLM`, stateless, batches of 64 in file order like AllenNLP's
ElmoEmbedder) is timed in-process on --baseline-sentences evenly strided sentences (half before,
half after the fast runs); the fast path is timed as a whole `ner-embed` process (start-up,
loading and writing included) on all sentences, in stateless and warm mode. Stateless outputs are
compared with the baseline's.

    .venv/bin/python experiments/bench/embed.py [--baseline-sentences 600] [--threads 2] \\
        [--out experiments/results/bench/embed.json]

Prints tokens/s of both paths side by side, their ratio, and each path's share of the machine's
measured float32 matmul peak (nominal FLOPs of the full algorithm per token × tokens/s / peak);
then tokens per CPU-second, which other jobs sharing the CPU disturb much less than wall time;
the same figures go to `--out` as a JSON record.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np
import torch
from harness import PUBLISHED_SHAPES, matmul_peak, run_measured, write_record
from omegaconf import OmegaConf

from ner.bilm.bilm import MAX_TOKENS, BiLM
from ner.bilm.char_ids import batch_to_ids
from ner.bilm.options import BiLMOptions
from ner.bilm.reference import ReferenceBiLM
from ner.data import load_corpus


def nominal_flops_per_token(options: BiLMOptions) -> float:
    """FLOPs of the full algorithm for one token: char-CNN over all 50 chars, highway,
    projection, and every LSTM layer and direction (what the baseline computes per token)."""
    cnn = sum(
        2 * options.char_embedding_dim * width * count * (50 - width + 1)
        for width, count in options.filters
    )
    filters, hidden, proj = options.num_filters, options.lstm_dim, options.projection_dim
    highway = options.n_highway * 2 * filters * 2 * filters
    lstm = 2 * options.n_layers * (2 * 2 * proj * 4 * hidden + 2 * hidden * proj)
    return cnn + highway + 2 * filters * proj + lstm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-sentences", type=int, default=600)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=MAX_TOKENS)
    parser.add_argument("--corpus", default="conll2003", help="a named corpus or a folder")
    parser.add_argument("--out", type=Path, help="write the record here")
    args = parser.parse_args()

    sentences = [list(s) for s in load_corpus(args.corpus)["validation"]["tokens"]]
    tokens = sum(map(len, sentences))
    options_dict = OmegaConf.to_container(OmegaConf.load(PUBLISHED_SHAPES).small)
    options = BiLMOptions.from_dict(options_dict, source=str(PUBLISHED_SHAPES))
    work = Path(tempfile.mkdtemp(prefix="bench_embed_"))
    torch.manual_seed(0)
    BiLM(options).save(work / "options.json", work / "weights.hdf5")
    (work / "input.txt").write_text("\n".join(" ".join(s) for s in sentences) + "\n")
    torch.set_num_threads(args.threads)
    peak = matmul_peak(wall=True) * 1e9  # FLOP/s of all threads
    flops = nominal_flops_per_token(options)
    print(f"corpus: {args.corpus} validation, {len(sentences)} sentences, {tokens} tokens")
    print(f"model: small shape, random weights; {args.threads} threads")
    print(f"matmul peak: {peak / 1e9:.1f} GFLOP/s; nominal {flops / 1e6:.1f} MFLOP/token")

    # Baseline: AllenNLP's algorithm step by step, stateless, batches of 64 in file order, on an
    # evenly strided subset (representative lengths). Half of it runs before the fast path and
    # half after, so a change of machine load during the run affects both paths alike.
    torch.set_num_threads(args.threads)
    reference = ReferenceBiLM.from_files(work / "options.json", work / "weights.hdf5")
    stride = max(1, len(sentences) // args.baseline_sentences)
    subset = sentences[::stride][: args.baseline_sentences]
    baseline_out: list[np.ndarray] = []
    baseline_seconds = 0.0

    baseline_cpu = 0.0

    def run_baseline(part: list[list[str]]) -> None:
        nonlocal baseline_seconds, baseline_cpu
        start, cpu = time.perf_counter(), time.process_time()
        for begin in range(0, len(part), 64):
            batch = part[begin : begin + 64]
            reference.reset_states()
            layers, _ = reference(batch_to_ids(batch))
            baseline_out.extend(layers[i, :, : len(s)].numpy() for i, s in enumerate(batch))
        baseline_seconds += time.perf_counter() - start
        baseline_cpu += time.process_time() - cpu

    half = len(subset) // 2
    run_baseline(subset[:half])
    fast_rows = []
    for state in ("stateless", "warm"):
        output = work / f"{state}.hdf5"
        command = [
            sys.executable, "-m", "ner.cli.embed", str(work / "input.txt"), str(output),
            "--options-file", str(work / "options.json"),
            "--weight-file", str(work / "weights.hdf5"),
            "--state", state, "--threads", str(args.threads), "--max-tokens", str(args.max_tokens),
            "--no-progress",
        ]  # fmt: skip
        done = run_measured(command)
        if done["returncode"]:
            raise SystemExit(f"ner-embed failed:\n{done['stderr'][-3000:]}")
        seconds, cpu = done["wall_seconds"], done["cpu_seconds"]
        fast_rows.append((state, output, tokens / seconds, tokens / cpu))
    run_baseline(subset[half:])
    subset_tokens = sum(map(len, subset))
    baseline_speed, baseline_per_cpu = (
        subset_tokens / baseline_seconds,
        subset_tokens / baseline_cpu,
    )

    rows = [("baseline (reference.py, per step)", f"{len(subset)} sents", baseline_speed,
             baseline_per_cpu, "")]  # fmt: skip
    for state, output, speed, per_cpu in fast_rows:
        note = ""
        if state == "stateless":
            with h5py.File(output, "r") as handle:
                diff = max(
                    float(np.abs(handle[str(i * stride)][...] - expected).max(initial=0.0))
                    for i, expected in enumerate(baseline_out)
                )
            note = f"max |diff| vs baseline {diff:.1e}"
        name = f"ner-embed --state {state} (process)"
        rows.append((name, f"{len(sentences)} sents", speed, per_cpu, note))

    print(f"{'path':<38} {'input':>11} {'tokens/s':>9} {'x base':>7} {'% peak':>7}", end="")
    print(f" {'tok/cpu-s':>9} {'x base':>7}")
    for name, size, speed, per_cpu, note in rows:
        share = 100 * speed * flops / peak
        ratio, cpu_ratio = speed / baseline_speed, per_cpu / baseline_per_cpu
        print(f"{name:<38} {size:>11} {speed:9.0f} {ratio:7.2f} {share:6.1f}%", end="")
        print(f" {per_cpu:9.0f} {cpu_ratio:7.2f}  {note}")
    figures = {
        "corpus": f"{args.corpus} validation",
        "sentences": len(sentences),
        "tokens": tokens,
        "threads": args.threads,
        "matmul_peak_gflop_per_s": round(peak / 1e9, 1),
        "nominal_mflop_per_token": round(flops / 1e6, 1),
        "paths": [
            {"path": name, "input": size, "tokens_per_second": round(speed, 1),
             "tokens_per_cpu_second": round(per_cpu, 1),
             "share_of_peak": round(speed * flops / peak, 4), "note": note}
            for name, size, speed, per_cpu, note in rows
        ],
    }  # fmt: skip
    write_record(args.out, figures)


if __name__ == "__main__":
    main()
