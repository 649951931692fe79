"""Keyed on-disk cache entries: stable names, built once, rebuilt when broken, never half-made."""

from pathlib import Path

import pytest

from ner.common.keyed_cache import key_digest, open_or_build
from ner.data.cache import fingerprint


def test_digests_keep_the_names_existing_caches_have():
    """A cache folder renamed by a code change would be built again for nothing."""
    features = {"format": 3, "options": {"lstm": {"dim": 4}}, "state": "warm", "corpus": "Zürich"}
    assert key_digest(features) == "a8d27a7fe79151eb255d320a"
    corpus = {
        "source": "conll2003",
        "files": {"train": "abc"},
        "path": Path("/x/é"),
        "lower": False,
    }
    assert fingerprint(corpus) == "053443085596a2ea"


def test_any_difference_in_the_key_gives_another_name():
    assert key_digest({"a": 1, "b": [1, 2]}) == key_digest({"b": [1, 2], "a": 1})
    assert key_digest({"a": 1}) != key_digest({"a": 2})
    assert len(key_digest({"a": 1}, length=16)) == 16


class Entries:
    """An entry is a folder holding ``value.txt``; counts the builds."""

    def __init__(self) -> None:
        self.builds = 0

    def open(self, directory: Path) -> str | None:
        file = directory / "value.txt"
        return file.read_text() if file.is_file() else None

    def build(self, staging: Path) -> int:
        self.builds += 1
        (staging / "value.txt").write_text(f"built {self.builds}")
        return self.builds

    def open_built(self, directory: Path, number: int) -> str:
        assert (directory / "value.txt").read_text() == f"built {number}"
        return f"fresh {number}"


def test_an_entry_is_built_once_then_read(tmp_path):
    entries = Entries()
    entry = tmp_path / "cache" / key_digest({"a": 1})
    assert open_or_build(entry, entries.open, entries.build, entries.open_built) == "fresh 1"
    assert open_or_build(entry, entries.open, entries.build, entries.open_built) == "built 1"
    assert entries.builds == 1
    assert [p.name for p in entry.parent.iterdir() if not p.name.endswith(".lock")] == [entry.name]


def test_a_broken_entry_is_built_again(tmp_path):
    entries = Entries()
    entry = tmp_path / "entry"
    entry.mkdir()
    (entry / "half-written").write_text("")
    assert open_or_build(entry, entries.open, entries.build, entries.open_built) == "fresh 1"
    assert sorted(p.name for p in entry.iterdir()) == ["value.txt"]


def test_a_failed_build_leaves_the_folder_as_it_was(tmp_path):
    entry = tmp_path / "entry"

    def failing(staging: Path) -> None:
        (staging / "value.txt").write_text("partial")
        raise RuntimeError("the build broke")

    with pytest.raises(RuntimeError, match="the build broke"):
        open_or_build(entry, Entries().open, failing, Entries().open_built)
    assert not entry.exists()
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == []


def test_a_permission_error_while_building_can_be_named(tmp_path):
    def refused(staging: Path) -> None:
        raise PermissionError("read-only")

    def named(error: PermissionError) -> PermissionError:
        return PermissionError(f"the cache is not writable ({error})")

    with pytest.raises(PermissionError, match=r"the cache is not writable \(read-only\)"):
        open_or_build(
            tmp_path / "e", Entries().open, refused, Entries().open_built, unwritable=named
        )
    with pytest.raises(PermissionError, match=r"^read-only$"):
        open_or_build(tmp_path / "e", Entries().open, refused, Entries().open_built)
