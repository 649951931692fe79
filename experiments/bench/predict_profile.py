"""Where `Tagger` prediction spends its time on one thread, and how close it runs to the CPU's
matrix-multiply peak.

    .venv/bin/python experiments/bench/predict_profile.py --bilm ner/pretrained/elmo-small-news \\
        --out experiments/results/bench/predict_profile.json

The tagger is the default architecture with random weights over the given biLM (as in
bench/predict.py); the text is CoNLL-2003 test, pre-tokenized, in batches of 64. The script

* measures the single-thread fp32 matmul peak of this process (a 2048² × 2048² product, best of
  several, in CPU time), before and after the profile, so the peak is taken on the same core;
* times `predict_tokens` over the test split (CPU time, one thread), then runs it again under
  `torch.profiler` for each operator's share of the time;
* counts the useful arithmetic of the two LSTMs (every real token, BOS and EOS included for the
  biLM, no padding) and divides it by their operators' CPU time (their share of the profile
  times the prediction's CPU time): GFLOP per CPU-second, and the share of the peak; and by the
  whole prediction's CPU time: prediction cannot get faster than "the LSTM arithmetic at the
  matmul peak" without doing less arithmetic, so the ratio of the two bounds what an exact
  speed-up can still give.

All rates are per CPU-second, so that other jobs on a shared machine inflate neither side.
"""

import argparse
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parent))

from predict import bilm_files, build_model

from ner.data import load_corpus
from ner.model.tagger import Tagger


def matmul_peak(size: int = 2048, repeats: int = 8) -> float:
    """Best single-thread GFLOP per CPU-second of a (size, size) @ (size, size) fp32 product
    (CPU time, like the prediction's, so other jobs on the machine count for neither)."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    out = torch.empty(size, size)
    torch.mm(a, b, out=out)
    best = float("inf")
    for _ in range(repeats):
        started = time.thread_time()
        torch.mm(a, b, out=out)
        best = min(best, time.thread_time() - started)
    return 2 * size**3 / best / 1e9


def lstm_flops(tagger: Tagger, sentences: list[list[str]]) -> dict[str, float]:
    """Floating-point operations (2 per multiply-add) of the LSTMs' matmuls on real positions."""
    bilm = tagger.bilm
    assert bilm is not None
    hidden, projection = bilm.options.lstm_dim, bilm.options.projection_dim
    # per position, direction and layer: input (P × 4H), state (P × 4H), projection (H × P)
    per_position = (
        2 * (2 * projection * 4 * hidden + hidden * projection) * 2 * bilm.options.n_layers
    )
    positions = sum(len(s) + 2 for s in sentences)  # BOS and EOS included
    encoder, tokens = tagger.model.encoder, sum(len(s) for s in sentences)
    size, tagger_flops = encoder.hidden_size, 0.0
    for layer in range(encoder.num_layers):
        inputs = encoder.input_size if layer == 0 else 2 * size
        tagger_flops += 2 * 2 * tokens * 4 * size * (inputs + size)  # 2 directions
    return {"bilm_lstm": per_position * positions, "tagger_bilstm": tagger_flops}


# the profiler operators that run each LSTM's matmuls (the tagger's fused kernel includes its
# gate arithmetic)
LSTM_OPERATORS = {
    "bilm_lstm": ("aten::baddbmm", "aten::bmm"),
    "tagger_bilstm": ("aten::mkldnn_rnn_layer",),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bilm", default="ner/pretrained/elmo-small-news")
    parser.add_argument("--sentences", type=int, help="only the first N test sentences")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(1)
    load_average = os.getloadavg()[0]
    corpus = load_corpus("conll2003")
    names = corpus["test"].features["tags"].feature.names
    test = [list(t) for t in corpus["test"]["tokens"]][: args.sentences]
    with tempfile.TemporaryDirectory() as tmp:
        everything = [list(t) for split in corpus.values() for t in split["tokens"]]
        gold = [[names[i] for i in row] for row in corpus["train"]["tags"]]
        model_dir = build_model(everything, gold, bilm_files(args.bilm, Path(tmp)), Path(tmp) / "m")
        tagger = Tagger.load(model_dir)
    tagger.predict_tokens(test[:16])  # warm state, allocator
    peak_before = matmul_peak()
    tagger._token_vectors.clear()  # the char-CNN cache starts empty, as in a fresh process
    started, cpu = time.perf_counter(), time.process_time()
    tagger.predict_tokens(test, batch_size=args.batch_size)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    tagger._token_vectors.clear()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        tagger.predict_tokens(test, batch_size=args.batch_size)
    peak_after = matmul_peak()
    ops = {e.key: e.self_cpu_time_total / 1e6 for e in prof.key_averages()}
    total = sum(ops.values())
    flops = lstm_flops(tagger, test)
    # each LSTM's operators: their share of the profiled time, times the prediction's CPU time
    lstm_seconds = {
        k: sum(ops.get(op, 0.0) for op in members) / total * cpu
        for k, members in LSTM_OPERATORS.items()
    }
    peak = max(peak_before, peak_after)
    at_peak = sum(flops.values()) / 1e9 / peak  # seconds: the LSTM arithmetic at the peak
    results = {
        "bilm": args.bilm,
        "sentences": len(test),
        "tokens": sum(len(s) for s in test),
        "threads": 1,
        "load_average_at_start": load_average,
        "matmul_peak_gflops": {"before": round(peak_before, 1), "after": round(peak_after, 1)},
        "seconds": {"wall": round(wall, 3), "cpu": round(cpu, 3)},
        "sentences_per_cpu_second": round(len(test) / cpu, 1),
        "lstm_gflop": {k: round(v / 1e9, 1) for k, v in flops.items()},
        "lstm_operator_cpu_seconds": {k: round(v, 3) for k, v in lstm_seconds.items()},
        "lstm_operator_gflops": {
            k: round(flops[k] / 1e9 / lstm_seconds[k], 1) for k in flops if lstm_seconds[k] > 0
        },
        "lstm_operator_share_of_peak": {
            k: round(flops[k] / 1e9 / lstm_seconds[k] / peak, 2)
            for k in flops
            if lstm_seconds[k] > 0
        },
        "profiled_seconds": round(total, 3),
        "lstm_share_of_time": round(sum(lstm_seconds.values()) / cpu, 3),
        "lstm_arithmetic_at_peak_cpu_seconds": round(at_peak, 3),
        "largest_exact_speedup": round(cpu / at_peak, 2),
        "top_operators": [
            [k, round(v, 3), round(v / total, 3)]
            for k, v in collections.Counter(ops).most_common(25)
        ],
    }
    print(json.dumps(results, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
