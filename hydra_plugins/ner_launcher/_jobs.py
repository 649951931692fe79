"""Submitting a sweep to SLURM and collecting its jobs, for `NerSlurmLauncher`.

`submit` does what hydra-submitit-launcher's ``launch`` does up to the submission (the executor
and its parameters from ``hydra.launcher.*``, one array job for the sweep points) and turns a
refused submission into a `SlurmSetupError`; `collect` waits for each job and gives a job that
ended without a result (submitit learns that through ``sacct``, so the cluster needs job
accounting) a failed `JobReturn` whose error says why and what to change.
"""

import logging
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import submitit
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus, filter_overrides
from hydra.errors import CompactHydraException
from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import SlurmLauncher
from omegaconf import OmegaConf
from submitit.core.utils import UncompletedJobError

log = logging.getLogger(__name__)

# What sbatch says when it refuses a job, and the setting that decides it.
REFUSALS = [
    (r"invalid partition", "set hydra.launcher.partition to one that `sinfo` lists"),
    (r"time limit", "lower hydra.launcher.timeout_min to the partition's limit (`sinfo`)"),
    (r"invalid account", "set hydra.launcher.account to one of yours (`sacctmgr show assoc`)"),
    (r"invalid qos", "set hydra.launcher.qos to one of yours (`sacctmgr show assoc`)"),
    (
        r"node configuration is not available|memory",
        "lower hydra.launcher.mem_gb or hydra.launcher.cpus_per_task to what a node has "
        "(`sinfo -N -l`)",
    ),
    (
        r"unable to contact slurm controller",
        "check that the controller runs (`scontrol ping`) and that SLURM_CONF or slurm.conf's "
        "SlurmctldHost names it",
    ),
]
# How a job that left no result ended (its sacct state), and what to change.
ENDINGS = {
    "TIMEOUT": (
        "it reached its time limit: raise hydra.launcher.timeout_min (now {timeout_min}), or "
        "continue the run from its last checkpoint with resume=ITS_FOLDER"
    ),
    "OUT_OF_MEMORY": "it ran out of memory: raise hydra.launcher.mem_gb (now {mem_gb})",
    "CANCELLED": "it was cancelled (scancel)",
    "PREEMPTED": "it was preempted",
    "NODE_FAIL": "its node failed",
}


class SlurmSetupError(CompactHydraException):
    """SLURM refused a sweep's jobs; the message names the setting to change. Hydra prints a
    `CompactHydraException` as its message alone."""


class SlurmJobError(CompactHydraException):
    """A sweep's job ended without a result: the message names its folder, its SLURM job and
    why it ended."""


def submit(launcher: SlurmLauncher, job_overrides: Sequence[Sequence[str]], first: int) -> list:
    """Submit the sweep points `job_overrides`, numbered from `first`, as one array job.

    # Parameters
    launcher: the launcher, configured (``hydra.launcher.*`` in ``launcher.params``).
    job_overrides: each job's overrides.
    first: the number of the first job (its folder under ``hydra.sweep.dir``).
    """
    missing = [command for command in ("sbatch", "srun", "sacct") if shutil.which(command) is None]
    if missing:
        raise SlurmSetupError(
            f"hydra/launcher=slurm: {', '.join(missing)} not on PATH: run the sweep where "
            "SLURM's commands are (a login node), or choose hydra/launcher=local"
        )
    params = dict(launcher.params)
    init_keys = {"submitit_folder", "max_num_timeout"}
    executor = submitit.AutoExecutor(
        cluster="slurm",
        folder=params["submitit_folder"],
        slurm_max_num_timeout=params["max_num_timeout"],
    )
    base = set(OmegaConf.structured(BaseQueueConf).keys())
    executor.update_parameters(
        **{k if k in base else f"slurm_{k}": v for k, v in params.items() if k not in init_keys}
    )
    sweep_dir = Path(str(launcher.config.hydra.sweep.dir))
    log.info("Submitit 'slurm' sweep output dir : %s", sweep_dir)
    sweep_dir.mkdir(parents=True, exist_ok=True)
    arguments = []
    for number, overrides in enumerate(job_overrides, start=first):
        log.info("\t#%d : %s", number, " ".join(filter_overrides(overrides)))
        state = Singleton.get_state()
        arguments.append(
            (list(overrides), "hydra.sweep.dir", number, f"job_id_for_{number}", state)
        )
    try:
        return executor.map_array(launcher, *zip(*arguments, strict=True))
    except submitit.core.utils.FailedJobError as error:
        raise SlurmSetupError(refusal(str(error))) from None


def refusal(sbatch_output: str) -> str:
    """One line for sbatch's refusal: its last error line and the setting to change."""
    lines = [line.strip() for line in sbatch_output.splitlines() if line.strip()]
    said = lines[-1] if lines else "sbatch failed"
    for pattern, advice in REFUSALS:
        if re.search(pattern, sbatch_output, re.IGNORECASE):
            return f"hydra/launcher=slurm: SLURM refused the jobs ({said}): {advice}"
    return f"hydra/launcher=slurm: SLURM refused the jobs ({said}): check hydra.launcher.*"


def collect(
    jobs: list, job_overrides: Sequence[Sequence[str]], first: int, params: Any
) -> list[JobReturn]:
    """Each job's `JobReturn`, waiting for them all; a failed one for a job with no result.

    # Parameters
    jobs: the submitted submitit jobs, in sweep order.
    job_overrides: each job's overrides.
    first: the number of the first job.
    params: ``hydra.launcher.*``, for the advice in a failed job's error.
    """
    returns = []
    for number, (job, overrides) in enumerate(zip(jobs, job_overrides, strict=True), start=first):
        try:
            result = job.results()[0]
        except UncompletedJobError:
            result = failed(job, number, str(job.state).split()[0], params)
        result.overrides = list(overrides)
        returns.append(result)
    return returns


def failed(job: Any, number: int, state: str, params: Any) -> JobReturn:
    """A failed `JobReturn` for `job`, sweep job `number`, which ended in `state` without a
    result."""
    why = ENDINGS.get(state, "see its log, {log}").format(log=job.paths.stderr, **params)
    last = last_line(job.paths.stderr) if state not in ENDINGS else ""
    error = SlurmJobError(
        f"sweep job {number} (SLURM job {job.job_id}) ended {state}: {why}"
        + (f"; its last line: {last}" if last else "")
    )
    log.error("%s", error)
    result = JobReturn()
    result.status = JobStatus.FAILED
    result.return_value = error
    return result


def last_line(path: Path) -> str:
    """The last non-blank line of the text file at `path`, or "" without one."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return next((line.strip() for line in reversed(lines) if line.strip()), "")
