"""A corpus run's memory does not grow with its input: the Python heap's peak while tagging ten
times the lines stays that of the shorter run (the measurement by hand on the shipped tagger is
in experiments/results/bench/corpus.md). Each JSON record carries a 4 kB field through, so that
a driver that held the input or the output of more than a few shards would show."""

import json
import tracemalloc
from pathlib import Path

import pytest
from tiny_tagger import one_thread, saved_model

from ner.corpus.inputs import discover
from ner.corpus.run import CorpusRun, tag_corpus
from ner.corpus.workers import TagOptions

SENTENCES = ["John Smith went to Paris .", "Anna likes Rome and Berlin .", "", "It rained ."]


def heap_peak(tmp_path: Path, lines: int) -> int:
    """The Python heap's peak (bytes) over tagging `lines` lines in this process."""
    source = tmp_path / f"in-{lines}.jsonl"
    records = [{"text": SENTENCES[i % 4], "payload": "x" * 4000} for i in range(lines)]
    source.write_text("".join(json.dumps(record) + "\n" for record in records))
    load = {"device": "cpu", "max_length": 256, "tag_scheme": None, "tokenizer": "news"}
    options = TagOptions(str(saved_model()), load, 1, 8, 20, "jsonl", "jsonl", "text", None)
    out = tmp_path / f"out-{lines}"
    run = CorpusRun(discover([str(source)], out, "jsonl"), out, options, quiet=True)
    tracemalloc.start()
    try:
        tag_corpus(run)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_the_heap_peak_does_not_grow_with_the_input(tmp_path):
    with one_thread():
        heap_peak(tmp_path, 40)  # the model loaded and warm once, outside the measurements
        small, large = heap_peak(tmp_path, 200), heap_peak(tmp_path, 2000)
    written = [(tmp_path / f"out-{n}" / f"in-{n}.jsonl").stat().st_size for n in (200, 2000)]
    assert written[1] > 8_000_000 and written[1] > 9 * written[0]
    assert large < 1.2 * small, (small, large)
