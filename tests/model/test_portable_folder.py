"""A model folder names no folder of the machine that trained it: the biLM's ``origin`` in
``archive.json`` and the biLM paths in ``config.json`` are kept only as a public address, a
shipped file, or a path relative to the run; folders written before still load."""

import json
import shutil
from pathlib import Path

from fixture_files import FIXTURE
from test_compact import rewrite_manifest
from tiny_tagger import one_thread, saved_model, train_tagger

from ner.common.paths import PRETRAINED_DIR
from ner.model.tagger import Tagger


def test_a_saved_folder_records_no_absolute_biLM_path(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run / "elmo")  # a biLM inside the run folder
    shipped = PRETRAINED_DIR / "elmo-small-news" / "options.json"
    config = {
        "elmo": {
            "options_file": str(run / "elmo" / "options.json"),
            "weight_file": str(FIXTURE / "lm_weights.hdf5"),
            "expected": {"options_file": str(shipped)},
        },
        "data": {"name": "conll2003"},
    }
    with one_thread():
        train_tagger(steps=1).save(run / "model", config=config)
    for name in ("archive.json", "config.json"):
        text = (run / "model" / name).read_text()
        assert str(tmp_path) not in text and str(FIXTURE) not in text, name
        assert str(PRETRAINED_DIR) not in text, name
    bilm = json.loads((run / "model" / "archive.json").read_text())["bilm"]
    assert (bilm["options"]["origin"], bilm["weights"]["origin"]) == (
        "elmo/options.json",
        "elmo/lm_weights.hdf5",
    )  # the biLM's name, which ner-serve's /info shows
    recorded = json.loads((run / "model" / "config.json").read_text())
    assert recorded["elmo"] == {
        "options_file": "elmo/options.json",
        "weight_file": None,
        "expected": {"options_file": "${shipped_bilm:elmo-small-news,options}"},
    }
    assert Tagger.load(run / "model").config == recorded


def test_a_folder_with_a_recorded_origin_still_loads(tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(saved_model(), old)
    rewrite_manifest(
        old, lambda m: m["bilm"]["weights"].update(origin=str(tmp_path / "elsewhere" / "lm.hdf5"))
    )
    assert Tagger.load(old).predict("Anna likes Rome .")[0].entities
