"""`ner-pretrain [overrides]`: train a biLM (config `conf/pretrain.yaml`)."""

import sys

import hydra
from omegaconf import DictConfig

from ner.common.schema import ConfigError
from ner.pretrain.config import validate
from ner.pretrain.trainer import train


@hydra.main(version_base="1.3", config_path="pkg://ner.conf", config_name="pretrain")
def main(cfg: DictConfig) -> None:
    """Train, checkpoint, evaluate and export per `cfg` (see conf/pretrain.yaml)."""
    try:
        validate(cfg)
    except ConfigError as error:
        sys.exit(f"ner-pretrain: {error}")
    train(cfg)


if __name__ == "__main__":
    main()
