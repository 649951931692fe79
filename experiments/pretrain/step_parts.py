"""Where a pretraining step spends its time, per precision: char-CNN, LSTMs, softmax, optimizer.

    .venv/bin/python experiments/pretrain/step_parts.py --threads 1 --rounds 5 \\
        --out experiments/results/pretrain/step_parts.json

Builds the default biLM shape (conf/pretrain.yaml) on one batch of the default corpus (64
streams × 20 positions, 2048 negatives) and times, in this process's CPU time, the forward and
backward pass of each part on its own, in float32 and under `pretrain.precision=bfloat16`'s
autocast: the char-CNN over the batch's distinct tokens, the
two LSTM layers over the window, the sampled softmax over the top layer's positions, the gradient
clip and Adam update, and the whole `train_step`. Each part runs in both precisions back to back
(in alternating order); per part and precision it keeps the fastest round (the one least
disturbed by other jobs on a shared machine).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import torch
from omegaconf import OmegaConf

from ner.bilm.char_ids import batch_to_ids
from ner.bilm.options import BiLMOptions
from ner.common.precision import training_autocast
from ner.pretrain.corpus import encode_corpus
from ner.pretrain.language_model import BidirectionalLM
from ner.pretrain.streams import StreamBatcher
from ner.pretrain.trainer import setup_process, train_step
from ner.pretrain.vocabulary import vocabulary_size

CONFIG = Path(__file__).resolve().parents[2] / "conf" / "pretrain.yaml"
PRECISIONS = ("float32", "bfloat16")


def cpu_seconds(work: Callable[[], object]) -> float:
    """CPU time of this thread for one call of `work`."""
    start = time.thread_time()
    work()
    return time.thread_time() - start


def parts(model: BidirectionalLM, optimizer: torch.optim.Optimizer, batch, negatives, precision):
    """One callable per part: its forward and backward pass (the optimizer: clip and update)."""
    device = torch.device("cpu")
    inputs = torch.stack([batch.forward_inputs, batch.backward_inputs])
    types, inverse = torch.unique(inputs, return_inverse=True)
    char_ids = model.char_table[types].long()
    steps = inputs.shape[-1]
    tokens = torch.randn(2, inputs.shape[1], steps, model.bilm.options.projection_dim)
    tokens.requires_grad_()
    hidden = torch.randn(inputs.numel(), model.bilm.options.projection_dim, requires_grad=True)
    targets = model.targets(batch).reshape(-1)
    lengths = torch.full((inputs.shape[1],), steps)

    def char_cnn() -> None:
        with training_autocast(precision, device):
            encoded = model.bilm.char_cnn(char_ids)[inverse]
        encoded.float().sum().backward()

    def lstm() -> None:
        with training_autocast(precision, device):
            outputs, _ = model.bilm.lstm(tokens, lengths, model.zero_state(inputs.shape[1]))
        outputs[-1].float().sum().backward()

    def softmax() -> None:
        with training_autocast(precision, device):
            losses = model.softmax.sampled_loss(hidden, targets, negatives)
        losses.mean().backward()

    def update() -> None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        optimizer.step()

    def whole() -> None:
        state = model.zero_state(inputs.shape[1])
        train_step(model, batch, state, negatives, optimizer, 10.0, precision)

    return {"char_cnn": char_cnn, "lstm": lstm, "softmax": softmax, "optimizer": update,
            "train_step": whole}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    setup_process(args.threads)
    cfg = OmegaConf.load(CONFIG)
    corpus = encode_corpus(
        list(cfg.corpus.sources), cfg.corpus.heldout_per_mille, cfg.corpus.max_sentence_tokens
    )
    vocab = vocabulary_size(corpus.train_counts, cfg.vocab.max_size, cfg.vocab.min_count)
    options = BiLMOptions.from_dict(OmegaConf.to_container(cfg.model, resolve=True), "model")
    table = batch_to_ids([corpus.types])[0].to(torch.int16)
    torch.manual_seed(0)
    model = BidirectionalLM(options, vocab, table, cfg.pretrain.dropout)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.pretrain.optimizer.lr, fused=True)
    batcher = StreamBatcher(
        corpus.train, cfg.pretrain.batch_size, cfg.pretrain.unroll_steps, shuffle=True
    )
    batch = next(iter(batcher.batches(0)))
    generator = torch.Generator().manual_seed(0)
    negatives = model.softmax.sampler.sample(cfg.pretrain.n_negative_samples, generator)
    work = {p: parts(model, optimizer, batch, negatives, p) for p in PRECISIONS}
    for calls in work.values():  # warm-up: kernels, allocator, optimizer state
        for call in calls.values():
            call()
    best: dict[str, dict[str, float]] = {p: {} for p in PRECISIONS}
    for round_number in range(args.rounds):
        for name in work["float32"]:  # each part in both precisions back to back
            for precision in PRECISIONS[:: -1 if round_number % 2 else 1]:
                seconds = cpu_seconds(work[precision][name])
                best[precision][name] = min(best[precision].get(name, seconds), seconds)
    report = {
        "command": "experiments/pretrain/step_parts.py "
        f"--threads {args.threads} --rounds {args.rounds} --out {args.out}",
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu_ms": {p: {k: round(1000 * v, 1) for k, v in best[p].items()} for p in PRECISIONS},
        "ratio_float32_over_bfloat16": {
            name: round(seconds / best["bfloat16"][name], 2)
            for name, seconds in best["float32"].items()
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
