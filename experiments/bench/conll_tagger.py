"""The set-up the benchmarks share (imported by them, not run): the default words ⊕ char-CNN
tagger (no GloVe, no biLM) on CoNLL-2003 train, 1 thread, seed 1, with Adam and the training
split in epoch 1's batch order of 64 sentences; and dev scoring as the training loop does it."""

from dataclasses import dataclass

import numpy as np
import torch

from ner.tagger.dataset import Encoder, bucket_batches, entity_types, tag_list
from ner.tagger.model import TaggerModel
from ner.training.evaluation import evaluate_split
from ner.training.setup import Corpus, EncodedSplit, encode_split, load_splits


@dataclass
class ConllTagger:
    """encoded: the training split; batches: its example indices per batch, in epoch 1's order."""

    encoded: EncodedSplit
    model: TaggerModel
    optimizer: torch.optim.Optimizer
    batches: list[list[int]]


def conll_tagger(max_sentences: int | None = None) -> ConllTagger:
    """The tagger, its optimizer and the batches of the first `max_sentences` training sentences
    (all when None)."""
    torch.set_num_threads(1)
    corpus = load_splits({"name": "conll2003", "max_sentences": max_sentences})
    train = corpus.splits["train"]
    tags = tag_list(entity_types(train.tags), "bioes")
    encoder = Encoder.build(train.tokens, tags)
    encoded = encode_split(train, encoder, corpus.scheme, "bioes", None)
    torch.manual_seed(1)
    model = TaggerModel(tags=tags, num_words=len(encoder.words), num_chars=len(encoder.chars))
    lengths = [len(example.words) for example in encoded.examples]
    batches = bucket_batches(lengths, 64, np.random.default_rng([1, 0]))
    return ConllTagger(encoded, model, torch.optim.Adam(model.parameters(), lr=1e-3), batches)


def score_dev(model: TaggerModel, corpus: Corpus, dev: EncodedSplit) -> dict:
    """Dev scores of `model` (BIOES tags, batches of 256 sentences, on the CPU)."""
    return evaluate_split(
        model,
        corpus.splits["validation"],
        dev.examples,
        dev.make_batch,
        corpus_scheme=corpus.scheme,
        model_scheme="bioes",
        batch_size=256,
        device=torch.device("cpu"),
    )
