"""Held-out perplexity of a pretraining run from two starting states: zeros (as at inference, and as
`metrics.json` reports) and the per-unit mean of the states carried in its checkpoint.

    .venv/bin/python experiments/pretrain/state_start.py data/pretrain/runs/elmo-small-news-previous

(after stage 1 of experiments/pretrain/train_previous.sh).

Recorded (stage 1 of elmo-small-news, 1500 steps, state never reset; forward / backward):
zero start 1386 / 2165, mean carried state 228 / 239 — the model had learned to work only from the
steady state it carried, hence stage 2 (`pretrain.state_reset_probability`).
"""

import argparse
import math
from pathlib import Path

import torch
from omegaconf import OmegaConf

from ner.bilm.char_ids import batch_to_ids
from ner.bilm.lstm import LSTMState
from ner.common.checkpoints import load_checkpoint
from ner.pretrain.corpus import encode_corpus
from ner.pretrain.language_model import BidirectionalLM
from ner.pretrain.trainer import heldout_batcher, model_options
from ner.pretrain.vocabulary import vocabulary_size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(1)
    checkpoint = load_checkpoint(args.run / "checkpoint.pt")
    cfg = OmegaConf.create(checkpoint["config"])
    corpus = encode_corpus(
        list(cfg.corpus.sources), cfg.corpus.heldout_per_mille, cfg.corpus.max_sentence_tokens
    )
    vocab = vocabulary_size(corpus.train_counts, cfg.vocab.max_size, cfg.vocab.min_count)
    table = batch_to_ids([corpus.types])[0].to(torch.int16)
    model = BidirectionalLM(model_options(cfg), vocab, table)
    model.load_state_dict(checkpoint["model"])
    model.eval()
    batcher = heldout_batcher(corpus, cfg)
    streams = batcher.num_streams
    mean = LSTMState(
        *(
            s.mean(2, keepdim=True).expand(-1, -1, streams, -1).contiguous()
            for s in (checkpoint["state_h"], checkpoint["state_c"])
        )
    )
    for label, state in (("zero", model.zero_state(streams)), ("mean carried", mean)):
        total, count = torch.zeros(2, dtype=torch.float64), 0
        for batch in batcher.batches(0):
            nll, state = model.heldout_nll(batch, state)
            total += nll.double()
            count += batch.forward_targets.numel()
        forward, backward = (math.exp(v / count) for v in total.tolist())
        print(f"{label} start: forward {forward:.1f} backward {backward:.1f} ({count} positions)")


if __name__ == "__main__":
    main()
