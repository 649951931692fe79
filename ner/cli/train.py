"""Train a BiLSTM-CRF tagger: ``ner-train experiment=conll2003_elmo_glove [overrides]``.

Writes into the Hydra run dir: ``config.yaml`` (resolved), ``checkpoints/{best,last}.pt``,
``results.json``, ``predictions_{dev,test}.txt``, ``model/``, ``train.log`` and ``wandb/``
(offline). ``resume=RUN_DIR`` continues a killed run from its ``last.pt`` with its saved config,
logging into RUN_DIR too. Ctrl-C or SIGTERM saves a checkpoint and says how to resume.
"""

import sys
from typing import Any

import hydra
from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from ner.common.memory import pin_mmap_threshold
from ner.features.cache import NonFiniteFeaturesError
from ner.training.config import ConfigError, validate
from ner.training.interrupt import TrainingInterrupted
from ner.training.loop import TrainingDiverged
from ner.training.run import train


class ValidateConfig(Callback):
    """Checks the composed config (``hydra.callbacks`` in train.yaml) before Hydra creates a run
    dir or launches a sweep, so a bad value leaves nothing behind."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._check(config)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._check(config)

    @staticmethod
    def _check(config: DictConfig) -> None:
        try:
            validate(config)
        except ConfigError as error:
            # SystemExit, not an Exception: Hydra turns a callback's exceptions into warnings.
            sys.exit(f"ner-train: {error}")


@hydra.main(version_base="1.3", config_path="pkg://ner.conf", config_name="train")
def run(cfg: DictConfig) -> float:
    """Hydra entry point; returns the dev F1, or the dev accuracy for per-token labels (the
    objective for sweepers)."""
    try:
        results = train(cfg)
        return results["dev"][results.get("metric", "f1")]
    except (ConfigError, TrainingDiverged, NonFiniteFeaturesError) as error:
        sys.exit(f"ner-train: {error}")
    except TrainingInterrupted as error:
        print(f"ner-train: {error}", file=sys.stderr)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        sys.exit("ner-train: interrupted before training started or after it ended")


def resume_in_place(arguments: list[str]) -> list[str]:
    """With ``resume=DIR`` and no ``hydra.run.dir`` of its own, the resumed run's log goes to
    DIR (appended to its train.log), not to a new Hydra folder; DIR's .hydra/ is left as is."""
    resume = [a.split("=", 1)[1] for a in arguments if a.startswith("resume=")]
    if not resume or not resume[-1] or any(a.startswith("hydra.run.dir=") for a in arguments):
        return arguments
    return [*arguments, f"hydra.run.dir={resume[-1]}", "hydra.output_subdir=null"]


def main() -> None:
    """``ner-train [overrides]``."""
    sys.argv[1:] = resume_in_place(sys.argv[1:])
    pin_mmap_threshold()  # large freed tensors go back to the system instead of heap holes
    run()


if __name__ == "__main__":
    main()
