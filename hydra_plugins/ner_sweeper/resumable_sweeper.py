"""The sweeper that ``hparams_search=optuna`` selects (``hydra.sweeper._target_``).

Hydra finds plugins only under the ``hydra_plugins`` namespace package, so this thin class lives
here; the work is done in `_resumable` (imported late: Hydra imports every plugin module at start
up, and Optuna is slow to import).
"""

from typing import Any

from hydra_plugins.hydra_optuna_sweeper.optuna_sweeper import OptunaSweeper


class ResumableOptunaSweeper(OptunaSweeper):
    """hydra-optuna-sweeper's sweeper, resumable: same config keys (``hydra.sweeper.*``)."""

    def __init__(self, **config: Any) -> None:
        from ._resumable import ResumableSweeperImpl

        self.sweeper = ResumableSweeperImpl(**config)
