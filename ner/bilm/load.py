"""One entry point for a biLM on disk, its format detected (docs/bilm.md, "ELMoForManyLangs
models").

* an ELMoForManyLangs folder (it holds `config.json`): `EfmlBiLM`;
* a folder holding one `*.json` options file and one `*.hdf5` weights file (AllenNLP/bilm-tf):
  `BiLM.from_files`.
"""

from pathlib import Path

from ner.bilm.bilm import DEFAULT_STATE, BiLM
from ner.bilm.efml import is_efml_folder
from ner.bilm.efml_bilm import EfmlBiLM
from ner.common.errors import NerError


class BiLMFormatError(NerError, ValueError):
    """A path is not a biLM in any format this loader reads."""


def load_bilm(path: str | Path, state: str = DEFAULT_STATE) -> BiLM:
    """The biLM stored at `path`, whichever of the supported formats it is in.

    # Parameters
    path: an ELMoForManyLangs model folder, or a folder with an options.json and a weights.hdf5.
    state: the LSTM state mode (`ner.bilm.bilm.STATE_MODES`).
    """
    folder = Path(path)
    if not folder.is_dir():
        raise BiLMFormatError(f"{folder}: not a folder (expected a biLM model folder)")
    if is_efml_folder(folder):
        return EfmlBiLM.from_folder(folder, state=state)
    options = sorted(folder.glob("*.json"))
    weights = sorted(folder.glob("*.hdf5"))
    if len(options) == 1 and len(weights) == 1:
        return BiLM.from_files(options[0], weights[0], state=state)
    raise BiLMFormatError(
        f"{folder}: expected an ELMoForManyLangs folder (config.json, char.dic, *.pkl) or one "
        f"options *.json with one weights *.hdf5; found {len(options)} .json, "
        f"{len(weights)} .hdf5"
    )
