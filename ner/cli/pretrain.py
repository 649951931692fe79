"""`ner-pretrain` / `ner-pretrain`: train a biLM (config `conf/pretrain/default.yaml`)."""

import hydra
from omegaconf import DictConfig

from ner.pretrain.trainer import train


@hydra.main(version_base="1.3", config_path="../../conf/pretrain", config_name="default")
def main(cfg: DictConfig) -> None:
    """Train, checkpoint, evaluate and export per `cfg` (see conf/pretrain/default.yaml)."""
    train(cfg)


if __name__ == "__main__":
    main()
