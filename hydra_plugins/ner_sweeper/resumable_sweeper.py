"""The sweeper that ``hparams_search=optuna`` selects (``hydra.sweeper._target_``).

Hydra finds plugins only under the ``hydra_plugins`` namespace package, so this thin class lives
here; the work is done in `_resumable` (imported late: Hydra imports every plugin module at start
up, and Optuna is slow to import).
"""

import logging
from typing import Any

from hydra_plugins.hydra_optuna_sweeper.optuna_sweeper import OptunaSweeper

from ner.common.errors import NerError, exit_for_user

# Alembic, imported with Optuna (here before the sweeper: Hydra builds its sampler first), logs
# every plugin it sets up at INFO.
logging.getLogger("alembic").setLevel(logging.WARNING)


class ResumableOptunaSweeper(OptunaSweeper):
    """hydra-optuna-sweeper's sweeper, resumable: same config keys (``hydra.sweeper.*``)."""

    def __init__(self, **config: Any) -> None:
        from ._resumable import ResumableSweeperImpl

        self.sweeper = ResumableSweeperImpl(**config)

    def sweep(self, arguments: list[str]) -> None:
        """Run the search; one that cannot start or resume (another search's folder, a study
        file it did not create) stops ``ner-train`` with one line and status 2, no traceback."""
        try:
            self.sweeper.sweep(arguments)
        except NerError as error:
            exit_for_user("ner-train", error)
