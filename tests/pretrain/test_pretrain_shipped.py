"""The shipped biLM (package data) loads in `BiLM`, `ner-embed` and the tagger configs."""

from pathlib import Path

import h5py
import pytest
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

from ner.bilm.bilm import BiLM
from ner.cli.embed import main as embed_main
from ner.pretrain import SHIPPED_MODEL, pretrained_files

REPO = Path(__file__).resolve().parents[2]


def test_shipped_model_is_small_and_documented() -> None:
    options_file, weight_file = pretrained_files()
    assert weight_file.stat().st_size <= 25 * 2**20
    card = (options_file.parent / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert "perplexity" in card and "ner-pretrain" in card
    with pytest.raises(FileNotFoundError, match="no shipped biLM 'nope'"):
        pretrained_files("nope")


def test_shipped_model_embeds_sentences(tmp_path: Path) -> None:
    bilm = BiLM.from_files(*pretrained_files())
    vectors = bilm.embed_sentences([["EU", "rejects", "German", "call", "."], ["Hello"]])
    assert [v.shape for v in vectors] == [(3, 5, 256), (3, 1, 256)]
    text = tmp_path / "in.txt"
    text.write_text("Peter Blackburn\nBRUSSELS 1996-08-22\n", encoding="utf-8")
    options_file, weight_file = pretrained_files()
    args = [str(text), str(tmp_path / "out.hdf5"), "--options-file", str(options_file)]
    assert embed_main([*args, "--weight-file", str(weight_file), "--no-progress"]) == 0
    with h5py.File(tmp_path / "out.hdf5") as handle:
        assert handle["0"].shape == (3, 2, 256) and handle["1"].shape == (3, 2, 256)


def test_elmo_preset_points_at_the_shipped_files() -> None:
    import ner.training.config  # noqa: F401  (registers the ${shipped_bilm:} resolver)

    with initialize_config_module("ner.conf", version_base="1.3"):
        cfg = compose("train", overrides=["elmo=small_news"])
    preset = OmegaConf.to_container(cfg.elmo, resolve=True)
    assert (Path(preset["options_file"]), Path(preset["weight_file"])) == pretrained_files()
    bilm = BiLM.from_files(
        preset["options_file"], preset["weight_file"], expected=preset["expected"]
    )
    assert bilm.output_dim == 256 and SHIPPED_MODEL in preset["options_file"]
