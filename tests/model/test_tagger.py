"""The `Tagger` API and the model directory (ner/model/tagger.py, archive.py) on a tiny real
model trained on the fixture biLM (tests/tiny_tagger.py)."""

import dataclasses
import gc
import hashlib
import itertools
import json
import shutil
import subprocess
import sys
import time
import weakref
from pathlib import Path

import pytest
import torch
from tiny_tagger import FIXTURE, corpus, one_thread, saved_model, train_tagger

import ner.model.tagger as tagger_module
from ner.bilm.bilm import BiLM
from ner.bilm.char_ids import batch_to_ids
from ner.bilm.options import BiLMOptions
from ner.common.errors import InputError
from ner.data.tag_schemes import tags_to_spans
from ner.model.archive import (
    FORMAT_VERSION,
    ArchiveError,
    BiLMFiles,
    load_archive,
    manifest_digest,
)
from ner.model.tagger import Tagger
from ner.tagger.dataset import collate
from ner.tagger.model import TaggerModel
from ner.training.config import ElmoConfig

TEXTS = [
    "Peter Smith lives in Rome. Anna went to London!",
    "“Mary” flew from Berlin to Paris on Monday, didn't she?",
    "",
    "   ",
    "no entities here",
]


@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread():
        yield


@pytest.fixture(scope="module")
def tagger() -> Tagger:
    return Tagger.load(saved_model())


def edit_manifest(directory: Path, **model_config) -> None:
    """Change the model config and re-sign the manifest (as another version would write it)."""
    manifest = json.loads((directory / "archive.json").read_text())
    manifest["model_config"].update(model_config)
    manifest["manifest_sha256"] = manifest_digest(manifest)
    (directory / "archive.json").write_text(json.dumps(manifest))


def copy_model(tmp_path: Path) -> Path:
    return Path(shutil.copytree(saved_model(), tmp_path / "model"))


def test_offsets_index_the_input(tagger: Tagger) -> None:
    for text, result in zip(TEXTS, tagger.predict(TEXTS), strict=True):
        assert result.text == text
        assert len(result.tags) == len(result.tokens)
        assert all(text[t.start : t.end] == t.text for t in result.tokens)
        for entity in result.entities:
            assert text[entity.start : entity.end] == entity.text
            first, last = result.tokens[entity.token_start], result.tokens[entity.token_end - 1]
            assert (first.start, last.end) == (entity.start, entity.end)
            assert 0.0 < entity.confidence <= 1.0
        # entities are exactly the chunks of the tags
        spans = tags_to_spans(result.tags, "iob2")  # the corpus's scheme, by default
        assert [(e.type, e.token_start, e.token_end) for e in result.entities] == [
            tuple(s) for s in spans
        ]
        for start, end in result.sentences:
            assert 0 <= start < end <= len(result.tokens)


def test_trained_model_tags_raw_text(tagger: Tagger) -> None:
    (result,) = tagger.predict("Peter Smith lives in Rome. Anna went to Berlin!")
    found = [(e.text, e.type, e.start, e.end) for e in result.entities]
    assert found == [
        ("Peter Smith", "PER", 0, 11),
        ("Rome", "LOC", 21, 25),
        ("Anna", "PER", 27, 31),
        ("Berlin", "LOC", 40, 46),
    ]
    assert all(e.confidence > 0.5 for e in result.entities)
    assert [(a, b) for a, b in result.sentences] == [(0, 6), (6, 11)]
    record = result.to_json()
    assert record["entities"][0] == {
        "text": "Peter Smith",
        "type": "PER",
        "start": 0,
        "end": 11,
        "token_start": 0,
        "token_end": 2,
        "confidence": round(result.entities[0].confidence, 6),
    }
    assert record["sentences"] == [{"start": 0, "end": 26}, {"start": 27, "end": 47}]


def test_a_loaded_model_builds_what_the_weights_do_not_hold(tagger: Tagger) -> None:
    """Loading builds the model without its parameter fills (the weights replace them), so
    every tensor the weights do not hold (the CRF's transition masks) must come out as in a
    model built the usual way."""
    built = TaggerModel(**tagger.model.config)
    saved = set(tagger.model.state_dict())
    others = {name: b for name, b in built.named_buffers() if name not in saved and b is not None}
    assert others  # the CRF's masks at least
    loaded = dict(tagger.model.named_buffers())
    for name, expected in others.items():
        assert torch.equal(loaded[name], expected), name


