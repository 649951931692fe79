"""Resident memory after each step of a GloVe-only CoNLL-2003 run, without training: the imports
(one module at a time), the corpus, the vocabulary, the GloVe table and its extra words, the
encoded splits, the model and one dev evaluation (batches of 256 sentences).

    .venv/bin/python experiments/bench/memory_steps.py
"""

import importlib

import torch


def memory() -> str:
    """Current and peak resident memory of this process."""
    with open("/proc/self/status") as status:
        fields = dict(line.split(":", 1) for line in status)
    current, peak = (int(fields[key].split()[0]) / 1024 for key in ("VmRSS", "VmHWM"))
    return f"RSS {current:.0f} MB, peak {peak:.0f} MB"


def main() -> None:
    for module in ("numpy", "torch", "pyarrow", "datasets", "hydra", "seqeval.metrics"):
        importlib.import_module(module)
        print(f"import {module}: {memory()}", flush=True)
    from conll_tagger import score_dev

    from ner.embeddings.pretrained import load_pretrained_words
    from ner.tagger.dataset import Encoder, entity_types, tag_list
    from ner.tagger.model import TaggerModel
    from ner.training.setup import encode_split, load_splits

    print("imports:", memory(), flush=True)
    torch.set_num_threads(1)
    corpus = load_splits({"name": "conll2003", "max_sentences": None})
    splits = corpus.splits
    print("corpus:", memory(), flush=True)
    tags = tag_list(entity_types(splits["train"].tags), "bioes")
    encoder = Encoder.build(splits["train"].tokens, tags)
    print("vocabulary:", memory(), flush=True)
    words = load_pretrained_words("glove.6B.50d", encoder.words, dim=50, seed=1)
    encoder.pretrained = words.extension
    print("GloVe:", memory(), flush=True)
    encoded = {
        name: encode_split(split, encoder, corpus.scheme, "bioes", None)
        for name, split in splits.items()
    }
    print("encoded:", memory(), flush=True)
    model = TaggerModel(
        tags=tags,
        num_words=len(encoder.words),
        pretrained_words=len(words.extension),
        num_chars=len(encoder.chars),
    )
    model.word_embedding.weight.data.copy_(words.initial)
    model.pretrained_words.copy_(words.vectors)
    del words
    print("model:", memory(), flush=True)
    score_dev(model, corpus, encoded["validation"])
    print("dev evaluation:", memory(), flush=True)


if __name__ == "__main__":
    main()
