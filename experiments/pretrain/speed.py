"""Training speed of candidate biLM sizes on the shipped corpus, side by side in one process.

    .venv/bin/python experiments/pretrain/speed.py [--steps 8] [--threads 1]

Prints positions/s (one position = one token predicted by both directions) for each candidate,
measured over `--steps` updates after 2 warm-up updates, with the same batch stream for all.
"""

import argparse
import time

import torch

from ner.bilm.char_ids import batch_to_ids
from ner.bilm.options import BiLMOptions
from ner.pretrain.corpus import encode_corpus
from ner.pretrain.language_model import BidirectionalLM
from ner.pretrain.streams import StreamBatcher
from ner.pretrain.trainer import train_step
from ner.pretrain.vocabulary import vocabulary_size

SOURCES = [
    "reuters",
    "brown",
    "abc",
    "treebank",
    "state_union",
    "webtext",
    "movie_reviews",
    "inaugural",
    "conll2000",
]
FILTERS_S = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256]]
FILTERS_XS = [[1, 16], [2, 16], [3, 32], [4, 64], [5, 128]]
CANDIDATES = {  # name: (filters, highway, H, P, batch, negatives)
    "H512-P128-F512-b64-n2048": (FILTERS_S, 1, 512, 128, 64, 2048),
    "H512-P128-F256-b64-n1024": (FILTERS_XS, 1, 512, 128, 64, 1024),
    "H256-P64-F256-b64-n1024": (FILTERS_XS, 1, 256, 64, 64, 1024),
    "H512-P128-F512-b128-n2048": (FILTERS_S, 1, 512, 128, 128, 2048),
    "H512-P128-F512-b64-n2048 (again)": (FILTERS_S, 1, 512, 128, 64, 2048),
}


def options(filters, highway, hidden, proj) -> BiLMOptions:
    return BiLMOptions.from_dict(
        {
            "lstm": {
                "dim": hidden,
                "projection_dim": proj,
                "n_layers": 2,
                "cell_clip": 3,
                "proj_clip": 3,
                "use_skip_connections": True,
            },
            "char_cnn": {
                "embedding": {"dim": 16},
                "filters": filters,
                "n_highway": highway,
                "n_characters": 262,
                "max_characters_per_token": 50,
                "activation": "relu",
            },
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    corpus = encode_corpus(SOURCES, 5, 400)
    vocab = vocabulary_size(corpus.train_counts, 50000, 3)
    table = batch_to_ids([corpus.types])[0].to(torch.int16)
    for name, (filters, highway, hidden, proj, batch_size, negatives) in CANDIDATES.items():
        torch.manual_seed(0)
        model = BidirectionalLM(options(filters, highway, hidden, proj), vocab, table, 0.1)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)
        batches = StreamBatcher(corpus.train, batch_size, 20, shuffle=True).batches(0)
        state = model.zero_state(batch_size)
        generator = torch.Generator().manual_seed(0)
        for step in range(args.steps + 2):
            if step == 2:
                start = time.perf_counter()
            sample = model.softmax.sampler.sample(negatives, generator)
            *_, state = train_step(model, next(batches), state, sample, optimizer, 10.0)
        rate = args.steps * batch_size * 20 / (time.perf_counter() - start)
        params = sum(p.numel() for p in model.bilm.parameters())
        print(f"{name}: {rate:.0f} positions/s, biLM parameters {params / 1e6:.2f}M", flush=True)


if __name__ == "__main__":
    main()
