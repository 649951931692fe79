"""A tagger on an ELMoForManyLangs biLM, end to end on the tiny fixture: ``elmo=folder
elmo.path=DIR`` trains a few steps, the model folder copies the biLM's files and pins their
digest, and `Tagger.load` and ``ner-predict`` read it back with the same layers as the loader."""

import json
import os
import shutil
import subprocess
import sys

import pytest
import torch
from fixture_files import FIXTURE, zip_of
from tiny_tagger import SENTENCES, one_thread

from ner.bilm.efml_bilm import EfmlBiLM
from ner.bilm.folder import folder_digest
from ner.bilm.source import BiLMFolder
from ner.common.archives import ArchiveError
from ner.common.verified import sha256_file
from ner.model.archive import MANIFEST, manifest_digest
from ner.model.tagger import Tagger
from ner.serving.app import bilm_name
from ner.training.api import train

EFML = FIXTURE.parent / "efml" / "word_char"
TINY = [
    "embeddings=words",
    "embeddings.glove.dim=8",
    "model.hidden_size=8",
    "model.num_layers=1",
    "trainer.max_epochs=2",
    "trainer.num_threads=1",
    "logger=none",
    "progress=false",
]


def write_corpus(path):
    """A one-file corpus of the tiny tagger's sentences, three times over."""
    blocks = []
    for tokens, tags in SENTENCES * 3:
        rows = zip(tokens.split(), tags.split(), strict=True)
        blocks.append("".join(f"{token}\t{tag}\n" for token, tag in rows))
    path.write_text("\n".join(blocks), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("efml-run")
    os.environ["NER_DATA_DIR"] = str(root / "data")
    biLM = root / "es.model"
    shutil.copytree(EFML, biLM)
    overrides = [
        f"data.name={write_corpus(root / 'es.tsv')}",
        "data.options.holdout=0.25",
        "elmo=folder",
        f"elmo.path={biLM}",
        "elmo.format=efml",
        "elmo.state=stateless",
        *TINY,
    ]
    try:
        with one_thread():
            run = train(overrides=overrides, run_dir=root / "run")
    finally:
        del os.environ["NER_DATA_DIR"]
    return run, biLM


def test_the_model_folder_copies_the_biLM_and_pins_its_digest(trained):
    run, _ = trained
    model = run.run_dir / "model"
    entry = json.loads((model / MANIFEST).read_text())["bilm"]
    assert entry["format"] == "efml" and entry["state"] == "stateless"
    assert entry["folder"]["file"] == "bilm"
    assert entry["folder"]["sha256"] == folder_digest(EFML, "efml")
    assert folder_digest(model / "bilm", "efml") == entry["folder"]["sha256"]
    saved_config = json.loads((model / "config.json").read_text())
    assert saved_config["elmo"]["path"] is None  # the machine's path is not kept


def test_the_loaded_tagger_reads_the_same_layers_as_the_loader(trained):
    run, biLM = trained
    shutil.rmtree(biLM)  # the model folder holds its own copy
    tagger = Tagger.load(run.run_dir / "model")
    assert isinstance(tagger.bilm, EfmlBiLM) and tagger.bilm.state == "stateless"
    sentences = [["Anna", "visited", "Rome", "."], ["Bob", "left", "Oslo"]]
    reference = EfmlBiLM.from_folder(EFML, state="stateless")
    with torch.inference_mode():
        ours, _ = tagger.bilm.embed_batch(sentences, {})
        theirs, _ = reference.embed_batch(sentences, {})
    assert torch.equal(ours, theirs)
    (result,) = tagger.predict_tokens([sentences[0]])
    assert len(result.tags) == 4


def test_a_changed_biLM_copy_or_a_malformed_entry_is_refused(trained, tmp_path):
    run, _ = trained
    copy = tmp_path / "model"
    shutil.copytree(run.run_dir / "model", copy)
    with (copy / "bilm" / "word.dic").open("a", encoding="utf-8") as handle:
        handle.write("otra\t999\n")
    with pytest.raises(ArchiveError, match="corrupt or was changed: its files' digest differs"):
        Tagger.load(copy)
    manifest = json.loads((copy / MANIFEST).read_text())
    manifest["bilm"]["folder"]["sha256"] = "not hex"
    manifest["manifest_sha256"] = manifest_digest(manifest)
    (copy / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ArchiveError, match=r"field 'bilm\.folder\.sha256' must be a 64-digit"):
        Tagger.load(copy)


def test_the_server_names_the_biLM_by_its_folder(trained):
    run, biLM = trained
    model = run.run_dir / "model"
    assert bilm_name(model, str(model / "bilm")) == biLM.name == "es.model"


def test_ner_predict_tags_with_it_from_another_folder(trained, tmp_path):
    run, _ = trained
    (tmp_path / "in.txt").write_text("Anna visited Rome .\n", encoding="utf-8")
    done = subprocess.run(
        [
            os.path.join(os.path.dirname(sys.executable), "ner-predict"),
            str(run.run_dir / "model"),
            "in.txt",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Anna" in done.stdout


def test_a_large_biLM_zip_is_referred_to_by_its_url_and_its_download_pinned(
    trained, tmp_path, isolated_data_dir, http_server
):
    """Above the copy limit, the folder names the zip's URL with its sha256 and size and the
    unpacked folder's digest; loading downloads only when allowed, refuses another zip, and a
    tagger saved again keeps the URL."""
    run, _ = trained
    archive = zip_of(EFML, http_server.root / "145.zip")
    url = http_server.url("145.zip")
    trained_tagger = Tagger.load(run.run_dir / "model")
    tagger = Tagger(
        trained_tagger.model,
        trained_tagger.vocabularies,
        BiLMFolder(url, "efml", "stateless"),
        corpus_scheme=trained_tagger.corpus_scheme,
    )
    tagger.save(tmp_path / "model", embed_bilm_max_bytes=0)
    entry = json.loads((tmp_path / "model" / MANIFEST).read_text())["bilm"]["folder"]
    assert entry["source"] == url and entry["size"] == archive.stat().st_size
    assert entry["archive_sha256"] == sha256_file(archive)
    assert entry["sha256"] == folder_digest(EFML, "efml")
    assert not (tmp_path / "model" / "bilm").exists()
    shutil.rmtree(isolated_data_dir)
    with pytest.raises(ArchiveError, match="is to be downloaded from http"):
        Tagger.load(tmp_path / "model")
    loaded = Tagger.load(tmp_path / "model", allow_download=True)
    assert loaded.bilm_files.location == url and http_server.hits == ["/145.zip"] * 2
    loaded.save(tmp_path / "again", embed_bilm_max_bytes=0)
    again = json.loads((tmp_path / "again" / MANIFEST).read_text())["bilm"]["folder"]
    assert again == entry
    shutil.rmtree(isolated_data_dir)
    zip_of(FIXTURE.parent / "efml" / "char_only", archive)  # the URL now serves another model
    with pytest.raises(ArchiveError, match="checksum mismatch"):
        Tagger.load(tmp_path / "model", allow_download=True)
