import gzip
import zipfile

import numpy as np
import pytest

from ner.embeddings.glove import EmbeddingFormatError, load_glove, load_glove_table

# The first values of "the" in Stanford's glove.6B.50d.txt.
THE_50D = [0.418, 0.24968, -0.41242, 0.1217, 0.34527, -0.044457, -0.49688, -0.17862]
VOCABULARY = ["The", "Apple", "APPLE", "Paris", "missing"]
TEXT = "the 0.1 0.2 0.3\nApple 1 2 3\napple 4 5 6\nparis -1 -2 -3\nthe 9 9 9\n"


@pytest.mark.slow
def test_glove_6b_50d_from_the_wheel():
    vocabulary = ["the", "The", "Paris", "qwxzzyq", "EU"]
    vectors = load_glove("glove.6B.50d", vocabulary)
    assert vectors.vectors.shape == (5, 50) and vectors.vectors.dtype == np.float32
    np.testing.assert_allclose(vectors.vectors[0, :8], THE_50D, rtol=1e-6)
    np.testing.assert_array_equal(vectors.vectors[1], vectors.vectors[0])  # lowercase fallback
    assert vectors.found.tolist() == [True, True, True, False, True]
    assert not vectors.vectors[3].any()
    assert vectors.coverage(["the", "The", "qwxzzyq", "qwxzzyq"]) == 50.0


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "vectors.txt"
    path.write_text(TEXT)
    return path


def _check(vectors):
    """`TEXT` read for a vocabulary with exact, lowercase-only and missing words."""
    assert vectors.dim == 3
    assert vectors.vocabulary == VOCABULARY
    np.testing.assert_array_equal(
        vectors.vectors,
        np.array([[0.1, 0.2, 0.3], [1, 2, 3], [4, 5, 6], [-1, -2, -3], [0, 0, 0]], np.float32),
    )
    assert vectors.found.tolist() == [True, True, True, True, False]
    assert vectors.coverage(["The", "The", "missing", "unseen"]) == 50.0


def test_text_file_exact_then_lowercase(text_file):
    _check(load_glove(str(text_file), VOCABULARY))


def test_word2vec_header_and_gzip(tmp_path):
    path = tmp_path / "vectors.txt.gz"
    with gzip.open(path, "wt") as file:
        file.write("5 3\n" + TEXT)
    _check(load_glove(str(path), VOCABULARY))


def test_zip_by_url(tmp_path, http_server):
    path = http_server.root / "glove.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("glove/vectors.txt", TEXT)
    vectors = load_glove(http_server.url("glove.zip"), VOCABULARY)
    _check(vectors)
    assert vectors.source.endswith("glove.zip!glove/vectors.txt")


def test_zip_with_several_files_needs_member(tmp_path):
    path = tmp_path / "glove.6B.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("glove.6B.50d.txt", TEXT)
        archive.writestr("glove.6B.100d.txt", "the 1\n")
    with pytest.raises(EmbeddingFormatError, match="pass member= to pick one"):
        load_glove(str(path), VOCABULARY)
    _check(load_glove(str(path), VOCABULARY, member="glove.6B.50d.txt"))


def test_words_with_spaces(tmp_path):
    """Stanford's glove.840B.300d has rows such as ``. . . 0.1 …``: the last `dim` fields are
    the vector, the rest (spaces included) is the word, also on the first row."""
    path = tmp_path / "vectors.txt"
    path.write_text(
        ". . . -0.5 0.25 1\nthe 0.1 0.2 0.3\nNew York 1 2 3\nat  home 4 5 6\n"
        "1 2 0 7 8\n. . . 9 9 9\n"
    )
    vocabulary = [". . .", "the", "New York", "at  home", "1 2", "New"]
    vectors = load_glove(str(path), vocabulary)
    np.testing.assert_array_equal(
        vectors.vectors,
        np.array(
            [[-0.5, 0.25, 1], [0.1, 0.2, 0.3], [1, 2, 3], [4, 5, 6], [0, 7, 8], [0, 0, 0]],
            np.float32,
        ),
    )
    assert vectors.found.tolist() == [True, True, True, True, True, False]
    table = load_glove_table(str(path))
    assert table.words == [". . .", "the", "New York", "at  home", "1 2"]
    assert table.matrix.shape == (5, 3)


def test_word2vec_header_gives_the_width_and_trailing_spaces_are_ignored(tmp_path):
    path = tmp_path / "vectors.vec"
    path.write_text("3 2\nNew York 1 2 \nthe 3 4 \n2 5 6 \n")
    table = load_glove_table(str(path))
    assert table.words == ["New York", "the", "2"]
    np.testing.assert_array_equal(table.matrix, [[1, 2], [3, 4], [5, 6]])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"the 1 2 3\napple 1 2\n", r"vectors.txt:2: 2 numbers after 'apple', expected 3"),
        (b"the 1 2 3\napple 1 x 3\n", r"vectors.txt:2: could not convert string to float"),
        (b"the 1 2 3\n\xff\xfe 1 2 3\n", r"vectors.txt:2: not valid UTF-8"),
        (b"", r"vectors.txt:1: no vectors \(the file is empty\)"),
        (b"the a b\n", r"vectors.txt:1: expected a word and numbers"),
        (b"2 0\nthe 1 2\n", r"vectors.txt:1: expected a word and numbers"),
    ],
)
def test_malformed_text_files(tmp_path, content, message):
    path = tmp_path / "vectors.txt"
    path.write_bytes(content)
    with pytest.raises(EmbeddingFormatError, match=message):
        load_glove(str(path), ["the", "apple"])


def test_checksum_is_verified(text_file):
    with pytest.raises(OSError, match="checksum mismatch"):
        load_glove(str(text_file), VOCABULARY, sha256="0" * 64)
