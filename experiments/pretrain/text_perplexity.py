"""Perplexity of a pretraining run's biLM (with its softmax) on a text file it never trained on.

    .venv/bin/python experiments/pretrain/text_perplexity.py RUN_DIR TEXT [--out FILE.json]

RUN_DIR is a `ner-pretrain` output folder (its ``checkpoint.pt`` holds the biLM, the softmax and
the config); TEXT has one tokenized sentence per line, e.g. the dev split of the corpus the biLM
was adapted to. The run's corpus is read again for its vocabulary (the softmax targets); tokens
of TEXT outside it count as ``<UNK>``, as in the run's own held-out evaluation (full softmax,
streams with the state carried). For a biLM continued with a softmax warm-up, a run stopped at
the end of the warm-up (``pretrain.max_steps`` = ``pretrain.softmax_warmup_steps``) gives the
perplexity before adaptation, with a softmax fitted to the same text.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import numpy as np
from omegaconf import OmegaConf

from ner.common.checkpoints import load_checkpoint
from ner.pretrain.corpus import Split, read_sentences
from ner.pretrain.trainer import Distributed, PretrainingRun, perplexities
from ner.pretrain.vocabulary import UNK_ID


def encode(text: Path, types: list[str], max_sentence_tokens: int) -> Split:
    """The sentences of `text` as type ids of the run's corpus (`<UNK>` for new types)."""
    index = {token: i for i, token in enumerate(types)}
    ids: list[int] = []
    offsets = [0]
    for tokens in read_sentences(text, max_sentence_tokens):
        ids.extend(index.get(token, UNK_ID) for token in tokens)
        offsets.append(len(ids))
    return Split(np.asarray(ids, dtype=np.int64), np.asarray(offsets, dtype=np.int64))


def text_perplexity(run_dir: Path, text: Path) -> dict[str, float]:
    cfg = OmegaConf.create(load_checkpoint(run_dir / "checkpoint.pt")["config"])
    cfg.pretrain.output_dir = str(run_dir)
    cfg.pretrain.setdefault("softmax_warmup_steps", 0)  # runs from before the setting
    env = Distributed.setup("cpu")
    run = PretrainingRun.build(cfg, env, run_dir, "float32")
    run.resume_if_saved()
    heldout = encode(text, run.corpus.types, cfg.corpus.max_sentence_tokens)
    corpus = dataclasses.replace(run.corpus, heldout=heldout)
    return {"step": run.position["step"], **perplexities(run.model, corpus, cfg)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("text", type=Path)
    parser.add_argument("--out", type=Path, help="also write the figures here as JSON")
    args = parser.parse_args()
    result = {"run": args.run_dir.name, "text": args.text.name}
    result.update(text_perplexity(args.run_dir, args.text))
    print(json.dumps(result))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
