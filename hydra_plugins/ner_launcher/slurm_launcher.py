"""The launcher that ``hydra/launcher=slurm`` selects (``hydra.launcher._target_``).

hydra-submitit-launcher's SLURM launcher, with what a real cluster needs: a submission SLURM
refuses (no ``sbatch``, no controller, a bad partition or time limit) ends the sweep with one
line naming the setting to change, and a job that ends without a result (``scancel``, its time
limit, out of memory) is a failed job of the sweep (a failed trial in a search) instead of a
submitit traceback that loses the jobs beside it. The work is done in `_jobs` (imported late:
Hydra imports every plugin module at start up, and submitit is slow to import).
"""

import signal
from collections.abc import Sequence
from typing import Any

from hydra.core.utils import JobReturn
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import SlurmLauncher


class NerSlurmLauncher(SlurmLauncher):
    """hydra-submitit-launcher's ``SlurmLauncher``: same config keys (``hydra.launcher.*``)."""

    def __call__(self, *args: Any, **kwargs: Any) -> JobReturn:
        """Run one sweep point inside its job (hydra-submitit-launcher's), ignoring submitit's
        warning signal (USR2, ``signal_delay_s`` before the time limit): submitit would raise
        inside the training there. At the limit SLURM sends SIGTERM, on which ner-train saves a
        checkpoint and stops; the job ends TIMEOUT and the run continues with resume=RUN_DIR."""
        signal.signal(signal.SIGUSR2, signal.SIG_IGN)
        return super().__call__(*args, **kwargs)

    def launch(
        self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
    ) -> list[JobReturn]:
        """Submit one array job for the sweep points, wait for them all, and return each one's
        result, a failed `JobReturn` for a job that ended without one."""
        from ._jobs import collect, submit

        jobs = submit(self, job_overrides, initial_job_idx)
        return collect(jobs, job_overrides, initial_job_idx, self.params)