def test_tagging_runs_without_cyclic_collections(tagger: Tagger, monkeypatch) -> None:
    """The collector is off while a batch is tagged (its walks over torch's objects cost a
    tenth of a GloVe tagger's time) and on again after, whichever way the text comes."""
    seen = []
    emissions = tagger.model.emissions
    monkeypatch.setattr(
        tagger.model, "emissions", lambda batch: seen.append(gc.isenabled()) or emissions(batch)
    )
    tagger.predict("Anna likes Rome.")
    tagger.predict_tokens([["Anna", "likes", "Rome"]])
    tagger.predict_tokens([["Anna"]], tag_scheme="iob2")
    assert seen == [False, False, False] and gc.isenabled()


def test_empty_and_whitespace_texts(tagger: Tagger) -> None:
    for result in tagger.predict(["", " \n\t "]):
        assert (result.tokens, result.tags, result.entities, result.sentences) == ([], [], [], [])
    assert tagger.predict([]) == []


def test_pretokenized_sentences(tagger: Tagger) -> None:
    tokens = ["John", "Smith", "went", "to", "Paris", "."]
    (result,) = tagger.predict_tokens([tokens])
    assert result.text == "John Smith went to Paris ."
    assert [t.text for t in result.tokens] == tokens
    assert [(e.text, e.type) for e in result.entities] == [("John Smith", "PER"), ("Paris", "LOC")]


def test_output_tag_scheme(tmp_path: Path) -> None:
    iob2 = Tagger.load(saved_model())  # the training corpus's scheme
    bioes = Tagger.load(saved_model(), tag_scheme="bioes")
    text = [" ".join(tokens) for tokens, _ in corpus()]
    for a, b in zip(bioes.predict(text), iob2.predict(text), strict=True):
        assert not any(tag[0] in "ES" for tag in b.tags)
        assert tags_to_spans(b.tags, "iob2") == tags_to_spans(a.tags, "bioes")
        assert a.entities == b.entities


def test_long_line_is_tagged_in_pieces(tagger: Tagger) -> None:
    text = " ".join(["Rome"] * 2500 + ["and", "Anna"] * 1249 + ["Anna", "."])
    (result,) = Tagger.load(saved_model(), max_length=300).predict(text)
    assert len(result.tokens) == len(result.tags) == 5000
    assert all(text[t.start : t.end] == t.text for t in result.tokens)
    assert result.entities and all(text[e.start : e.end] == e.text for e in result.entities)
    # the pieces are the sentence cut every 300 tokens: the first piece is tagged on its own
    (first,) = tagger.predict(" ".join(["Rome"] * 300))
    assert result.tags[:300] == first.tags


def test_round_trip_gives_identical_predictions(tmp_path: Path) -> None:
    original = train_tagger()
    before = [r.to_json() for r in original.predict(TEXTS)]
    original.save(tmp_path / "model")
    loaded = Tagger.load(tmp_path / "model")
    assert [r.to_json() for r in loaded.predict(TEXTS)] == before
    saved = original.model.state_dict()
    for name, tensor in loaded.model.state_dict().items():
        assert torch.equal(tensor, saved[name]), name
    assert loaded.vocabularies.to_json() == original.vocabularies.to_json()


def test_a_folder_of_format_version_3_loads(tagger: Tagger, tmp_path: Path) -> None:
    """Folders written before format version 4 call the vocabularies ``encoder``: they load and
    tag as before."""
    directory = copy_model(tmp_path)
    (directory / "vocabularies" / "tagger.json").rename(directory / "vocabularies" / "encoder.json")
    manifest = json.loads((directory / "archive.json").read_text())
    manifest["format_version"], manifest["vocabularies"] = 3, ["encoder"]
    manifest["metadata"]["encoder"] = "ner.tagger.dataset.Encoder"
    manifest["sha256"]["vocabularies/encoder.json"] = manifest["sha256"].pop(
        "vocabularies/tagger.json"
    )
    manifest["manifest_sha256"] = manifest_digest(manifest)
    (directory / "archive.json").write_text(json.dumps(manifest))
    loaded = Tagger.load(directory)
    assert loaded.vocabularies.to_json() == tagger.vocabularies.to_json()
    assert [r.to_json() for r in loaded.predict(TEXTS)] == [
        r.to_json() for r in tagger.predict(TEXTS)
    ]


