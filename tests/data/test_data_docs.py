"""The Python examples of docs/data.md run as written, on files made to fit their names (and the
tiny test model where the page says ``outputs/<date>/<time>/model``)."""

import re

import pytest
from tiny_tagger import one_thread, saved_model

from ner.common.paths import PROJECT_ROOT

PAGE = PROJECT_ROOT / "docs" / "data.md"


def python_block(heading: str) -> str:
    """The first ```python block after `heading` on the page."""
    section = PAGE.read_text().split(heading, 1)[1]
    return re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)


def test_own_corpus_examples(tmp_path, monkeypatch, isolated_data_dir):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mydata.tsv").write_text("".join(f"w{i}\tB-X\nx\tO\n\n" for i in range(30)))
    folder = tmp_path / "path" / "to" / "folder"
    folder.mkdir(parents=True)
    for name in ("train.txt", "dev.txt", "test.txt", "a.txt", "b.txt", "c.txt"):
        for place in (folder / name, tmp_path / name):
            place.write_text("Paris B-LOC\nis O\n")
    namespace: dict = {}
    exec(python_block("## Your own corpus"), namespace)
    assert namespace["corpus"]["test"]["tokens"] == [["Paris", "is"]]
    assert namespace["info"].holdout is None  # files= gave all three splits


@pytest.mark.slow
def test_tokenizer_example():
    code = python_block("## Tokenizers").replace("outputs/<date>/<time>/model", str(saved_model()))
    namespace: dict = {}
    with one_thread():
        exec(code, namespace)
    assert namespace["tagger"].tokenizer == "social"
    assert namespace["tagger"].predict("@ann :)")[0].tokens[0].text == "@ann"
