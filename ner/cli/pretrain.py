"""`ner-pretrain [overrides]`: train a biLM (config `conf/pretrain.yaml`)."""

import sys

import hydra
from omegaconf import DictConfig

from ner.common.errors import NerError, exit_for_user
from ner.pretrain.config import GROUPS, validate
from ner.pretrain.trainer import train


@hydra.main(version_base="1.3", config_path="pkg://ner.conf", config_name="pretrain")
def run(cfg: DictConfig) -> None:
    """Train, checkpoint, evaluate and export per `cfg` (see conf/pretrain.yaml). An error
    the user can fix (`NerError`) ends the run with one line and status 2, no traceback."""
    try:
        validate(cfg)
        train(cfg)
    except NerError as error:
        exit_for_user("ner-pretrain", error)


def with_groups(arguments: list[str]) -> list[str]:
    """A ``hydra.searchpath=[...]`` of the user's replaces the config's own, which holds the
    groups (`GROUPS`): keep them, after the user's folders, which add options to them."""
    prefix = "hydra.searchpath=["
    kept = []
    for argument in arguments:
        if argument.startswith(prefix) and GROUPS not in argument:
            folders = argument[len(prefix) : -1]
            argument = f"{prefix}{folders + ',' if folders else ''}{GROUPS}]"
        kept.append(argument)
    return kept


def main() -> None:
    """``ner-pretrain [overrides]``."""
    sys.argv[1:] = with_groups(sys.argv[1:])
    run()


if __name__ == "__main__":
    main()
