"""Train a BiLSTM-CRF tagger: ``ner-train experiment=conll2003_elmo_glove [overrides]``.

Writes into the Hydra run dir: ``config.yaml`` (resolved), ``checkpoints/{best,last}.pt``,
``results.json``, ``predictions_{dev,test}.txt``, ``model/``, ``train.log`` and ``wandb/``
(offline). ``resume=RUN_DIR`` continues a killed run from its ``last.pt`` with its saved config.
"""

import hydra
from omegaconf import DictConfig

from ner.training.run import train


@hydra.main(version_base="1.3", config_path="../../conf", config_name="config")
def main(cfg: DictConfig) -> float:
    """Hydra entry point; returns the dev F1 (the objective for sweepers)."""
    return train(cfg)["dev"]["f1"]


if __name__ == "__main__":
    main()
