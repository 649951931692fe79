"""The packed word list that holds a tagger's extra GloVe words: lookups, JSON, and its size."""

import random
import tracemalloc
from array import array

import pytest

from ner.common.packed_words import FILES, PackedWords
from ner.common.vocabulary import Vocabulary

WORDS = ["zebra", "é", "apple", "", "naïve", "日本", "app", "\udc80"]  # a lone surrogate too


def test_ids_follow_the_given_order():
    packed = PackedWords(WORDS)
    assert len(packed) == len(WORDS)
    assert [packed.id(word) for word in WORDS] == list(range(len(WORDS)))
    assert all(word in packed for word in WORDS)
    assert "ap" not in packed and "zebras" not in packed and "Apple" not in packed
    with pytest.raises(KeyError, match="'appl' is not among the 8 words"):
        packed.id("appl")


def test_it_writes_the_json_of_the_vocabulary_it_stands_for():
    packed = PackedWords(WORDS)
    assert packed.items == WORDS
    assert packed.to_json() == Vocabulary(WORDS, specials=(), unknown=None).to_json()
    assert Vocabulary.from_json(packed.to_json()).items == WORDS


def test_a_repeated_word_is_refused():
    with pytest.raises(ValueError, match="'apple' repeats"):
        PackedWords(["apple", "pear", "apple"])
    with pytest.raises(ValueError, match="'b' repeats"):  # twins far apart in the given order
        PackedWords(["b", "a", "c", "d", "b"])


def test_get_gives_the_id_or_none():
    packed = PackedWords(WORDS)
    assert [packed.get(word) for word in WORDS] == list(range(len(WORDS)))
    assert packed.get("appl") is None and packed.get("zebras") is None


def test_it_reads_the_json_of_a_vocabulary_without_an_unknown_item():
    packed = PackedWords.from_json(Vocabulary(WORDS, specials=(), unknown=None).to_json())
    assert packed.items == WORDS
    with pytest.raises(ValueError, match="without an unknown item"):
        PackedWords.from_json(Vocabulary(["a"], specials=("<unk>",), unknown="<unk>").to_json())
    with pytest.raises(ValueError, match="list of strings"):
        PackedWords.from_json({"items": ["a", 3], "unknown": None})
    with pytest.raises(ValueError, match="'a' repeats"):
        PackedWords.from_json({"items": ["a", "a"], "unknown": None})


def test_many_words_take_little_more_than_their_utf8_bytes():
    """400k GloVe words stay in memory for a whole training run: as strings in a list and a
    dict they took about 125 bytes a word; packed, their bytes and 12 bytes of index each."""
    generator = random.Random(1)
    words = list(
        {"".join(generator.choices("abcdefghijklmnopqrstuvwxyzé", k=8)) for _ in range(100_000)}
    )
    text_bytes = sum(len(word.encode()) for word in words)
    tracemalloc.start()
    try:
        packed = PackedWords(words)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held <= text_bytes + 16 * len(words), held / len(words)
    assert packed.id(words[-1]) == len(words) - 1


def test_the_packed_form_is_saved_and_read_back(tmp_path):
    words = PackedWords(["zebra", "äpfel", "a", "新しい"])
    words.save(tmp_path)
    loaded = PackedWords.load(tmp_path)
    assert loaded.items == words.items and loaded.id("新しい") == 3 and "b" not in loaded
    (tmp_path / "ids.bin").write_bytes((tmp_path / "ids.bin").read_bytes()[:-4])
    with pytest.raises(ValueError, match="do not fit together"):
        PackedWords.load(tmp_path)
    (tmp_path / "starts.bin").write_bytes(b"\0" * 7)
    with pytest.raises(ValueError, match="cut short"):
        PackedWords.load(tmp_path)


def test_lines_are_the_words_in_id_order_one_a_line(tmp_path):
    words = ["zeta", "", "é\ud800", "alpha", "b"]
    packed = PackedWords(words)
    assert packed.lines() == b"".join(w.encode("utf-8", "surrogatepass") + b"\n" for w in words)
    assert PackedWords([]).lines() == b""
    packed.save(tmp_path)
    (tmp_path / FILES["ids"]).write_bytes(array("i", [0, 1, 2, 3, 3]).tobytes())
    with pytest.raises(ValueError, match="repeats"):
        PackedWords.load(tmp_path).lines()
    (tmp_path / FILES["ids"]).write_bytes(array("i", [0, 1, 2, 3, 9]).tobytes())
    with pytest.raises(ValueError, match="out of the range"):
        PackedWords.load(tmp_path).lines()