def test_model_directory_contents() -> None:
    directory = saved_model()
    manifest = json.loads((directory / "archive.json").read_text())
    assert manifest["format_version"] == FORMAT_VERSION
    assert manifest["model_config"]["tag_scheme"] == "bioes"
    assert manifest["bilm"]["weights"]["file"] == "bilm/weights.hdf5"  # small: embedded
    assert (directory / "bilm" / "weights.hdf5").read_bytes() == (
        FIXTURE / "lm_weights.hdf5"
    ).read_bytes()
    vocabularies = json.loads((directory / "vocabularies" / "tagger.json").read_text())
    assert vocabularies["tags"][0] == "O" and "paris" in vocabularies["words"]["items"]
    assert manifest["metadata"]["corpus_scheme"] == "iob2"
    archive = load_archive(directory)
    assert archive.config == {"note": "tests/tiny_tagger.py"}
    assert archive.bilm is not None and archive.bilm.state == "warm"


@pytest.mark.slow
def test_loading_needs_neither_hydra_nor_training_data() -> None:
    code = (
        "import sys; import ner; assert 'torch' not in sys.modules; "
        "from ner import Tagger; "
        f"t = Tagger.load({str(saved_model())!r}); "
        "print(len(t.predict(['Anna likes Rome.'])[0].entities)); "
        "assert not any(m.split('.')[0] in ('hydra', 'omegaconf', 'datasets') for m in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"


def test_large_bilm_is_referenced_not_copied(tmp_path: Path) -> None:
    bilm_dir = tmp_path / "bilm"
    shutil.copytree(FIXTURE, bilm_dir)
    tagger = train_tagger(steps=1)
    tagger.bilm_files = type(tagger.bilm_files)(
        str(bilm_dir / "options.json"), str(bilm_dir / "lm_weights.hdf5"), state="warm"
    )
    tagger.save(tmp_path / "model", embed_bilm_max_bytes=1000)
    manifest = json.loads((tmp_path / "model" / "archive.json").read_text())
    assert manifest["bilm"]["weights"]["source"] == str(bilm_dir / "lm_weights.hdf5")
    assert not (tmp_path / "model" / "bilm").exists()
    Tagger.load(tmp_path / "model")
    (bilm_dir / "lm_weights.hdf5").write_bytes(b"not the weights")
    with pytest.raises(ArchiveError, match=r"biLM weights file .*checksum mismatch"):
        Tagger.load(tmp_path / "model")
    (bilm_dir / "lm_weights.hdf5").unlink()
    with pytest.raises(ArchiveError, match=r"biLM weights file .*no such file"):
        Tagger.load(tmp_path / "model")


def test_a_bilm_url_is_downloaded_only_when_allowed(
    tmp_path: Path, http_server, isolated_data_dir: Path
) -> None:
    """A model folder may name any URL for its biLM: loading fetches it only when the caller
    allows downloads, and never more bytes than the manifest recorded."""
    for name in ("options.json", "lm_weights.hdf5"):
        shutil.copy(FIXTURE / name, http_server.root / name)
    tagger = train_tagger(steps=1)
    tagger.bilm_files = type(tagger.bilm_files)(
        http_server.url("options.json"), http_server.url("lm_weights.hdf5"), state="warm"
    )
    directory = tagger.save(tmp_path / "model", embed_bilm_max_bytes=1000)
    manifest = json.loads((directory / "archive.json").read_text())
    assert manifest["bilm"]["weights"]["source"] == http_server.url("lm_weights.hdf5")
    assert manifest["bilm"]["weights"]["size"] == (FIXTURE / "lm_weights.hdf5").stat().st_size
    shutil.rmtree(isolated_data_dir / "downloads")  # as on a machine that never fetched it
    http_server.hits.clear()

    with pytest.raises(ArchiveError, match=r"is to be downloaded from http.*allow_download=True"):
        Tagger.load(directory)
    assert http_server.hits == []  # nothing was fetched

    weights = http_server.root / "lm_weights.hdf5"
    weights.write_bytes(weights.read_bytes() + bytes(2**20))  # the server now sends 1 MiB more
    with pytest.raises(ArchiveError, match=r"biLM weights file .*more than the \d+ expected"):
        Tagger.load(directory, allow_download=True)
    assert not any((isolated_data_dir / "downloads").glob("*lm_weights*"))

    shutil.copy(FIXTURE / "lm_weights.hdf5", weights)
    loaded = Tagger.load(directory, allow_download=True)
    assert len(loaded.predict("Anna likes Rome.")[0].tags) == 4
    Tagger.load(directory)  # in the download cache now: no download needed


def test_bilm_files_default_to_the_state_mode_training_uses() -> None:
    """A model's biLM must run as in training; a default of "stateless" gave other layers."""
    training = {field.name: field.default for field in dataclasses.fields(ElmoConfig)}["state"]
    assert BiLMFiles("options.json", "weights.hdf5").state == training == "warm"


def test_model_of_another_format_version_is_refused(tmp_path: Path) -> None:
    directory = copy_model(tmp_path)
    manifest = json.loads((directory / "archive.json").read_text())
    manifest["format_version"] = FORMAT_VERSION + 1
    manifest["package_version"] = "9.9.9"
    (directory / "archive.json").write_text(json.dumps(manifest))
    with pytest.raises(ArchiveError, match=rf"format version {FORMAT_VERSION + 1} .*9\.9\.9"):
        Tagger.load(directory)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: shutil.rmtree(d), "does not exist"),
        (lambda d: (d / "archive.json").unlink(), "has no archive.json"),
        (lambda d: (d / "archive.json").write_text("{not json"), "not valid JSON"),
        (lambda d: (d / "archive.json").write_text('{"format": "other"}'), "does not describe"),
        (lambda d: (d / "vocabularies" / "tagger.json").unlink(), "tagger.json is missing"),
        (lambda d: (d / "weights.safetensors").write_bytes(b"garbage"), "corrupt or was changed"),
        (lambda d: edit_manifest(d, hidden_size=7), "weights .* do not fit its model config"),
        (lambda d: edit_manifest(d, new_option=1), "does not fit this version"),
    ],
)
def test_damaged_model_directories_get_clear_errors(tmp_path: Path, damage, message) -> None:
    directory = copy_model(tmp_path)
    damage(directory)
    with pytest.raises(ArchiveError, match=message):
        Tagger.load(directory)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"num_layers": 10**6}, r"model_config\.num_layers is 1000000, but the weights hold 1 "),
        ({"elmo_layers": 10**12}, r"model_config\.elmo_layers is 1000000000000, but the weights"),
        (
            {"num_words": 10**7},
            r"word_embedding\.weight has shape \[33, 8\] in weights\.safetensors, shape "
            r"\[10000000, 8\] by the model_config",
        ),
        ({"hidden_size": 10**6}, r"encoder\.bias_hh_l0 has shape \[64\] .*shape \[4000000\]"),
    ],
)
def test_crafted_sizes_are_refused_before_the_model_is_built(
    tmp_path: Path, change: dict, message: str
) -> None:
    """A re-signed archive.json asking for a million layers or ten million words is compared
    with the weights before anything is allocated, and refused at once."""
    directory = copy_model(tmp_path)
    edit_manifest(directory, **change)
    began = time.monotonic()
    with pytest.raises(ArchiveError, match=message):
        Tagger.load(directory)
    assert time.monotonic() - began < 5


