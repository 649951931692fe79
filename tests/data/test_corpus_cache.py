"""The cache of prepared corpora: an entry is built once, and rebuilt when its files were changed
or damaged since, never read as it is."""

import datasets

from ner.data.builder import CorpusInfo
from ner.data.cache import cached_corpus

ROWS = {"tokens": [["Peter", "runs"]], "tags": [["B-PER", "O"]]}


class Build:
    """Counts the builds of a one-sentence corpus."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> tuple[datasets.DatasetDict, CorpusInfo]:
        self.calls += 1
        info = CorpusInfo("tiny", "iob2", "iob2", {"train": 1}, {"train": 2})
        return datasets.DatasetDict({"train": datasets.Dataset.from_dict(ROWS)}), info


def test_a_corpus_entry_changed_since_it_was_built_is_rebuilt(isolated_data_dir):
    build = Build()
    cached_corpus("tiny", {"source": "x"}, build)
    again, _ = cached_corpus("tiny", {"source": "x"}, build)
    assert build.calls == 1 and again["train"]["tokens"] == ROWS["tokens"]
    (arrow,) = (isolated_data_dir / "corpora").glob("tiny-*/arrow/train/*.arrow")
    data = arrow.read_bytes()
    edited = arrow.with_name("edited")
    edited.write_bytes(data.replace(b"Peter", b"Mary_"))  # another name, the same size
    edited.replace(arrow)
    rebuilt, _ = cached_corpus("tiny", {"source": "x"}, build)
    assert build.calls == 2 and rebuilt["train"]["tokens"] == ROWS["tokens"]
    assert arrow.read_bytes() == data
