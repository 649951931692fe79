"""Atomic writes of files and folders, and the file lock (faults: tests/reliability)."""

import multiprocessing
import time

import pytest

from ner.common.files import atomic_directory, atomic_write, file_lock, write_json


def test_a_file_appears_only_complete(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_write(target, "w") as handle:
        handle.write("half")
        raise RuntimeError("crash mid-write")
    assert target.read_text() == "old"
    write_json(target, {"ok": "é"})
    assert target.read_text(encoding="utf-8") == '{\n "ok": "é"\n}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_folder_appears_only_complete_and_replace_swaps_it(tmp_path):
    target = tmp_path / "entry"
    with pytest.raises(RuntimeError), atomic_directory(target) as staging:
        (staging / "a").write_text("1")
        raise RuntimeError("crash mid-build")
    assert not target.exists() and list(tmp_path.iterdir()) == []
    with atomic_directory(target) as staging:
        (staging / "a").write_text("first")
    with atomic_directory(target) as staging:  # finished meanwhile by another: ours is dropped
        (staging / "a").write_text("second")
    assert (target / "a").read_text() == "first"
    with atomic_directory(target, replace=True) as staging:
        (staging / "a").write_text("third")
    assert (target / "a").read_text() == "third"
    assert [p.name for p in tmp_path.iterdir()] == ["entry"]


def hold_lock(path, started, seconds):
    with file_lock(path):
        started.set()
        time.sleep(seconds)


def test_the_lock_excludes_another_process(tmp_path):
    started = multiprocessing.get_context("spawn").Event()
    holder = multiprocessing.get_context("spawn").Process(
        target=hold_lock, args=(tmp_path / "entry", started, 2.0)
    )
    holder.start()
    assert started.wait(60)
    waited = time.monotonic()
    with file_lock(tmp_path / "entry"):
        waited = time.monotonic() - waited
    holder.join()
    assert waited > 0.5
