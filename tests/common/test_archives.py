import io
import tarfile
import zipfile

import pytest

from ner.common.archives import ArchiveError, extract


def make_zip(path, entries: dict[str, bytes]):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def make_tar(path, entries: dict[str, bytes], links: dict[str, str] | None = None):
    with tarfile.open(path, "w:gz") as archive:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            archive.addfile(info)
    return path


@pytest.mark.parametrize("maker", [make_zip, make_tar])
def test_extracts_members_once(tmp_path, maker):
    archive = maker(tmp_path / "a.archive", {"d/one.txt": b"1", "d/two.txt": b"2"})
    target = extract(archive, tmp_path / "out", members=["d/two.txt"])
    assert [p.name for p in target.rglob("[!.]*") if p.is_file()] == ["two.txt"]
    assert (target / "d" / "two.txt").read_bytes() == b"2"
    assert extract(archive, target) == target  # already there: left as is
    assert not (target / "d" / "one.txt").exists()
    assert extract(archive, tmp_path / "all").joinpath("d/one.txt").read_bytes() == b"1"
    with pytest.raises(ArchiveError, match=r"a\.archive: no entry 'd/three.txt'"):
        extract(archive, tmp_path / "x", members=["d/three.txt"])


@pytest.mark.parametrize("name", ["../evil.txt", "d/../../evil.txt", "/tmp/evil.txt"])
@pytest.mark.parametrize("maker", [make_zip, make_tar])
def test_escaping_entries_are_refused(tmp_path, maker, name):
    archive = maker(tmp_path / "bad.archive", {"ok.txt": b"ok", name: b"evil"})
    target = tmp_path / "sub" / "out"
    with pytest.raises(ArchiveError, match=rf"bad\.archive: entry '{name}' escapes the target"):
        extract(archive, target)
    assert not (tmp_path / "sub").exists()  # refused before anything was written
    assert not (tmp_path / "evil.txt").exists()


def test_tar_links_are_refused(tmp_path):
    archive = make_tar(tmp_path / "links.tgz", {"ok.txt": b"ok"}, links={"passwd": "/etc/passwd"})
    with pytest.raises(ArchiveError, match="entry 'passwd' is a link"):
        extract(archive, tmp_path / "out")


def test_not_an_archive(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_text("hello")
    with pytest.raises(ArchiveError, match=r"plain\.txt: not a zip or tar archive"):
        extract(path, tmp_path / "out")


@pytest.mark.parametrize("maker", [make_zip, make_tar])
def test_an_extracted_file_changed_or_damaged_is_extracted_again(tmp_path, maker):
    archive = maker(tmp_path / "a.archive", {"d/one.txt": b"one", "d/two.txt": b"two"})
    target = extract(archive, tmp_path / "out")
    one, two = target / "d" / "one.txt", target / "d" / "two.txt"
    one.write_bytes(b"ONE")  # edited, same size
    assert extract(archive, target) == target and one.read_bytes() == b"one"
    two.unlink()
    assert extract(archive, target) == target and two.read_bytes() == b"two"
    one.write_bytes(b"o")  # cut short
    assert extract(archive, target) == target and one.read_bytes() == b"one"
