"""Per-token label sets (part of speech and the like): detection, the labels option, columns
chosen by name, CoNLL-U files and the Penn Treebank sample, each from files the test writes."""

import dataclasses
import hashlib
import io
import logging
import zipfile

import pytest

from ner.data import load_corpus, prepare_corpus
from ner.data.columns import ColumnFormatError
from ner.data.conllu import read_conllu_file
from ner.data.corpora import NAMED_CORPORA
from ner.data.labels import detect_labels
from ner.data.treebank import read_mrg

POS_TRAIN = "The DT\ndog NN\nbarks VBZ\n. .\n\nA DT\ncat NN\nB-52 NNP\n"
POS_DEV = "The DT\ncat NN\n"
POS_TEST = "A DT\ndog NN\n"


def write(folder, files: dict[str, str | bytes]):
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (folder / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    return folder


def labels_of(corpus, split: str) -> list[list[str]]:
    names = corpus[split].features["tags"].feature
    return [names.int2str(tags) for tags in corpus[split]["tags"]]


def test_detection_tells_chunk_tags_from_plain_labels():
    assert detect_labels([["B-PER", "I-PER", "O"], ["S-LOC"]])[0] == "spans"
    mode, why = detect_labels([["DT", "NN", "VBZ"], ["."]])
    assert mode == "tokens" and "4 of 4 labels are not chunk tags" in why
    # Mostly chunk tags with one stray label: spans, so the stray one is reported as an error.
    assert detect_labels([["B-PER", "I-PER", "O", "B-LOC", "PER"]])[0] == "spans"


def test_plain_labels_are_kept_as_they_are(tmp_path, isolated_data_dir, caplog):
    folder = write(tmp_path, {"train.txt": POS_TRAIN, "dev.txt": POS_DEV, "test.txt": POS_TEST})
    with caplog.at_level(logging.INFO):
        corpus = load_corpus(folder)
    _, info = prepare_corpus(folder)
    assert (info.labels, info.source_scheme, info.tag_scheme) == ("tokens", "tokens", "tokens")
    assert "labels=tokens (detected: 5 of 5 labels are not chunk tags" in caplog.text
    # Sorted by name, never converted: "B-52"'s tag NNP and the "." label stay as they are.
    assert corpus["train"].features["tags"].feature.names == [".", "DT", "NN", "NNP", "VBZ"]
    assert labels_of(corpus, "train") == [["DT", "NN", "VBZ", "."], ["DT", "NN", "NNP"]]


def test_the_labels_option_forces_a_mode(tmp_path, isolated_data_dir):
    folder = write(tmp_path, {"train.txt": POS_TRAIN, "dev.txt": POS_DEV, "test.txt": POS_TEST})
    with pytest.raises(ColumnFormatError, match=r"train.txt:1: unknown tag 'DT'.*labels=tokens"):
        load_corpus(folder, labels="spans")
    with pytest.raises(ValueError, match="tag_scheme=bioes: per-token labels"):
        load_corpus(folder, tag_scheme="bioes")
    with pytest.raises(ValueError, match="unknown labels='words'"):
        load_corpus(folder, labels="words")
    # Chunk tags read as plain labels: B-PER and I-PER are two labels, nothing is converted.
    ner = write(tmp_path / "ner", {"train": "a B-PER\nb I-PER\n", "dev": "c O\n", "test": "d O\n"})
    _, info = prepare_corpus(ner, labels="tokens")
    assert info.labels == "tokens" and info.labels_reason == "labels=tokens"


def test_a_named_column_becomes_the_labels(tmp_path, isolated_data_dir):
    train = "EU NNP I-ORG\nrejects VBZ O\n\nPeter NNP I-PER\n"
    folder = write(tmp_path, {"train": train, "dev": "Bonn NNP I-LOC\n", "test": "x NN O\n"})
    corpus, info = prepare_corpus(folder, columns=["tokens", "pos", "tags"], label_column="pos")
    assert info.labels == "tokens" and labels_of(corpus, "train") == [["NNP", "VBZ"], ["NNP"]]
    assert "pos" not in corpus["train"].column_names
    with pytest.raises(ValueError, match=r"label_column='lemma' is not one of .*\(pos, tags\)"):
        prepare_corpus(folder, columns=["tokens", "pos", "tags"], label_column="lemma")
    with pytest.raises(ValueError, match=r"label_column='pos' names a column.*columns="):
        prepare_corpus(folder, label_column="pos")


# A multiword token (2-3 "vámonos" → "vamos" "nos"), an empty node (4.1), comments and two
# documents; FEATS "_" means no features.
CONLLU = """# newdoc id = a
# sent_id = 1
# text = Ya vámonos al mar
1\tYa\tya\tADV\tRG\t_\t2\tadvmod\t_\t_
2-3\tvámonos\t_\t_\t_\t_\t_\t_\t_\t_
2\tvamos\tir\tVERB\tVMIP1P0\tMood=Ind|Number=Plur\t0\troot\t_\t_
3\tnos\tnosotros\tPRON\tPP1CP00\tCase=Acc|Number=Plur\t2\tobj\t_\t_
4\tal\tal\tADP\tSPCMS\t_\t5\tcase\t_\t_
4.1\tir\tir\tVERB\tVMIP1P0\t_\t_\t_\t2:conj\t_
5\tmar\tmar\tNOUN\tNCMS000\tNumber=Sing\t2\tobl\t_\t_

# newdoc id = b
# sent_id = 2
1\tHola\thola\tINTJ\tI\t_\t0\troot\t_\t_
"""


def test_conllu_reads_words_not_multiword_tokens_or_empty_nodes(tmp_path):
    path = write(tmp_path, {"es-ud-train.conllu": CONLLU}) / "es-ud-train.conllu"
    first, second = read_conllu_file(path, "upos")
    assert first.fields == {
        "tokens": ["Ya", "vamos", "nos", "al", "mar"],
        "tags": ["ADV", "VERB", "PRON", "ADP", "NOUN"],
    }
    assert first.lines == [4, 6, 7, 8, 10] and (first.document_id, second.document_id) == (0, 1)
    assert read_conllu_file(path, "xpos")[0].fields["tags"][1] == "VMIP1P0"
    assert read_conllu_file(path, "feats")[0].fields["tags"] == [
        "_", "Mood=Ind|Number=Plur", "Case=Acc|Number=Plur", "_", "Number=Sing",
    ]  # fmt: skip


def test_a_conllu_folder_is_a_corpus(tmp_path, isolated_data_dir):
    folder = write(
        tmp_path / "ud",
        {f"es_tiny-ud-{split}.conllu": CONLLU for split in ("train", "dev", "test")},
    )
    corpus, info = prepare_corpus(folder, format="conllu", label_column="upos")
    assert info.labels == "tokens" and info.sentences == {"train": 2, "validation": 2, "test": 2}
    assert labels_of(corpus, "test")[1] == ["INTJ"]
    assert corpus["train"]["tokens"][0] == ["Ya", "vamos", "nos", "al", "mar"]
    xpos, _ = prepare_corpus(folder, format="conllu", label_column="xpos")
    assert labels_of(xpos, "test")[1] == ["I"]
    with pytest.raises(ValueError, match="label_column='deps' is not a CoNLL-U label column"):
        prepare_corpus(folder, format="conllu", label_column="deps")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("1\tYa\tya\tADV\n", r"train.conllu:1: expected 10 tab-separated CoNLL-U columns, found 4"),
        ("x\tYa\tya\tADV\t_\t_\t0\troot\t_\t_\n", r"train.conllu:1: ID 'x' is not a word number"),
        ("1\tYa\tya\t_\t_\t_\t0\troot\t_\t_\n", r"train.conllu:1: no UPOS for 'Ya'"),
        ("# only a comment\n", r"train.conllu:1: no sentences"),
    ],
)
def test_bad_conllu_names_file_and_line(tmp_path, content, message):
    path = write(tmp_path, {"train.conllu": content}) / "train.conllu"
    with pytest.raises(ColumnFormatError, match=message):
        read_conllu_file(path, "upos")


