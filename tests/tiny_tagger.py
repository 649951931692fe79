"""A tiny real tagger for prediction tests: words + chars + the fixture ELMo biLM, trained for a
few dozen steps on eight sentences until it reproduces them (built once per test process)."""

import atexit
import functools
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import torch
from fixture_files import FIXTURE

from ner.bilm.bilm import BiLM
from ner.bilm.char_ids import batch_to_ids
from ner.data.tag_schemes import convert_tags
from ner.model.archive import BiLMFiles
from ner.model.tagger import Tagger
from ner.tagger.dataset import Vocabularies, collate, tag_list
from ner.tagger.model import TaggerModel

BILM = BiLMFiles(str(FIXTURE / "options.json"), str(FIXTURE / "lm_weights.hdf5"), state="warm")

# (tokens, IOB2 tags)
SENTENCES = [
    ("John Smith lives in Paris .", "B-PER I-PER O O B-LOC O"),
    ("Mary went to Berlin yesterday .", "B-PER O O B-LOC O O"),
    ("In London , Peter Jones said no .", "O B-LOC O B-PER I-PER O O O"),
    ("Anna likes Rome .", "B-PER O B-LOC O"),
    ("The talks in Madrid ended .", "O O O B-LOC O O"),
    ("Smith met Anna in Paris .", "B-PER O B-PER O B-LOC O"),
    ("It rained on Monday .", "O O O O O"),
    ("Peter flew from Rome to Berlin .", "B-PER O O B-LOC O B-LOC O"),
]


def corpus() -> list[tuple[list[str], list[str]]]:
    return [(tokens.split(), tags.split()) for tokens, tags in SENTENCES]


def gold_conll() -> tuple[bytes, list[list[str]], list[list[str]]]:
    """A gold-tagged CoNLL file of several chunks at two blocks a chunk: ``-DOCSTART-`` lines,
    runs of blank lines, a block with an undecodable line and gold tags the model misses in
    places; with its readable sentences' tokens and gold tags, in order."""
    blocks, tokens, gold = [b"-DOCSTART- -X- O\n"], [], []
    for index, (words, tags) in enumerate(corpus() * 2):
        swapped = [t.replace("PER", "_").replace("LOC", "PER").replace("_", "LOC") for t in tags]
        tags = swapped if index % 3 == 1 else tags
        blocks.append(b"".join(f"{w} NNP {t}\n".encode() for w, t in zip(words, tags, strict=True)))
        tokens.append(words)
        gold.append(tags)
        if index == 5:
            blocks += [b"Anna NNP B-PER\nin\xff NNP O\n", b"-DOCSTART- -X- O\n\n"]
    return b"\n".join(blocks), tokens, gold


@contextmanager
def one_thread() -> Iterator[None]:
    """Run torch on one thread: on this shared 2-core machine a second thread spin-waits against
    the other jobs and makes tiny models ~100× slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def train_tagger(steps: int = 60) -> Tagger:
    """Train the tiny tagger (BIOES inside, like the real one) and wrap it as a `Tagger`."""
    data = corpus()
    tags = tag_list({"PER", "LOC"}, "bioes")
    vocabularies = Vocabularies.build([tokens for tokens, _ in data], tags)
    torch.manual_seed(0)
    model = TaggerModel(
        tags=tags,
        num_words=len(vocabularies.words),
        word_dim=8,
        num_chars=len(vocabularies.chars),
        char_dim=4,
        char_filters=8,
        elmo_dim=32,
        hidden_size=16,
        num_layers=1,
        dropout=0.0,
    )
    with one_thread():
        bilm = BiLM.from_files(BILM.options, BILM.weights, state=BILM.state).eval()
        with torch.no_grad():
            layers, _ = bilm(batch_to_ids([tokens for tokens, _ in data]))
        examples = [
            vocabularies.encode(i, tokens, convert_tags(gold, "iob2", "bioes"))
            for i, (tokens, gold) in enumerate(data)
        ]
        batch = collate(examples, elmo=lambda indices: layers[indices])
        optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
        for _ in range(steps):
            optimizer.zero_grad()
            model(batch)["loss"].backward()
            optimizer.step()
    return Tagger(model, vocabularies, BILM, corpus_scheme="iob2")


@functools.cache
def saved_model() -> Path:
    """The tiny tagger saved as a model directory (once per process; read-only for tests)."""
    root = Path(tempfile.mkdtemp(prefix="ner-tiny-tagger-"))
    atexit.register(shutil.rmtree, root, True)
    directory = root / "model"
    with one_thread():
        train_tagger().save(directory, config={"note": "tests/tiny_tagger.py"})
    return directory
