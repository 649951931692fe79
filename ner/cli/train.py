"""Train a BiLSTM-CRF tagger: ``ner-train experiment=conll2003_elmo_glove [overrides]``.

Writes into the Hydra run dir: ``config.yaml`` (resolved), ``checkpoints/{best,last}.pt``,
``results.json``, ``predictions_{dev,test}.txt``, ``model/``, ``train.log`` and ``wandb/``
(offline). ``resume=RUN_DIR`` continues a killed run from its ``last.pt`` with its saved config,
logging into RUN_DIR too. Ctrl-C or SIGTERM saves a checkpoint and says how to resume.
"""

import logging
import sys
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig

from ner.common.errors import NerError, exit_for_user
from ner.common.memory import pin_mmap_threshold
from ner.training.config import validate
from ner.training.interrupt import TrainingInterrupted
from ner.training.loop import TrainingDiverged
from ner.training.run import train

logger = logging.getLogger(__name__)


class ValidateConfig(Callback):
    """Checks the composed config (``hydra.callbacks`` in train.yaml) before Hydra creates a run
    dir or launches a sweep, so a bad value (or a malformed local options.json) leaves nothing
    behind."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._check(config)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._check(config)

    @staticmethod
    def _check(config: DictConfig) -> None:
        try:
            validate(config)
        except NerError as error:
            # SystemExit, not an Exception: Hydra turns a callback's exceptions into warnings.
            exit_for_user("ner-train", error)


def in_search() -> bool:
    """Whether this run is a trial of a sweeper that optimizes the returned value (Optuna)."""
    if not HydraConfig.initialized():
        return False
    hydra_config = HydraConfig.get()
    target = str(hydra_config.sweeper.get("_target_", ""))
    return hydra_config.mode == RunMode.MULTIRUN and "optuna" in target.lower()


@hydra.main(version_base="1.3", config_path="pkg://ner.conf", config_name="train")
def run(cfg: DictConfig) -> float:
    """Hydra entry point; returns the dev F1, or the dev accuracy for per-token labels (the
    objective for sweepers). An error the user can fix (`NerError`: a bad file, value or corpus)
    ends the run with one line and status 2, inside the task, so Hydra prints no traceback; any
    other error keeps its traceback.

    In a search, a run whose loss diverged scores 0 and the search goes on: a learning rate too
    high for the data is a result of the search, not its end, and the sampler learns to avoid
    it (a failed trial would teach it nothing; the trial's folder has no results.json, as for
    any failed run)."""
    try:
        results = train(cfg)
        return results["dev"][results.get("metric", "f1")]
    except TrainingDiverged as error:
        if not in_search():
            exit_for_user("ner-train", error)
        logger.error("this trial scores dev F1 0: %s", error)
        return 0.0
    except NerError as error:
        exit_for_user("ner-train", error)
    except TrainingInterrupted as error:
        print(f"ner-train: {error}", file=sys.stderr)
        if in_search():
            print(
                "ner-train: or rerun the search's command: finished trials are kept, this one "
                "is marked failed and the missing trials run",
                file=sys.stderr,
            )
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