# Two trees in the bracketed format of treebank/combined/*.mrg, with trace leaves (-NONE-).
MRG = """
( (S
    (NP-SBJ-1 (NNP Pierre) (NNP Vinken) )
    (VP (MD will)
      (VP (VB join)
        (NP (-NONE- *-1) )
        (NP (DT the) (NN board) )))
    (. .) ))
( (S (NP-SBJ (PRP It) ) (VP (VBZ rains) (SBAR (-NONE- 0) (S (-NONE- *T*-2) ))) (. .) ))
"""


def test_treebank_trees_give_words_and_tags_without_traces(tmp_path):
    path = write(tmp_path, {"wsj_0001.mrg": MRG}) / "wsj_0001.mrg"
    first, second = read_mrg(path, document_id=7)
    assert first.fields["tokens"] == ["Pierre", "Vinken", "will", "join", "the", "board", "."]
    assert first.fields["tags"] == ["NNP", "NNP", "MD", "VB", "DT", "NN", "."]
    assert second.fields == {"tokens": ["It", "rains", "."], "tags": ["PRP", "VBZ", "."]}
    assert first.document_id == 7 and first.lines[:3] == [3, 3, 4]
    broken = write(tmp_path, {"bad.mrg": "( (S (NN dog) )\n"}) / "bad.mrg"
    with pytest.raises(ColumnFormatError, match=r"bad.mrg:1: the tree opened here is never"):
        read_mrg(broken)


