"""A biLM as one folder or zip (`ner.bilm.folder`, `ner.bilm.source`): its format detected or
named, one digest over its model files, and a zip fetched over http once, its digest recorded on
the first download and checked after (docs/bilm.md, "A biLM folder in training and in model
folders")."""

import hashlib
import shutil
from pathlib import Path

import pytest
import torch

from ner.bilm.efml_bilm import EfmlBiLM
from ner.bilm.folder import (
    BiLMFormatError,
    detect_format,
    folder_digest,
    local_folder,
    model_files,
)
from ner.bilm.load import load_bilm
from ner.bilm.source import BiLMFiles, BiLMFolder, configured_bilm
from ner.common.archives import ArchiveError
from ner.common.downloads import DownloadError
from tests.fixture_files import EFML as FIXTURES
from tests.fixture_files import FIXTURE, zip_of

EFML = FIXTURES / "word_char"
SENTENCES = [["Hola", "mundo", "."], ["Peter", "vive", "en", "Madrid"]]


def layers(bilm: torch.nn.Module) -> list[torch.Tensor]:
    return bilm.embed_sentences(SENTENCES)


@pytest.fixture
def allennlp_folder(tmp_path) -> Path:
    folder = tmp_path / "allennlp"
    folder.mkdir()
    shutil.copy(FIXTURE / "options.json", folder)
    shutil.copy(FIXTURE / "lm_weights.hdf5", folder)
    return folder


def test_formats_are_detected_and_a_named_format_is_checked(allennlp_folder):
    assert detect_format(EFML) == "efml" and detect_format(allennlp_folder) == "allennlp"
    assert detect_format(EFML, "efml") == "efml"
    with pytest.raises(BiLMFormatError, match="format allennlp was named, but the folder is efml"):
        load_bilm(EFML, format="allennlp")
    with pytest.raises(BiLMFormatError, match="unknown biLM format 'bilm-tf'"):
        detect_format(EFML, "bilm-tf")
    from_folder = load_bilm(allennlp_folder, state="stateless", format="allennlp")
    from_files = BiLMFiles(str(FIXTURE / "options.json"), str(FIXTURE / "lm_weights.hdf5"))
    pair = BiLMFiles(from_files.options, from_files.weights, "stateless").load()
    for ours, theirs in zip(layers(from_folder), layers(pair), strict=True):
        assert torch.equal(ours, theirs)


def test_the_digest_covers_the_model_files_only_and_follows_them(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(EFML, copy)
    (copy / "README.txt").write_text("not read by the loader")
    names = {path.name for path in model_files(copy, "efml")}
    assert names == {
        "config.json",
        "tiny.json",
        "char.dic",
        "word.dic",
        "token_embedder.pkl",
        "encoder.pkl",
    }
    assert folder_digest(copy, "efml") == folder_digest(EFML, "efml")
    with (copy / "word.dic").open("a", encoding="utf-8") as handle:
        handle.write("otra\t999\n")
    assert folder_digest(copy, "efml") != folder_digest(EFML, "efml")


def test_the_config_group_names_a_folder_or_a_pair():
    folder = configured_bilm({"path": str(EFML), "format": "efml", "state": "stateless"})
    assert folder == BiLMFolder(str(EFML), "efml", "stateless")
    pair = configured_bilm({"options_file": "o.json", "weight_file": "w.hdf5", "path": None})
    assert pair == BiLMFiles("o.json", "w.hdf5", "warm")
    assert folder.architecture().output_dim == folder.load().output_dim == 16
    assert folder.identity() == (folder_digest(EFML, "efml"), {"format": "efml"})


@pytest.mark.parametrize("inner", ["", "es.model"])
def test_a_local_zip_is_unpacked_once_into_the_data_folder(tmp_path, isolated_data_dir, inner):
    archive = zip_of(EFML, tmp_path / "145.zip", inner)
    folder = local_folder(archive)
    assert folder.is_relative_to(isolated_data_dir / "extracted")
    assert folder_digest(folder, "efml") == folder_digest(EFML, "efml")
    assert local_folder(archive) == folder
    bilm = BiLMFolder(str(archive), state="stateless").load()
    assert isinstance(bilm, EfmlBiLM)
    expected = layers(EfmlBiLM.from_folder(EFML, state="stateless"))
    for ours, theirs in zip(layers(bilm), expected, strict=True):
        assert torch.equal(ours, theirs)


def test_a_zip_url_downloads_once_records_its_digest_and_checks_it_after(
    isolated_data_dir, http_server
):
    """The presets' path: no pinned digest, so the first download's is recorded beside it and a
    kept copy changed since is downloaded again."""
    root = http_server.root
    zip_of(EFML, root / "145.zip")
    url = http_server.url("145.zip")
    bilm = configured_bilm({"path": url, "format": "efml", "state": "stateless"})
    assert isinstance(bilm.load(), EfmlBiLM)
    (kept,) = (isolated_data_dir / "downloads").glob("*-145.zip")
    record = kept.with_name(kept.name + ".sha256")
    assert record.read_text().strip() == hashlib.sha256(kept.read_bytes()).hexdigest()
    assert http_server.hits == ["/145.zip"]
    (root / "145.zip").unlink()  # served no more: the kept copy is used
    assert folder_digest(bilm.folder(), "efml") == folder_digest(EFML, "efml")
    kept.write_bytes(b"damaged")
    with pytest.raises(DownloadError, match="HTTP 404"):
        bilm.folder()


def test_offline_the_download_fails_in_one_line_naming_the_url_and_the_way_out(
    isolated_data_dir,
):
    url = "http://127.0.0.1:9/repository/11/145.zip"  # the discard port: nothing listens
    with pytest.raises(DownloadError) as raised:
        BiLMFolder(url, "efml").load()
    message = str(raised.value)
    assert "\n" not in message and url in message and "elmo.path=ZIP_OR_FOLDER" in message


def test_a_folder_by_url_must_be_a_zip_and_a_zip_must_be_one(tmp_path, isolated_data_dir):
    with pytest.raises(BiLMFormatError, match=r"must be a \.zip of it"):
        local_folder("http://example.org/models/es")
    (tmp_path / "145.zip").write_text("an error page, saved under the zip's name")
    with pytest.raises(ArchiveError, match=r"145\.zip: not a zip file"):
        local_folder(tmp_path / "145.zip")
