"""CoNLL input in `ner.model.tag_files`: cut into chunks of whole blocks, tagged a chunk at a
time and scored as the whole file (`Tagger.evaluate` on all its sentences); on the tiny model."""

import functools
import io
import os
import tracemalloc

import pytest
from tiny_tagger import corpus, gold_conll, one_thread, saved_model

from ner.data.tag_input import ConllSentence, Line, read_conll, read_lines
from ner.model.tag_files import MAX_LINE_CHARS, LinesAgain, chunks, tag_and_score_conll
from ner.model.tagger import Tagger


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread():
        yield


@functools.cache
def tagger() -> Tagger:
    return Tagger.load(saved_model())


def lines_of(data: bytes) -> list[Line]:
    return list(read_lines(io.BytesIO(data), "utf-8"))


def test_chunks_of_blocks_are_read_as_the_file_whole():
    data, tokens, _ = gold_conll()
    lines = lines_of(data)
    parts = list(chunks(lines, 2, MAX_LINE_CHARS, conll=True))
    assert len(parts) > 5 and [line for part in parts for line in part] == lines
    read = [list(read_conll(part)) for part in parts]
    assert [item for items in read for item in items] == list(read_conll(lines))
    for part, items in zip(parts[:-1], read[:-1], strict=True):
        assert not part[-1].text.strip() and len(items) == 2  # ends at a blank line
    sentences = [item.tokens for items in read for item in items if isinstance(item, ConllSentence)]
    assert sentences == tokens


def tag(data: bytes, chunk_lines: int, output_format: str = "conll", **options):
    out, warnings = io.StringIO(), []
    evaluation, skipped = tag_and_score_conll(
        tagger(), lines_of(data), out, output_format=output_format, chunk_lines=chunk_lines,
        batch_size=2, warn=warnings.append, **options,
    )  # fmt: skip
    return evaluation, skipped, out.getvalue(), warnings


def test_a_file_tagged_in_chunks_is_scored_as_a_whole(monkeypatch):
    data, tokens, gold = gold_conll()
    calls = []
    predict_tokens = tagger().predict_tokens

    def counted(sentences, **options):
        calls.append(len(sentences))
        return predict_tokens(sentences, **options)

    monkeypatch.setattr(tagger(), "predict_tokens", counted)
    evaluation, skipped, out, warnings = tag(data, 2)
    assert max(calls) == 2 and sum(calls) == len(tokens)  # never the whole file at once
    monkeypatch.undo()
    whole = tagger().evaluate(tokens, gold, batch_size=2)
    assert evaluation is not None and evaluation.record() == whole.record()
    assert evaluation.summary() == whole.summary() and 0 < whole.scores["f1"] < 100
    assert skipped == 1 and len(warnings) == 1 and "line " in warnings[0]
    assert out == tag(data, 1000)[2]  # the same tags whatever the chunks
    predicted = [line.split("\t")[1] for line in out.splitlines() if "\t" in line]
    assert predicted == [t for result in whole.tagged for t in result.tags]


def test_a_file_read_once_as_it_streams_is_held_whole():
    data, tokens, gold = gold_conll()
    out = io.StringIO()
    evaluation, _ = tag_and_score_conll(tagger(), iter(lines_of(data)), out, chunk_lines=3)
    whole = tagger().evaluate(tokens, gold)
    assert evaluation is not None and evaluation.record() == whole.record()
    assert len(out.getvalue().splitlines()) == len(tokens) + 1  # + the bad block's error


def test_standard_input_is_read_twice_through_a_temporary_copy():
    data = gold_conll()[0]
    reader, writer = os.pipe()
    with os.fdopen(writer, "wb") as pipe:
        pipe.write(data)
    with os.fdopen(reader, "rb") as stream:
        assert not stream.seekable()
        lines = LinesAgain(stream, "utf-8")
        assert list(lines) == list(lines) == lines_of(data)


def test_sentences_without_gold_tags_are_tagged_unscored():
    data = b"John B-PER\nSmith I-PER\n\nMary\nwent\n\n-DOCSTART-\n\nAnna B-PER\n"
    evaluation, skipped, out, warnings = tag(data, 1, "jsonl")
    assert evaluation is None and skipped == 0
    assert warnings == ["some sentences have no gold tags, so nothing was scored"]
    assert len(out.splitlines()) == 3


def heap_peak(tmp_path, sentences: int) -> int:
    """The Python heap's peak (bytes) over tagging and scoring a CoNLL file of `sentences`
    sentences whose token lines carry a 1 kB column, as ``ner-predict FILE`` does."""
    path = tmp_path / f"{sentences}.conll"
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(sentences):
            words, tags = corpus()[index % len(corpus())]
            handle.write(
                "".join(f"{w} {'x' * 1000} {t}\n" for w, t in zip(words, tags, strict=True))
            )
            handle.write("\n")
    with open(path, "rb") as stream, open(os.devnull, "w") as out:
        tracemalloc.start()
        try:
            evaluation, _ = tag_and_score_conll(
                tagger(), LinesAgain(stream, "utf-8"), out, chunk_lines=20, batch_size=8
            )
            assert evaluation is not None and evaluation.counts.sentences == sentences
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


@pytest.mark.slow
def test_the_heap_peak_does_not_grow_with_the_file(tmp_path):
    heap_peak(tmp_path, 20)  # warm
    small, large = heap_peak(tmp_path, 40), heap_peak(tmp_path, 400)
    # 360 more sentences of 4 to 8 tokens hold over 2 MB more text; a chunk of 20, 0.2 MB at most
    assert large - small < 500_000, (small, large)


def test_each_chunk_encodes_its_tokens_afresh(monkeypatch):
    """A token's char-CNN vector depends in its last bits on the batch it was computed in, so a
    chunk must not reuse vectors an earlier chunk computed: otherwise the bytes of a chunk's
    output would depend on which chunks a process tagged before it (``--jobs``, resume)."""
    from ner.model.tag_files import tag_input

    bilm = tagger().bilm
    encoded: list[str] = []
    token_vectors = bilm._token_vectors

    def spied(tokens):
        encoded.extend(tokens)
        return token_vectors(tokens)

    monkeypatch.setattr(bilm, "_token_vectors", spied)
    lines = lines_of(b"Peter lives in Rome\nPeter works in Rome\n")
    tag_input(tagger(), lines, io.StringIO(), input_format="tokens", chunk_lines=1)
    assert encoded.count("Peter") == 2 and encoded.count("Rome") == 2