def test_a_vocabulary_longer_than_its_embedding_is_refused(tmp_path: Path) -> None:
    """One word past the embedding's rows would fail every sentence that holds it, and every
    request in the same batch: such a folder is refused at load."""
    directory = copy_model(tmp_path)
    path = directory / "vocabularies" / "tagger.json"
    vocabulary = json.loads(path.read_text())
    vocabulary["words"]["items"].append("zanzibar")
    path.write_text(json.dumps(vocabulary))
    manifest = json.loads((directory / "archive.json").read_text())
    manifest["sha256"]["vocabularies/tagger.json"] = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest["manifest_sha256"] = manifest_digest(manifest)
    (directory / "archive.json").write_text(json.dumps(manifest))
    with pytest.raises(
        ArchiveError, match=r"words has 34 entries, but the model's embedding has 33 rows"
    ):
        Tagger.load(directory)


def test_a_bilm_of_another_shape_is_refused(tagger: Tagger, tmp_path: Path) -> None:
    """A model reads a fixed number of biLM layers of a fixed width; another biLM would make
    every request fail."""
    options = json.loads((FIXTURE / "options.json").read_text())
    options["lstm"]["n_layers"] = 1
    other = BiLM(BiLMOptions.from_dict(options))
    other.save(tmp_path / "options.json", tmp_path / "weights.hdf5")
    files = BiLMFiles(str(tmp_path / "options.json"), str(tmp_path / "weights.hdf5"), "warm")
    wrong = Tagger(tagger.model, tagger.vocabularies, files)
    with pytest.raises(ArchiveError, match="gives 2 layers of 32 values, but the model mixes 3"):
        _ = wrong.bilm


