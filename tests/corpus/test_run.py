"""`ner-predict ... --output-dir`: byte-identical to the single-input command whatever the split
(--jobs, --shard, compression), resumable after a kill, refusing another run's folder, and
failing an unreadable input alone; and across --threads and --batch-size, identical tags with
confidences within 1e-6 (docs/prediction.md says so); on the tiny model."""

import bz2
import gzip
import json
import lzma
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from tiny_tagger import corpus, gold_conll, one_thread, saved_model

from ner.cli.predict import main
from ner.common.files import file_lock
from ner.common.paths import PROJECT_ROOT
from ner.model.tagger import Tagger

LONG_LINE = " ".join(["Rome", "and"] * 400)
# short, long, empty, blank, undecodable and binary lines, in varying order
LINES = [
    b"Peter Smith lives in Rome. Anna went to Berlin!",
    b"",
    b"John Smith went to Paris .",
    b"caf\xe9 in Rome",
    LONG_LINE.encode(),
    b"bin\x00ary",
    b"   ",
    b"Mary flew to Madrid on Monday .",
]
OPTIONS = ["--threads", "1", "--chunk-lines", "3", "--batch-size", "2", "--max-length", "50"]


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread():
        yield


def corpus_text(lines: int, seed: int) -> bytes:
    return b"\n".join(LINES[(i * seed + i // 3) % len(LINES)] for i in range(lines)) + b"\n"


def make_corpus(root: Path) -> dict[str, bytes]:
    """Plain and compressed inputs under `root`; returns output name → uncompressed bytes."""
    texts = {"a": corpus_text(17, 1), "sub/b": corpus_text(10, 3), "c": b"", "d": corpus_text(4, 5)}
    writers = {"a": (".txt", bytes), "sub/b": (".txt.gz", gzip.compress)}
    writers |= {"c": (".txt.xz", lzma.compress), "d": (".txt.bz2", bz2.compress)}
    for name, text in texts.items():
        suffix, compress = writers[name]
        path = root / (name + suffix)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(compress(text))
    return {name + ".jsonl": text for name, text in texts.items()}


def predict(*args: object) -> int:
    return main([str(saved_model()), *map(str, args), *OPTIONS])


def single_outputs(tmp_path: Path, texts: dict[str, bytes]) -> dict[str, bytes]:
    """Each input tagged by the single-input command."""
    expected = {}
    for name, text in texts.items():
        source = tmp_path / "plain" / name.replace("/", "_")
        source.parent.mkdir(exist_ok=True)
        source.write_bytes(text)
        assert predict(source, "-o", source.with_suffix(".out")) == 0
        expected[name] = source.with_suffix(".out").read_bytes()
    return expected


def outputs(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and ".ner-predict" not in p.parts
    }


@pytest.mark.slow
def test_every_split_writes_the_bytes_of_the_single_input_command(tmp_path, capsys):
    texts = make_corpus(tmp_path / "in")
    expected = single_outputs(tmp_path, texts)
    assert b'"error"' in expected["a.jsonl"] and len(expected["a.jsonl"].splitlines()) == 17
    assert predict(tmp_path / "in", "--output-dir", tmp_path / "one", "--jobs", "1") == 0
    assert outputs(tmp_path / "one") == expected
    capsys.readouterr()
    assert predict(tmp_path / "in", "--output-dir", tmp_path / "one", "--jobs", "1") == 0
    err = capsys.readouterr().err  # a rerun finds every input done
    assert "4 inputs, 0 lines" in err
    assert predict(tmp_path / "in", "--output-dir", tmp_path / "two", "--jobs", "2") == 0
    err = capsys.readouterr().err
    assert re.search(r"warning: \S*in/a\.txt: line \d+ holds NUL bytes", err)
    assert "4 inputs, 31 lines" in err and "6 lines skipped" in err and "tokens/s" in err
    assert outputs(tmp_path / "two") == expected
    for part in ("1/3", "0/3", "2/3"):
        assert predict(tmp_path / "in", "--output-dir", tmp_path / "k", "--shard", part) == 0
        assert outputs(tmp_path / "k") == {}  # a --shard run assembles nothing
    capsys.readouterr()
    assert predict(tmp_path / "in", "--output-dir", tmp_path / "k") == 0
    assert outputs(tmp_path / "k") == expected
    err = capsys.readouterr().err  # every shard was done: only assembled
    assert "4 inputs, 0 lines" in err and "shards were done before and kept" in err


CONLL = ["--input-format", "conll", "--format", "conll"]


@pytest.mark.slow
def test_conll_is_cut_at_sentences_and_scored_once_as_a_whole(tmp_path, capsys):
    data, tokens, gold = gold_conll()  # 19 blocks: 7 shards of 3
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "gold.conll").write_bytes(data)
    pos = "\n".join("".join(f"{t} NNP\n" for t in words) for words, _ in corpus())
    (tmp_path / "in" / "pos.conll").write_text(pos)  # the last column is no NER tags
    expected, scores = {}, tmp_path / "scores.json"
    for name in ("gold.conll", "pos.conll"):
        out = tmp_path / f"single-{name}"
        assert predict(tmp_path / "in" / name, "-o", out, *CONLL, "--scores", scores) == 0
        expected[name] = out.read_bytes()
    whole = Tagger.load(saved_model()).evaluate(tokens, gold, batch_size=2)
    assert json.loads(scores.read_text()) == whole.record() and 0 < whole.scores["f1"] < 100
    assert f"ner-predict: {whole.summary()}" in capsys.readouterr().err
    said = f"gold.conll: {whole.summary()}"
    for jobs in ("1", "2"):
        assert (
            predict(tmp_path / "in", "--output-dir", tmp_path / jobs, "--jobs", jobs, *CONLL) == 0
        )
        assert outputs(tmp_path / jobs) == expected
        err = capsys.readouterr().err
        assert err.count(said) == 1 and err.count("scored") == 1  # once per file, not per shard
        assert err.count("not NER tags") == 1 and err.count("is not valid utf-8") == 1
    out = tmp_path / "kept"  # half the shards kept by a --shard run, then the rest: same scores
    assert predict(tmp_path / "in", "--output-dir", out, "--shard", "0/2", *CONLL) == 0
    assert "scored" not in capsys.readouterr().err
    assert finished(out / ".ner-predict" / "shards" / "gold.conll") >= 3
    assert predict(tmp_path / "in", "--output-dir", out, *CONLL) == 0
    assert outputs(out) == expected and capsys.readouterr().err.count(said) == 1


def test_jsonl_input_carries_its_fields_and_skips_bad_records(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    records = [
        {"id": 1, "text": "John Smith went to Paris ."},
        "not json",
        {"id": 3, "body": "no text field"},
        {"id": 4, "text": "Anna likes Rome .", "tokens": "clash"},
        {"id": 5, "text": ""},
    ]
    source.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    args = ["--input-format", "jsonl"]
    assert predict(source, "--output-dir", tmp_path / "out", *args) == 0
    written = [
        json.loads(line) for line in (tmp_path / "out" / "in.jsonl").read_text().splitlines()
    ]
    assert written[0]["id"] == 1 and [e["text"] for e in written[0]["entities"]] == [
        "John Smith",
        "Paris",
    ]
    assert "is not JSON" in written[1]["error"] and "'text'" in written[2]["error"]
    assert "'tokens' is a key of the output record" in written[3]["error"]
    assert written[4]["id"] == 5 and written[4]["tokens"] == []
    err = capsys.readouterr().err
    assert f"warning: {source}: line 2 is not JSON" in err and "3 lines skipped" in err
    assert predict(source, "-o", tmp_path / "single.jsonl", *args) == 0
    assert (tmp_path / "single.jsonl").read_bytes() == (tmp_path / "out" / "in.jsonl").read_bytes()


def test_another_runs_folder_and_a_held_lock_are_refused(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("John Smith went to Paris .\n")
    out = tmp_path / "out"
    assert predict(tmp_path / "a.txt", "--output-dir", out) == 0
    capsys.readouterr()
    status = main([str(saved_model()), str(tmp_path / "a.txt"), "--output-dir", str(out),
                   *OPTIONS, "--batch-size", "5"])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2 and len(err.splitlines()) == 1
    assert "tagged with --batch-size 2, not 5" in err
    (tmp_path / "a.txt").write_text("Mary went to Rome .\n")
    assert predict(tmp_path / "a.txt", "--output-dir", out) == 2
    assert "the input behind a.jsonl has changed" in capsys.readouterr().err
    with file_lock(out / ".ner-predict" / "run"):
        assert predict(tmp_path / "a.txt", "--output-dir", tmp_path / "out2") == 0
        assert predict(tmp_path / "a.txt", "--output-dir", out) == 2
    assert "another ner-predict run is writing into it" in capsys.readouterr().err


def test_an_unreadable_input_fails_alone(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "good.txt").write_text("John Smith went to Paris .\n")
    truncated = gzip.compress(b"Anna likes Rome .\n" * 50)[:-12]
    (tmp_path / "in" / "cut.txt.gz").write_bytes(truncated)
    out = tmp_path / "out"
    status = predict(tmp_path / "in", tmp_path / "gone.txt", "--output-dir", out)
    err = capsys.readouterr().err
    assert status == 1
    assert "2 inputs failed" in err and "cut.txt.gz" in err and "gone.txt" in err
    assert outputs(out) == {"good.jsonl": (out / "good.jsonl").read_bytes()}


def test_several_inputs_need_an_output_folder(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("x\n")
    assert predict(tmp_path / "a.txt", tmp_path / "a.txt") == 2
    assert "need --output-dir" in capsys.readouterr().err


def finished(shards: Path) -> int:
    """How many finished shard files `shards` holds (temporaries are hidden)."""
    return len([p for p in shards.glob("*") if not p.name.startswith(".")])


KILL_PROBE = """
import sys
import threading
from ner.cli.predict import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_a_killed_run_resumes_to_the_same_bytes(tmp_path, capsys):
    source = tmp_path / "big.txt"
    source.write_bytes(corpus_text(120, 7))
    expected = single_outputs(tmp_path, {"big.jsonl": source.read_bytes()})["big.jsonl"]
    out = tmp_path / "out"
    command = [sys.executable, "-c", KILL_PROBE, str(saved_model()), str(source),
               "--output-dir", str(out), "--quiet", *OPTIONS]  # fmt: skip
    process = subprocess.Popen(command, cwd=PROJECT_ROOT, stderr=subprocess.DEVNULL)
    shards = out / ".ner-predict" / "shards" / "big.jsonl"
    deadline = time.monotonic() + 240
    while process.poll() is None and time.monotonic() < deadline:
        if finished(shards) >= 3:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    kept = finished(shards)
    assert 3 <= kept < 40 and not (out / "big.jsonl").exists()
    capsys.readouterr()
    assert predict(source, "--output-dir", out) == 0
    assert (out / "big.jsonl").read_bytes() == expected
    assert f"{kept:,} shards were done before and kept" in capsys.readouterr().err


def records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_threads_and_batch_size_change_confidences_by_at_most_1e_6(tmp_path):
    source = tmp_path / "in.txt"
    source.write_bytes(corpus_text(16, 3))
    runs = {"base": [], "threads": ["--threads", "2"], "batch": ["--batch-size", "5"]}
    found = {}
    for name, extra in runs.items():
        assert predict(source, "-o", tmp_path / f"{name}.jsonl", *extra) == 0
        found[name] = records(tmp_path / f"{name}.jsonl")
    base = found.pop("base")
    assert sum(len(r.get("entities", [])) for r in base) > 20
    for other in found.values():
        for a, b in zip(base, other, strict=True):
            assert {k: v for k, v in a.items() if k != "entities"} == {
                k: v for k, v in b.items() if k != "entities"
            }
            spans = [(e["start"], e["end"], e["type"]) for e in a.get("entities", [])]
            assert spans == [(e["start"], e["end"], e["type"]) for e in b.get("entities", [])]
            for x, y in zip(a.get("entities", []), b.get("entities", []), strict=True):
                assert abs(x["confidence"] - y["confidence"]) <= 1e-6


def test_the_single_input_command_reads_compressed_input(tmp_path):
    text = corpus_text(6, 1)
    (tmp_path / "in.txt").write_bytes(text)
    (tmp_path / "in.txt.xz").write_bytes(lzma.compress(text))
    assert predict(tmp_path / "in.txt", "-o", tmp_path / "plain.jsonl") == 0
    assert predict(tmp_path / "in.txt.xz", "-o", tmp_path / "xz.jsonl") == 0
    assert (tmp_path / "xz.jsonl").read_bytes() == (tmp_path / "plain.jsonl").read_bytes()


@pytest.mark.slow
def test_a_killed_worker_stops_the_run_without_a_partial_output(tmp_path, capsys):
    source = tmp_path / "big.txt"
    source.write_bytes(corpus_text(90, 7))
    out = tmp_path / "out"
    shards = out / ".ner-predict" / "shards" / "big.jsonl"

    def kill_a_worker() -> None:
        deadline = time.monotonic() + 240
        while finished(shards) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(multiprocessing.active_children()[0].pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_a_worker)
    killer.start()
    status = predict(source, "--output-dir", out, "--jobs", "2", "--quiet")
    killer.join()
    assert status == 2 and "a worker process died" in capsys.readouterr().err
    assert not (out / "big.jsonl").exists() and 2 <= finished(shards) < 30
    assert predict(source, "--output-dir", out) == 0
    expected = single_outputs(tmp_path, {"big.jsonl": source.read_bytes()})["big.jsonl"]
    assert (out / "big.jsonl").read_bytes() == expected


def test_shards_end_where_the_single_command_cuts_a_chunk_of_long_lines(tmp_path, monkeypatch):
    monkeypatch.setattr("ner.model.tag_files.MAX_LINE_CHARS", 120)  # chunks end at 120 chars
    monkeypatch.setattr("ner.corpus.shards.MAX_LINE_CHARS", 120)
    source = tmp_path / "in.txt"
    source.write_bytes(corpus_text(12, 1).replace(LONG_LINE.encode(), b"Rome and " * 20))
    expected = single_outputs(tmp_path, {"in.jsonl": source.read_bytes()})["in.jsonl"]
    assert predict(source, "--output-dir", tmp_path / "out") == 0
    assert (tmp_path / "out" / "in.jsonl").read_bytes() == expected
    shards = tmp_path / "k" / ".ner-predict" / "shards" / "in.jsonl"
    assert predict(source, "--output-dir", tmp_path / "k", "--shard", "0/1") == 0
    assert finished(shards) > 12 / 3  # more shards than chunks of --chunk-lines 3