def treebank_zip(folder) -> bytes:
    """An nltk_data treebank.zip in the real layout: wsj_0001 .. wsj_0199 in combined/ (file N
    holds N % 3 + 1 sentences), plus the tagged/ and raw/ folders the loader does not read."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for number in range(1, 200):
            trees = "".join(
                f"( (S (NP-SBJ (NN w{number}s{i}) ) (VP (VBZ is) (-NONE- *-1)) (. .) ))\n"
                for i in range(number % 3 + 1)
            )
            archive.writestr(f"treebank/combined/wsj_{number:04d}.mrg", trees)
            archive.writestr(f"treebank/tagged/wsj_{number:04d}.pos", "w/NN\n")
            archive.writestr(f"treebank/raw/wsj_{number:04d}", ".START\n\nw\n")
    (folder / "packages" / "corpora").mkdir(parents=True)
    (folder / "packages" / "corpora" / "treebank.zip").write_bytes(buffer.getvalue())
    return buffer.getvalue()


@pytest.fixture
def ptb_mirror(tmp_path, isolated_data_dir, monkeypatch) -> str:
    """An nltk_data folder holding `treebank_zip`'s archive, which stands in for the pinned one
    (its digest, the real layout)."""
    mirror = tmp_path / "nltk_data"
    content = treebank_zip(mirror)
    corpus_spec = dataclasses.replace(
        NAMED_CORPORA["ptb_sample"], sha256=hashlib.sha256(content).hexdigest()
    )
    monkeypatch.setitem(NAMED_CORPORA, "ptb_sample", corpus_spec)
    return str(mirror)


def test_ptb_sample_splits_by_file(ptb_mirror):
    corpus, info = prepare_corpus("ptb_sample", nltk_data_url=ptb_mirror)
    ranges = {"train": (1, 159), "validation": (160, 179), "test": (180, 199)}
    sentences = {s: sum(n % 3 + 1 for n in range(a, b + 1)) for s, (a, b) in ranges.items()}
    assert info.sentences == sentences and info.labels == "tokens"
    assert corpus["train"]["tokens"][0] == ["w1s0", "is", "."]
    assert corpus["validation"]["tokens"][0] == ["w160s0", "is", "."]
    assert corpus["test"]["tokens"][-1] == ["w199s1", "is", "."]
    assert labels_of(corpus, "test")[0] == ["NN", "VBZ", "."]
    # One document per file.
    assert max(corpus["test"]["document_id"]) + 1 == 20


def test_ptb_sample_applies_max_sentence_tokens(ptb_mirror):
    corpus, _ = prepare_corpus("ptb_sample", nltk_data_url=ptb_mirror, max_sentence_tokens=3)
    assert corpus["test"]["tokens"][-1] == ["w199s1", "is", "."]
    # Every tree has 3 words: "w1s0 is ." in wsj_0001.mrg, line 1.
    with pytest.raises(ColumnFormatError, match=r"wsj_0001\.mrg:1: the sentence .* over 2 tokens"):
        prepare_corpus("ptb_sample", nltk_data_url=ptb_mirror, max_sentence_tokens=2)


@pytest.mark.slow
@pytest.mark.mirror
def test_ptb_sample_from_nltk_data():
    corpus, info = prepare_corpus("ptb_sample")
    assert info.sentences == {"train": 3396, "validation": 273, "test": 245}
    assert info.tokens == {"train": 81793, "validation": 6327, "test": 5964}
    assert len(corpus["train"].features["tags"].feature.names) == 45
    assert corpus["train"]["tokens"][0][:3] == ["Pierre", "Vinken", ","]


@pytest.mark.slow
@pytest.mark.mirror
def test_pos_column_of_conll2000():
    corpus, info = prepare_corpus("conll2000", label_column="pos")
    assert info.labels == "tokens" and info.sentences["train"] == 8042
    assert labels_of(corpus, "train")[0][:3] == ["NN", "IN", "DT"]
