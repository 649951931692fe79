"""`ner-pretrain [overrides]`: train a biLM (config `conf/pretrain.yaml`)."""

import hydra
from omegaconf import DictConfig

from ner.common.errors import NerError, exit_for_user
from ner.pretrain.config import validate
from ner.pretrain.trainer import train


@hydra.main(version_base="1.3", config_path="pkg://ner.conf", config_name="pretrain")
def main(cfg: DictConfig) -> None:
    """Train, checkpoint, evaluate and export per `cfg` (see conf/pretrain.yaml). An error
    the user can fix (`NerError`) ends the run with one line and status 2, no traceback."""
    try:
        validate(cfg)
        train(cfg)
    except NerError as error:
        exit_for_user("ner-pretrain", error)


if __name__ == "__main__":
    main()
