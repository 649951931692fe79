"""ELMoForManyLangs folders load as a biLM equal to the package's own `Embedder` (docs/bilm.md,
"ELMoForManyLangs models"). The fixture (tests/fixtures/efml, made by make_fixture.py there with the
package, MIT) holds two tiny random models and the package's outputs; the package is not needed."""

import json
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from ner.bilm.bilm import BiLM
from ner.bilm.efml import EfmlError
from ner.bilm.efml_bilm import EfmlBiLM
from ner.bilm.load import BiLMFormatError, load_bilm
from tests.fixture_files import FIXTURE

EFML = FIXTURE.parent / "efml"
MODELS = ["word_char", "char_only"]  # each has one state dict in each torch file format
SENTENCES = json.loads((EFML / "sentences.json").read_text(encoding="utf-8"))


def expected_layers(name: str) -> list[np.ndarray]:
    """The package's Embedder outputs (3, T_i, 2P) per sentence."""
    stacked = np.load(EFML / name / "layers.npy")
    ends = np.cumsum([len(s) for s in SENTENCES])[:-1]
    return np.split(stacked, ends, axis=1)


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("state", ["stateless", "stateful"])
def test_all_three_layers_equal_the_package_embedder(name, state):
    """A fresh Embedder, one batch: every sentence starts from zeros, as ours do."""
    bilm = load_bilm(EFML / name, state=state)
    assert isinstance(bilm, EfmlBiLM)
    for ours, theirs in zip(bilm.embed_sentences(SENTENCES), expected_layers(name), strict=True):
        assert ours.shape == theirs.shape
        assert np.abs(ours.numpy() - theirs).max() <= 1e-5
        assert np.abs(ours.numpy().mean(0) - theirs.mean(0)).max() <= 1e-5  # output_layer=-1


def test_the_fixture_exercises_the_quirks():
    """The long token is cut, unknown characters and words occur, lengths differ in the batch."""
    bilm = EfmlBiLM.from_folder(EFML / "word_char", state="stateless")
    long_token = SENTENCES[3][1]
    assert len(long_token) > 48
    assert bilm.token_char_ids(long_token) == bilm.token_char_ids(long_token[:48])
    assert "ñ" not in bilm.vocabulary.chars and "xylophone" not in bilm.vocabulary.words
    assert len({len(s) for s in SENTENCES}) > 2


def test_warm_state_runs_and_differs_from_stateless():
    warm = EfmlBiLM.from_folder(EFML / "word_char").embed_sentences(SENTENCES[:1])[0]
    cold = EfmlBiLM.from_folder(EFML / "word_char", "stateless").embed_sentences(SENTENCES[:1])[0]
    assert torch.equal(warm[0], cold[0]) and not torch.allclose(warm[2], cold[2])


def test_bilm_tf_character_ids_are_refused():
    with pytest.raises(TypeError, match="token strings"):
        EfmlBiLM.from_folder(EFML / "char_only")(torch.ones(1, 2, 50, dtype=torch.long))


def test_an_allennlp_folder_loads_through_the_same_entry(tmp_path):
    for name in ("options.json", "lm_weights.hdf5"):
        shutil.copy(FIXTURE / name, tmp_path / name)
    bilm = load_bilm(tmp_path, state="stateless")
    assert type(bilm) is BiLM and bilm.output_dim == 32


def test_a_folder_of_neither_format_is_refused(tmp_path):
    with pytest.raises(BiLMFormatError, match=r"found 0 \.json, 0 \.hdf5"):
        load_bilm(tmp_path)


class _Payload:
    """A pickled object that is not a tensor: what weights_only loading must refuse."""

    def __reduce__(self):
        return (print, ("unpickled",))


def copy_model(tmp_path: Path, name: str = "word_char") -> Path:
    folder = tmp_path / name
    shutil.copytree(EFML / name, folder)
    return folder


def test_a_state_dict_that_needs_unpickling_is_refused(tmp_path, capsys):
    folder = copy_model(tmp_path)
    with open(folder / "encoder.pkl", "wb") as handle:
        pickle.dump({"forward_layer_0.input_linearity.weight": _Payload()}, handle)
    with pytest.raises(EfmlError, match=r"encoder\.pkl: refused, not a plain tensor state dict"):
        load_bilm(folder)
    assert "unpickled" not in capsys.readouterr().out


def test_a_tensor_of_the_wrong_shape_is_named(tmp_path):
    folder = copy_model(tmp_path)
    tensors = torch.load(folder / "token_embedder.pkl", weights_only=True)
    tensors["projection.bias"] = torch.zeros(3)
    torch.save(tensors, folder / "token_embedder.pkl")
    with pytest.raises(
        EfmlError, match=r"token_embedder\.pkl: tensor 'projection\.bias' has shape"
    ):
        load_bilm(folder)


def test_a_bad_dictionary_line_is_named(tmp_path):
    folder = copy_model(tmp_path)
    with open(folder / "char.dic", "a", encoding="utf-8") as handle:
        handle.write("x\ty\tz\n")
    with pytest.raises(EfmlError, match=r"char\.dic, line \d+: expected 'entry<TAB>id'"):
        load_bilm(folder)


def test_an_unsupported_architecture_names_the_field(tmp_path):
    folder = copy_model(tmp_path)
    config = json.loads((folder / "tiny.json").read_text(encoding="utf-8"))
    config["token_embedder"]["max_characters_per_token"] = 20
    (folder / "tiny.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(EfmlError, match="max_characters_per_token"):
        load_bilm(folder)


def test_the_published_architecture_is_built_in(tmp_path):
    """config_path names the package's shipped file, absent from the folder: its built-in copy
    is used (here it does not fit the tiny weights, which the error shows)."""
    folder = copy_model(tmp_path)
    (folder / "tiny.json").unlink()
    config = {"config_path": "../configs/cnn_50_100_512_4096_sample.json"}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(EfmlError, match=r"has shape \(27, 6\), the config implies \(27, 100\)"):
        load_bilm(folder)
