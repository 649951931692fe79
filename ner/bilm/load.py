"""One entry point for a biLM on disk, its format detected or named (docs/bilm.md,
"ELMoForManyLangs models").

* an ELMoForManyLangs folder (it holds `config.json`): `EfmlBiLM`;
* a folder holding one `*.json` options file and one `*.hdf5` weights file (AllenNLP/bilm-tf):
  `BiLM.from_files`.
"""

from pathlib import Path

from ner.bilm.bilm import DEFAULT_STATE, BiLM
from ner.bilm.efml_bilm import EfmlBiLM
from ner.bilm.folder import BiLMFormatError, allennlp_pair, detect_format

__all__ = ["BiLMFormatError", "load_bilm"]


def load_bilm(path: str | Path, state: str = DEFAULT_STATE, format: str | None = None) -> BiLM:
    """The biLM stored in the folder `path`, in whichever supported format it is.

    # Parameters
    path: an ELMoForManyLangs model folder, or a folder with an options.json and a weights.hdf5.
    state: the LSTM state mode (`ner.bilm.bilm.STATE_MODES`).
    format: ``efml`` or ``allennlp`` to insist on one (an error if the folder is the other);
        None detects it.
    """
    if detect_format(path, format) == "efml":
        return EfmlBiLM.from_folder(path, state=state)
    options, weights = allennlp_pair(path)
    return BiLM.from_files(options, weights, state=state)
