"""Epoch time of the tagger with the ELMo feature cache vs. rerunning the frozen biLM per batch.

Uses an untrained biLM of a published ELMo shape (``--shape small|medium|original``: the options
in experiments/bench/published_shapes.yaml, random weights: speed does not depend on them) on
the first N CoNLL-2003 train sentences (dev: N/3), with the default model (char-CNN + ELMo mix
→ 2×200 BiLSTM → CRF; GloVe is left out, it costs the same either way). Both variants train
side by side in one process; building the cache is reported separately (it happens once).

    .venv/bin/python experiments/bench/elmo_cache.py --shape small --sentences 300 --threads 1

`--encoder-bf16` is a what-if, not a product setting: the tagger's BiLSTM runs under bf16 autocast
(AMX/AVX-512-BF16 kernels where the CPU has them) in both variants, to see how far a cheaper
tagger moves the ratio.
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch
import yaml
from conll_tagger import score_dev

from ner.bilm.bilm import BiLM
from ner.bilm.options import BiLMOptions
from ner.common.paths import PROJECT_ROOT
from ner.features.elmo import ElmoFeatures
from ner.tagger.dataset import Encoder, entity_types, tag_list
from ner.tagger.model import TaggerModel
from ner.training.loop import Trainer
from ner.training.setup import encode_split, load_splits


def bf16_encoder_emissions(model: TaggerModel, batch) -> torch.Tensor:
    """`TaggerModel.emissions` with the BiLSTM under bf16 autocast; projection and CRF in fp32."""
    features = model.features(batch)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        encoded = model.encoder(features, batch.mask)
    return model.projection(model.dropout(encoded.float()))


def run(variant: str, cache: bool, work: Path, elmo_config: dict, corpus, epochs: int) -> dict:
    """Train `epochs` epochs and return the loop's timings."""
    splits = corpus.splits
    tags = tag_list(entity_types(splits["train"].tags), "bioes")
    encoder = Encoder.build([s for split in splits.values() for s in split.tokens], tags)
    features = ElmoFeatures(elmo_config, cache=cache, cache_dir=work / "cache", progress=False)
    started = time.perf_counter()
    train = encode_split(splits["train"], encoder, corpus.scheme, "bioes", features)
    dev = encode_split(splits["validation"], encoder, corpus.scheme, "bioes", features)
    setup = time.perf_counter() - started
    torch.manual_seed(0)
    model = TaggerModel(
        tags=tags,
        num_chars=len(encoder.chars),
        elmo_dim=features.output_dim,
        elmo_layers=features.num_layers,
    )
    trainer = Trainer(
        model,
        torch.optim.Adam(model.parameters(), lr=1e-3),
        run_dir=work / variant,
        max_epochs=epochs,
        grad_norm=5.0,
        mix_l2=0.1,
        batch_size=64,
        progress=False,
    )
    state = trainer.fit(
        train.examples,
        train.make_batch,
        lambda m: score_dev(m, corpus, dev),
    )
    return {
        "setup_seconds (cache build or biLM load)": setup,
        "train_seconds_per_epoch": state.train_seconds / epochs,
        "dev_seconds_per_epoch": state.dev_seconds / epochs,
        "epoch_seconds": (state.train_seconds + state.dev_seconds) / epochs,
        "dev_f1_last": state.history[-1]["dev/f1"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=300, help="train sentences (dev: 1/3)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--shape", default="small", choices=["small", "medium", "original"])
    parser.add_argument("--encoder-bf16", action="store_true", help="what-if: BiLSTM in bf16")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.encoder_bf16:
        TaggerModel.emissions = bf16_encoder_emissions
    shapes = PROJECT_ROOT / "experiments" / "bench" / "published_shapes.yaml"
    preset = {"options": yaml.safe_load(shapes.read_text())[args.shape]}
    corpus = load_splits({"name": "conll2003", "max_sentences": args.sentences})
    dev = corpus.splits["validation"]
    keep = args.sentences // 3
    dev.tokens, dev.tags = dev.tokens[:keep], dev.tags[:keep]
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        torch.manual_seed(0)
        BiLM(BiLMOptions.from_dict(preset["options"])).save(work / "options.json", work / "w.hdf5")
        elmo_config = {
            "options_file": str(work / "options.json"),
            "weight_file": str(work / "w.hdf5"),
            "state": "warm",
            "batch_size": 64,
        }
        results = {
            "sentences": {"train": len(corpus.splits["train"].tokens), "validation": keep},
            "tokens": {"train": corpus.splits["train"].num_tokens, "validation": dev.num_tokens},
            "bilm": f"{args.shape} ELMo shape ({preset['options']['lstm']}), random weights",
            "threads": args.threads,
            "encoder": "bf16 autocast" if args.encoder_bf16 else "fp32",
            "live": run("live", False, work, elmo_config, corpus, args.epochs),
            "cached": run("cached", True, work, elmo_config, corpus, args.epochs),
        }
    live, cached = results["live"], results["cached"]
    results["speedup_train_epoch"] = (
        live["train_seconds_per_epoch"] / cached["train_seconds_per_epoch"]
    )
    results["speedup_epoch_with_dev"] = live["epoch_seconds"] / cached["epoch_seconds"]
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
