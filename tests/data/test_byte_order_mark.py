"""A UTF-8 byte-order mark at the start of a user's file is not text: no reader keeps it in the
first token (column corpora and ner-predict input are covered with their readers)."""

import numpy as np

from ner.data.lines import decode_line
from ner.embeddings.glove import load_glove
from ner.features.hdf5 import read_sentences as embed_sentences
from ner.pretrain.corpus import read_sentences as pretrain_sentences

BOM = b"\xef\xbb\xbf"


def test_decode_line_drops_the_mark_on_the_first_line_only():
    assert decode_line(BOM + b"Paris O\r\n", 1, "utf-8") == "Paris O"
    assert decode_line(BOM + b"Paris O\n", 2, "utf-8") == "\ufeffParis O"
    assert decode_line(b"caf\xe9\n", 1, "latin-1") == "café"


def test_raw_text_for_ner_embed(tmp_path):
    path = tmp_path / "sentences.txt"
    path.write_bytes(BOM + b"Paris is nice\nRome too\n")
    assert list(embed_sentences(path)) == [["Paris", "is", "nice"], ["Rome", "too"]]


def test_pretraining_text(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes(BOM + b"Paris is nice\n")
    assert list(pretrain_sentences(path, max_sentence_tokens=100)) == [["Paris", "is", "nice"]]


def test_glove_text(tmp_path):
    path = tmp_path / "vectors.txt"
    path.write_bytes(BOM + b"paris 1.0 2.0\nrome 3.0 4.0\n")
    vectors = load_glove(str(path), ["paris", "rome"])
    assert vectors.found.tolist() == [True, True]
    assert np.array_equal(vectors.vectors[0], [1.0, 2.0])
