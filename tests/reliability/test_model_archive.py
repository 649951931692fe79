"""archive.json is covered by its own checksum and checked field by field: an edited, damaged or
crafted manifest gives an ArchiveError that names the field, never a silently wrong model; a file
of the folder that cannot be read is named in one line."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from tiny_tagger import saved_model

from ner.model.archive import ArchiveError, load_archive, manifest_digest
from ner.model.tagger import Tagger


def copy_model(tmp_path: Path) -> Path:
    return Path(shutil.copytree(saved_model(), tmp_path / "model"))


def rewrite(directory: Path, change, sign: bool) -> None:
    """Apply `change` to the manifest; with `sign`, recompute its digest (a crafted file)."""
    path = directory / "archive.json"
    manifest = json.loads(path.read_text())
    change(manifest)
    if sign:
        manifest["manifest_sha256"] = manifest_digest(manifest)
    path.write_text(json.dumps(manifest))


def test_a_reversed_tag_list_is_refused_not_loaded(tmp_path):
    directory = copy_model(tmp_path)
    rewrite(directory, lambda m: m["model_config"]["tags"].reverse(), sign=False)
    with pytest.raises(ArchiveError, match=r"archive\.json was changed after it was written"):
        Tagger.load(directory)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda m: m.pop("model_config"), "model_config"),
        (lambda m: m["model_config"].update(tags="B-PER"), "model_config.tags"),
        (lambda m: m["model_config"].update(tags=["O", "O"]), "model_config.tags"),
        (lambda m: m.update(vocabularies=["../../etc/passwd"]), "vocabularies"),
        (lambda m: m.update(metadata=None), "metadata"),
        (lambda m: m["metadata"].update(corpus_scheme="bogus"), "metadata.corpus_scheme"),
        (lambda m: m["sha256"].update({"/etc/passwd": "0" * 64}), "sha256"),
        (lambda m: m["sha256"].update({"weights.safetensors": "abc"}), "sha256"),
        (lambda m: m["bilm"].update(state="sideways"), "bilm.state"),
        (lambda m: m["bilm"].pop("weights"), "bilm.weights"),
        (lambda m: m["bilm"]["options"].update(sha256=7), "bilm.options.sha256"),
        (lambda m: m["bilm"]["weights"].update(file="../../outside.hdf5"), "bilm.weights.file"),
        (lambda m: m["bilm"]["weights"].pop("file"), "bilm.weights"),
        (lambda m: m["bilm"]["weights"].update(source="/w.hdf5"), "bilm.weights"),
        (lambda m: m["bilm"]["weights"].update(file=None), "bilm.weights.file"),
        (lambda m: m["model_config"].update(tags=["O", True]), "model_config.tags"),
        (lambda m: m.update(weights_dtype=["float16"]), "weights_dtype"),
        (lambda m: m.update(rebuilt={"bogus": {}}), "rebuilt"),
        (lambda m: m.update(rebuilt={"pretrained_words": None}), "rebuilt.pretrained_words"),
        (lambda m: m["bilm"]["weights"].update(size=1e9), "bilm.weights.size"),
    ],
)
def test_bogus_or_missing_fields_are_named(tmp_path, change, field):
    directory = copy_model(tmp_path)
    rewrite(directory, change, sign=True)
    with pytest.raises(ArchiveError, match=rf"archive\.json: field '{field}' must be"):
        load_archive(directory)


def test_a_vocabulary_that_is_not_json_is_an_archive_error(tmp_path):
    directory = copy_model(tmp_path)
    vocabulary = directory / "vocabularies" / "tagger.json"
    vocabulary.write_text("{not json")
    rewrite(
        directory,
        lambda m: m["sha256"].update(
            {"vocabularies/tagger.json": hashlib.sha256(b"{not json").hexdigest()}
        ),
        sign=True,
    )
    with pytest.raises(ArchiveError, match=r"tagger\.json is not valid JSON"):
        load_archive(directory)


UNREADABLE = Path("/proc/self/mem")  # a regular file whose first bytes give an I/O error


@pytest.mark.skipif(not UNREADABLE.exists(), reason="Linux only")
def test_a_model_file_that_cannot_be_read_is_named(tmp_path):
    """Before: an OSError traceback (a PermissionError for a file the user may not read). Root
    may read any file, so an I/O error stands in for the missing permission."""
    directory = copy_model(tmp_path)
    (directory / "weights.safetensors").unlink()
    (directory / "weights.safetensors").symlink_to(UNREADABLE)
    with pytest.raises(ArchiveError) as refused:
        load_archive(directory)
    weights = directory / "weights.safetensors"
    assert str(refused.value) == f"{weights} cannot be read: Input/output error"
