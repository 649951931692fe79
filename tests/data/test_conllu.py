"""CoNLL-U corpora as users hand them over: a Universal Dependencies release folder loaded by
name, the column-file options CoNLL-U cannot take refused by name, and the sentence-length
guard every format has. The files are written here in the real release's layout."""

from pathlib import Path

import pytest

from ner.data import prepare_corpus
from ner.data.columns import ColumnFormatError
from ner.data.conllu import read_conllu_file


def conllu(*sentences: str) -> str:
    """CoNLL-U text with one sentence per argument (words separated by spaces, all NOUN)."""
    blocks = []
    for number, text in enumerate(sentences, 1):
        words = [
            f"{i}\t{word}\t{word.lower()}\tNOUN\tNN\t_\t0\troot\t_\t_"
            for i, word in enumerate(text.split(), 1)
        ]
        blocks.append(f"# sent_id = {number}\n# text = {text}\n" + "\n".join(words) + "\n\n")
    return "".join(blocks)


def ud_release(folder: Path) -> Path:
    """A folder laid out like UD_English-EWT: each split as .conllu and as raw .txt, plus the
    release's LICENSE.txt, README.md and stats.xml."""
    folder.mkdir(parents=True)
    texts = {"train": ("Dogs bark", "Cats sleep all day"), "dev": ("Birds sing",), "test": ("Hi",)}
    for split, sentences in texts.items():
        (folder / f"en_ewt-ud-{split}.conllu").write_text(conllu(*sentences))
        (folder / f"en_ewt-ud-{split}.txt").write_text(" ".join(sentences) + "\n")
    (folder / "LICENSE.txt").write_text("Creative Commons Attribution-ShareAlike 4.0\n")
    (folder / "README.md").write_text("# Summary\n\nA tiny stand-in for UD English EWT.\n")
    (folder / "stats.xml").write_text('<?xml version="1.0" encoding="UTF-8"?>\n<treebank/>\n')
    return folder


def test_a_ud_release_folder_loads_by_name(tmp_path, isolated_data_dir):
    folder = ud_release(tmp_path / "UD_English-EWT")
    corpus, info = prepare_corpus(str(folder), format="conllu")
    assert info.sentences == {"train": 2, "validation": 1, "test": 1}
    assert info.origins["train"].endswith("en_ewt-ud-train.conllu")
    assert corpus["train"]["tokens"][1] == ["Cats", "sleep", "all", "day"]


def test_a_ud_release_read_as_column_files_points_at_the_format(tmp_path, isolated_data_dir):
    folder = ud_release(tmp_path / "UD_English-EWT")
    with pytest.raises(ValueError, match=r"en_ewt-ud-dev\.conllu and en_ewt-ud-dev\.txt .*format"):
        prepare_corpus(str(folder))


@pytest.mark.parametrize(
    "option",
    [
        {"columns": ["tokens", "tags"]},
        {"token_column": 1},
        {"tag_column": 3},
        {"separator": "tab"},
        {"docstart": "#"},
    ],
)
def test_column_options_are_refused_by_name(tmp_path, isolated_data_dir, option):
    folder = ud_release(tmp_path / "UD_English-EWT")
    (key,) = option
    with pytest.raises(ValueError, match=rf"^{key}=.*/UD_English-EWT is CoNLL-U files"):
        prepare_corpus(str(folder), format="conllu", **option)


def test_a_sentence_past_max_sentence_tokens_is_an_error(tmp_path, isolated_data_dir):
    folder = ud_release(tmp_path / "UD_English-EWT")
    corpus, _ = prepare_corpus(str(folder), format="conllu", max_sentence_tokens=4)
    assert corpus["train"].num_rows == 2
    # Line 11 holds the fourth word of the sentence whose first word is on line 8.
    message = r"en_ewt-ud-train\.conllu:11: the sentence starting at line 8 has over 3 tokens"
    with pytest.raises(ColumnFormatError, match=message):
        prepare_corpus(str(folder), format="conllu", max_sentence_tokens=3)


def test_the_default_guard_catches_missing_sentence_breaks(tmp_path):
    """Without blank lines between sentences, a file reads as one sentence; 5,000 words stop it."""
    path = tmp_path / "train.conllu"
    path.write_text(conllu(" ".join(["w"] * 5001)))
    with pytest.raises(ColumnFormatError, match=r"train\.conllu:5003: .* over 5000 tokens"):
        read_conllu_file(path)
    assert len(read_conllu_file(path, max_sentence_tokens=None)[0].fields["tokens"]) == 5001
