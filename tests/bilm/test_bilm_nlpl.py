"""bilm-tf files as the NLPL repository and simple_elmo ship them (docs/bilm.md, "NLPL and
simple_elmo models"): a folder with ``options.json``, ``model.hdf5``, a vocabulary or none, and
other files beside them. Each variant either loads and gives the same layers as the AllenNLP pair
it was made from, or is refused in one line naming the file and what is wrong. The variants are
tiny files built here from AllenNLP's test fixture."""

import gzip
import json
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from ner.bilm.bilm import BiLM
from ner.bilm.folder import BiLMFormatError, model_files
from ner.bilm.load import load_bilm
from ner.bilm.options import OptionsError
from ner.bilm.weights import WeightsError
from tests.fixture_files import FIXTURE

SENTENCES = [["Hei", "verden", "!"], ["Oslo", "er", "en", "by", "."]]
# Keys bilm-tf's training writes into options.json (only training reads them).
TRAINING_KEYS = {
    "bidirectional": True,
    "dropout": 0.1,
    "n_tokens_vocab": 5,
    "n_negative_samples_batch": 8192,
    "unroll_steps": 20,
    "batch_size": 128,
    "n_epochs": 3,
    "n_train_tokens": 1000,
    "all_clip_norm_val": 10.0,
}


def reference() -> list[torch.Tensor]:
    pair = BiLM.from_files(FIXTURE / "options.json", FIXTURE / "lm_weights.hdf5", "stateless")
    return pair.embed_sentences(SENTENCES)


def nlpl_folder(root: Path, *, options: dict | None = None, softmax: bool = False) -> Path:
    """A folder as the NLPL repository packs a bilm-tf model: options.json (the training one,
    n_characters 261), model.hdf5, vocab.txt.gz, meta.json and a README."""
    folder = root / "nlpl"
    folder.mkdir()
    content = json.loads((FIXTURE / "options.json").read_text())
    content["char_cnn"]["n_characters"] = 261
    content.update(TRAINING_KEYS)
    (folder / "options.json").write_text(json.dumps(options or content))
    shutil.copy(FIXTURE / "lm_weights.hdf5", folder / "model.hdf5")
    if softmax:  # a checkpoint converted with the softmax kept (bilm-tf's dump leaves it out)
        with h5py.File(folder / "model.hdf5", "a") as handle:
            handle.create_dataset("softmax/W", data=np.ones((5, 16), dtype=np.float32))
            handle.create_dataset("softmax/b", data=np.zeros(5, dtype=np.float32))
    with gzip.open(folder / "vocab.txt.gz", "wt", encoding="utf-8") as vocab:
        vocab.write("<S>\n</S>\n<UNK>\nHei\nverden\n")
    (folder / "meta.json").write_text(json.dumps({"id": 0, "algorithm": {"name": "ELMo"}}))
    (folder / "README").write_text("A model of the NLPL repository (a test stand-in).\n")
    return folder


def assert_same_layers(folder: Path) -> None:
    bilm = load_bilm(folder, state="stateless")
    for ours, theirs in zip(bilm.embed_sentences(SENTENCES), reference(), strict=True):
        assert torch.equal(ours, theirs)


@pytest.mark.parametrize("softmax", [False, True])
def test_an_nlpl_folder_loads_with_or_without_softmax_weights(tmp_path, softmax):
    """n_characters 261 (the training value) reads the same weights as 262; the vocabulary,
    the metadata and softmax weights are not part of the biLM and are not read."""
    folder = nlpl_folder(tmp_path, softmax=softmax)
    assert_same_layers(folder)
    assert [path.name for path in model_files(folder, "allennlp")] == [
        "options.json",
        "model.hdf5",
    ]


def test_without_a_vocabulary_it_loads_the_same(tmp_path):
    folder = nlpl_folder(tmp_path)
    (folder / "vocab.txt.gz").unlink()
    assert_same_layers(folder)


def one_line(error: pytest.ExceptionInfo) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


def test_a_model_with_word_inputs_only_is_refused_in_one_line(tmp_path):
    content = json.loads((FIXTURE / "options.json").read_text())
    del content["char_cnn"]
    content.update(TRAINING_KEYS)
    folder = nlpl_folder(tmp_path, options=content)
    with pytest.raises(OptionsError) as error:
        load_bilm(folder)
    assert "options.json" in one_line(error) and "char_cnn" in one_line(error)


def test_a_forward_only_model_is_refused_in_one_line(tmp_path):
    folder = nlpl_folder(tmp_path)
    with h5py.File(folder / "model.hdf5", "a") as handle:
        del handle["RNN_1"]
    with pytest.raises(WeightsError) as error:
        load_bilm(folder)
    assert "model.hdf5" in one_line(error) and "RNN_1/" in one_line(error)


def test_two_weight_files_are_refused_naming_what_was_found(tmp_path):
    folder = nlpl_folder(tmp_path)
    shutil.copy(folder / "model.hdf5", folder / "model_old.hdf5")
    with pytest.raises(BiLMFormatError) as error:
        load_bilm(folder)
    assert "found 1 .json, 2 .hdf5" in one_line(error)
