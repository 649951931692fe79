"""Property-based fuzzing of every reader of user files: whatever the bytes, the reader returns
its result or raises the project's own error naming the file (never a raw exception)."""

import json
import shutil
import tempfile
from pathlib import Path

import hypothesis.strategies as st
import pytest
from hypothesis import example, given, settings
from tiny_tagger import FIXTURE, saved_model

from ner.bilm.options import BiLMOptions, OptionsError
from ner.cli.predict import main as predict_main
from ner.data.columns import ColumnFormat, ColumnFormatError, read_column_file
from ner.model.archive import ArchiveError, load_archive, manifest_digest
from ner.pretrain.corpus import CorpusError, read_sentences

PROFILE = settings.get_profile("reliability")
BOM = "\ufeff".encode()

# Lines that look like corpus lines, so the fuzzer reaches deep paths, not just the first check.
corpus_line = st.one_of(
    st.just(""),
    st.just("-DOCSTART- O"),
    st.lists(
        st.sampled_from(["EU", "rejects", "B-ORG", "I-PER", "O", "NNP", "\ufeff", "\t", "é", "_"]),
        min_size=1,
        max_size=4,
    ).map(" ".join),
    st.text(max_size=30),
)
corpus_bytes = st.one_of(
    st.binary(max_size=400),
    st.lists(corpus_line, max_size=30).map(lambda lines: "\n".join(lines).encode("utf-8")),
    st.lists(corpus_line, max_size=30).map(
        lambda lines: "\r\n".join(lines).encode("latin-1", "replace")
    ),
)


SCRATCH = Path(tempfile.mkdtemp(prefix="ner-fuzz-"))


@pytest.fixture(scope="module", autouse=True)
def remove_scratch_files():
    yield
    shutil.rmtree(SCRATCH, ignore_errors=True)


def scratch_file(content: bytes, name: str = "input.txt") -> Path:
    """A new file holding `content` (one folder per example)."""
    path = Path(tempfile.mkdtemp(dir=SCRATCH)) / name
    path.write_bytes(content)
    return path


@PROFILE
@given(content=corpus_bytes, width=st.sampled_from([2, 4]), separator=st.sampled_from([None, "\t"]))
@example(content=b"\xef\xbb\xbfEU B-ORG\n", width=2, separator=None)
def test_column_files(content, width, separator):
    path = scratch_file(content)
    fmt = ColumnFormat.from_indices(width, separator=separator, max_sentence_tokens=20)
    try:
        sentences = read_column_file(path, fmt)
    except ColumnFormatError as error:
        assert str(error).startswith(str(path))
        return
    assert sentences and all(len(s.fields["tokens"]) == len(s.fields["tags"]) for s in sentences)
    assert all(token.strip() for s in sentences for token in s.fields["tokens"])
    if content.startswith(BOM):  # a leading byte-order mark is not text: as if it were absent
        without = read_column_file(scratch_file(content[len(BOM) :]), fmt)
        assert [s.fields for s in sentences] == [s.fields for s in without]


@PROFILE
@given(content=corpus_bytes)
def test_raw_text_for_pretraining(content):
    path = scratch_file(content)
    try:
        sentences = list(read_sentences(path, max_sentence_tokens=10))
    except CorpusError as error:
        assert str(error).startswith(str(path))
        return
    assert sentences and all(s and len(s) <= 10 for s in sentences)


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return saved_model()


@settings(PROFILE, max_examples=min(PROFILE.max_examples, 300))  # each one runs the tagger
@given(content=corpus_bytes, input_format=st.sampled_from(["text", "tokens", "conll"]))
@example(content=b"John lives in Paris .\n\x00\x01\n\xff\xfe\n", input_format="text")
def test_prediction_input_gives_one_json_record_per_line(model_dir, content, input_format, capsys):
    path = scratch_file(content)
    output = path.with_name("out.jsonl")
    arguments = [str(model_dir), str(path), "-o", str(output), "--input-format", input_format]
    status = predict_main([*arguments, "--threads", "1"])
    capsys.readouterr()
    assert status in (0, 1)  # 1: conll input without any sentence, reported in one line
    lines = output.read_text(encoding="utf-8").split("\n")  # JSONL: only \n ends a record
    assert lines[-1] == ""
    records = [json.loads(line) for line in lines[:-1]]
    assert all("line" in r and ("error" in r or "tokens" in r) for r in records)


scalars = st.none() | st.booleans() | st.integers(-3, 5000) | st.floats(allow_nan=False)
json_values = st.recursive(
    scalars | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
REAL_OPTIONS = json.loads((FIXTURE / "options.json").read_text())


def mutated(document: dict, draw) -> dict:
    """`document` with one value somewhere replaced by a random JSON value (or deleted)."""
    copy = json.loads(json.dumps(document))
    node = copy
    while True:
        key = draw(st.sampled_from(sorted(node)))
        if isinstance(node[key], dict) and node[key] and draw(st.booleans()):
            node = node[key]
            continue
        if draw(st.booleans()):
            del node[key]
        else:
            node[key] = draw(json_values)
        return copy


@PROFILE
@given(data=st.data(), kind=st.sampled_from(["bytes", "json", "mutated"]))
def test_options_json(data, kind):
    if kind == "bytes":
        content = data.draw(st.binary(max_size=200))
    elif kind == "json":
        content = json.dumps(data.draw(json_values)).encode()
    else:
        content = json.dumps(mutated(REAL_OPTIONS, data.draw)).encode()
    path = scratch_file(content, "options.json")
    try:
        BiLMOptions.from_file(path)
    except OptionsError as error:
        assert str(path) in str(error)


@PROFILE
@given(data=st.data(), sign=st.booleans())
def test_archive_json(model_dir, data, sign):
    """Mutated manifests, re-signed (as a crafted file would be) or not."""
    manifest = json.loads((model_dir / "archive.json").read_text())
    changed = mutated(manifest, data.draw)
    if sign:
        changed["manifest_sha256"] = manifest_digest(changed)
    folder = Path(tempfile.mkdtemp(dir=SCRATCH))
    for item in model_dir.rglob("*"):
        if item.is_file():
            (folder / item.relative_to(model_dir)).parent.mkdir(parents=True, exist_ok=True)
            (folder / item.relative_to(model_dir)).symlink_to(item)
    (folder / "archive.json").unlink()
    (folder / "archive.json").write_text(json.dumps(changed))
    try:
        load_archive(folder)
    except ArchiveError as error:
        assert str(folder) in str(error)
    else:  # accepted unsigned only if the content did not change (e.g. a value set to itself)
        assert sign or manifest_digest(changed) == manifest_digest(manifest)
