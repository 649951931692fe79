"""Compact model folders (what `ner-models export` writes and the shipped taggers are): float16
weights that tag as the float32 model does, the shipped biLM by reference, the pretrained words
rebuilt from the pinned GloVe download and checked; shipped taggers loadable by name."""

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from tiny_tagger import corpus, one_thread, train_tagger

from ner.common.archives import ArchiveError
from ner.common.downloads import DownloadError
from ner.common.paths import PRETRAINED_DIR
from ner.embeddings.glove import GLOVE_6B_50D, load_glove_table
from ner.embeddings.pretrained import split_table
from ner.model.archive import MANIFEST, BiLMFiles, manifest_digest
from ner.model.shipped import portable_config, resolve_model, shipped_taggers
from ner.model.tagger import Tagger
from ner.pretrain import pretrained_files
from ner.tagger.dataset import Vocabularies, tag_list
from ner.tagger.model import TaggerModel

SENTENCES = [tokens for tokens, _ in corpus()]


def rewrite_manifest(folder: Path, change) -> None:
    """Edit a folder's manifest and re-sign it, as a careless tool would."""
    path = folder / MANIFEST
    manifest = json.loads(path.read_text())
    change(manifest)
    manifest["manifest_sha256"] = manifest_digest(manifest)
    path.write_text(json.dumps(manifest))


def test_float16_weights_tag_as_the_float32_model(tmp_path: Path) -> None:
    with one_thread():
        tagger = train_tagger()
        tagger.save(tmp_path / "full")
        tagger.save(tmp_path / "compact", compact=True)
        full = Tagger.load(tmp_path / "full").predict_tokens(SENTENCES)
        compact = Tagger.load(tmp_path / "compact").predict_tokens(SENTENCES)
    manifest = json.loads((tmp_path / "compact" / MANIFEST).read_text())
    assert manifest["weights_dtype"] == "float16"
    stored = load_file(tmp_path / "compact" / "weights.safetensors")
    assert {t.dtype for t in stored.values() if t.is_floating_point()} == {torch.float16}
    assert [s.tags for s in compact] == [s.tags for s in full]
    for a, b in zip(compact, full, strict=True):
        assert [(e.type, e.start, e.end) for e in a.entities] == [
            (e.type, e.start, e.end) for e in b.entities
        ]
        for x, y in zip(a.entities, b.entities, strict=True):
            assert x.confidence == pytest.approx(y.confidence, abs=0.02)
    size = sum(p.stat().st_size for p in (tmp_path / "compact").rglob("*.safetensors"))
    assert size < 0.6 * (tmp_path / "full" / "weights.safetensors").stat().st_size


def shipped_bilm_tagger() -> Tagger:
    """An untrained tagger over the shipped biLM (its files live in the package)."""
    options, weights = pretrained_files()
    vocabularies = Vocabularies.build(SENTENCES, tag_list({"PER", "LOC"}, "bioes"))
    torch.manual_seed(0)
    model = TaggerModel(
        tags=vocabularies.tags,
        num_words=len(vocabularies.words),
        word_dim=8,
        elmo_dim=256,
        hidden_size=8,
        num_layers=1,
    )
    return Tagger(model, vocabularies, BiLMFiles(str(options), str(weights)), corpus_scheme="iob2")


def test_the_shipped_bilm_is_referenced_not_copied(tmp_path: Path) -> None:
    with one_thread():
        tagger = shipped_bilm_tagger()
        tagger.save(tmp_path / "compact", compact=True)
        loaded = Tagger.load(tmp_path / "compact")
        assert [s.tags for s in loaded.predict_tokens(SENTENCES[:2])] == [
            s.tags for s in tagger.predict_tokens(SENTENCES[:2])
        ]
    manifest = json.loads((tmp_path / "compact" / MANIFEST).read_text())
    assert manifest["bilm"]["weights"]["package"] == "elmo-small-news/weights.hdf5"
    assert not (tmp_path / "compact" / "bilm").exists()
    rewrite_manifest(
        tmp_path / "compact",
        lambda m: m["bilm"]["weights"].update(package="elmo-small-news/../../x.hdf5"),
    )
    with pytest.raises(ArchiveError, match=r"bilm\.weights\.package"):
        Tagger.load(tmp_path / "compact")


@pytest.mark.slow
def test_pretrained_words_are_rebuilt_from_pinned_glove(tmp_path: Path) -> None:
    """Needs GloVe 6B.50d (76 MB, downloaded once into the data folder)."""
    table = load_glove_table(GLOVE_6B_50D)
    vocabularies = Vocabularies.build(SENTENCES, tag_list({"PER", "LOC"}, "bioes"))
    words = split_table(table, vocabularies.words, seed=0)
    vocabularies.pretrained = words.extension
    torch.manual_seed(0)
    model = TaggerModel(
        tags=vocabularies.tags,
        num_words=len(vocabularies.words),
        word_dim=50,
        pretrained_words=len(words.extension),
        hidden_size=8,
        num_layers=1,
    )
    model.pretrained_words.copy_(words.vectors)
    tagger = Tagger(model, vocabularies, corpus_scheme="iob2")
    with one_thread():
        tagger.save(tmp_path / "compact", compact=True, pretrained_source=GLOVE_6B_50D)
        loaded = Tagger.load(tmp_path / "compact")
    assert not (tmp_path / "compact" / "vocabularies" / "pretrained_words.json").exists()
    assert loaded.vocabularies.pretrained.items == words.extension.items
    assert torch.equal(loaded.model.pretrained_words, words.vectors)
    unseen = ["zebra", "quarterback"]  # outside the training words, inside GloVe
    assert [loaded.vocabularies.word_id(w) for w in unseen] == [
        tagger.vocabularies.word_id(w) for w in unseen
    ]
    # Another vocabulary gives other words: the digest no longer matches.
    rewrite_manifest(
        tmp_path / "compact", lambda m: m["rebuilt"]["pretrained_words"].update(count=3)
    )
    with pytest.raises(ArchiveError, match="not the ones it was saved with"):
        Tagger.load(tmp_path / "compact")


def test_offline_glove_error_names_the_url_and_the_variable(
    isolated_data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NER_GLOVE_URL", "http://127.0.0.1:9/kumo.whl")
    with pytest.raises(DownloadError, match=r"http://127\.0\.0\.1:9/kumo\.whl.*NER_GLOVE_URL"):
        load_glove_table(GLOVE_6B_50D)


def test_bare_names_are_shipped_taggers_and_paths_are_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    for name, folder in shipped_taggers().items():
        assert resolve_model(name) == folder and folder.parent == PRETRAINED_DIR
    with pytest.raises(ArchiveError, match="not the name of a shipped tagger"):
        resolve_model("no-such-tagger")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "conll2003").mkdir()
    assert resolve_model("conll2003") == shipped_taggers()["conll2003"]
    assert "not the folder conll2003 here (load that with the path ./conll2003)" in caplog.text
    assert resolve_model("./conll2003") == Path("conll2003")
    assert resolve_model(tmp_path / "conll2003") == tmp_path / "conll2003"


def test_a_shipped_copy_names_no_machine_path() -> None:
    config = {
        "elmo": {"options_file": "/opt/me/ner/pretrained/elmo-small-news/options.json"},
        "files": ["/srv/x/ner/pretrained/elmo-small-news/weights.hdf5", "/data/mine.txt"],
    }
    assert portable_config(config) == {
        "elmo": {"options_file": "${shipped_bilm:elmo-small-news,options}"},
        "files": ["${shipped_bilm:elmo-small-news,weights}", "/data/mine.txt"],
    }