def test_bad_arguments(tagger: Tagger) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        tagger.predict("Rome", batch_size=0)
    with pytest.raises(ValueError, match="max_length"):
        Tagger.load(saved_model(), max_length=0)
    with pytest.raises(ValueError, match="tag_scheme must be one of iob1, iob2, bioes"):
        tagger.predict_tokens([["Rome"]], tag_scheme="bilou")
    with pytest.raises(InputError, match="tag_scheme must be one of iob1, iob2, bioes"):
        tagger.predict("Rome", tag_scheme="bilou")
    with pytest.raises(ValueError, match="precision must be one of float32, bfloat16"):
        Tagger.load(saved_model(), precision="float16")
    with pytest.raises(ValueError, match="tag_scheme must be one of iob1, iob2, bioes"):
        Tagger(tagger.model, tagger.vocabularies, tagger.bilm_files, tag_scheme="bilou")


def test_bfloat16_precision_keeps_the_tags(tagger: Tagger) -> None:
    fast = Tagger.load(saved_model(), precision="bfloat16")
    assert fast.precision == "bfloat16" and tagger.precision == "float32"
    moved = 0.0
    for exact, reduced in zip(tagger.predict(TEXTS), fast.predict(TEXTS), strict=True):
        assert reduced.tags == exact.tags
        for a, b in zip(exact.entities, reduced.entities, strict=True):
            assert (a.start, a.end, a.type) == (b.start, b.end, b.type)
            moved = max(moved, abs(a.confidence - b.confidence))
    # The LSTMs ran in bfloat16: confidences moved, by little.
    assert 0 < moved < 0.02


def test_confidence_is_the_crf_probability_of_the_span(tagger: Tagger) -> None:
    """Brute force: sum P(path) over all K**T tag paths whose chunks include the entity."""
    text = "Anna met Peter Smith"
    (result,) = tagger.predict(text)
    assert result.entities
    batch = collate([tagger.vocabularies.encode(0, [t.text for t in result.tokens], None)])
    with torch.no_grad():
        batch.elmo = tagger.bilm(batch_to_ids([[t.text for t in result.tokens]]))[0]
        emissions = tagger.model.emissions(batch)[0].double()  # (T, K)
    start, transitions, end = (s.detach().double() for s in tagger.model.crf.constrained_scores())
    tags = tagger.model.tags
    scores = {}
    for path in itertools.product(range(len(tags)), repeat=len(result.tokens)):
        score = start[path[0]] + end[path[-1]] + emissions[range(len(path)), path].sum()
        score = score + sum(transitions[a, b] for a, b in itertools.pairwise(path))
        if score > float("-inf"):
            scores[path] = score
    log_z = torch.logsumexp(torch.stack(list(scores.values())), 0)
    for entity in result.entities:
        wanted = (entity.type, entity.token_start, entity.token_end)
        expected = sum(
            float((score - log_z).exp())
            for path, score in scores.items()
            if wanted in tags_to_spans([tags[i] for i in path], "bioes")
        )
        assert entity.confidence == pytest.approx(expected, rel=1e-6)


def test_load_hands_back_the_heap_once_the_parsed_folder_is_gone(monkeypatch) -> None:
    """The parsed vocabulary files are freed before the heap is trimmed, so their space goes back
    to the system instead of staying in the process."""
    archives: list[weakref.ref] = []
    alive_at_trim: list[bool] = []
    load_archive = tagger_module.load_archive

    def recorded_load(*args, **kwargs):
        archive = load_archive(*args, **kwargs)
        archives.append(weakref.ref(archive))
        return archive

    monkeypatch.setattr(tagger_module, "load_archive", recorded_load)
    monkeypatch.setattr(
        tagger_module,
        "release_free_memory",
        lambda: alive_at_trim.append(any(ref() is not None for ref in archives)),
    )
    Tagger.load(saved_model())
    assert len(archives) == 1 and alive_at_trim == [False]
