"""hydra-optuna-sweeper's search, made to resume where it stopped.

The stock sweeper reopens a study from its storage but then runs ``n_trials`` more trials and
numbers their job folders from 0 again, over the finished ones. This one takes the stock
sweeper's settings (``hydra.sweeper.*``) and runs its loop (ask a batch of ``n_jobs`` trials,
launch them, tell their dev F1; stop on more failures than ``max_failure_rate``; write
``optimization_results.yaml``) on Hydra's and Optuna's public interfaces. Before the loop:

- the sweep folder is locked (one search per folder at a time), and its study file is opened
  again only if a search created it (`_study_file`: a plain file, not a link, with no trigger,
  view or table that Optuna does not create);
- the folder gets ``search.yaml``, the search's record: study, search space and the fixed
  overrides. A rerun with another search space or other fixed overrides is an error naming the
  differences, so a study never mixes trials of two different searches;
- trials a killed search left running are marked failed (their folders stay, without
  ``results.json``), finished ones are kept and count towards ``n_trials``: a rerun of the same
  command runs only the trials still missing, and a rerun with a larger ``n_trials`` extends
  the study;
- job numbers continue from the study's trial count, so trial N runs in folder N, and the
  sampler's seed is offset by that count, so the resumed part does not repeat earlier draws;
- search-space keys under a config node that is null (``elmo.*`` with ``elmo=none``) are left
  out with a log line, so one default search space serves runs with and without ELMo.
"""

import functools
import logging
from collections.abc import MutableSequence
from pathlib import Path
from typing import Any

import optuna
import yaml
from filelock import FileLock, Timeout
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.plugins import Plugins
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from optuna.trial import TrialState

from ner.common.errors import NerError

from ._space import search_space
from ._study_file import check_study_file

log = logging.getLogger(__name__)

RECORD = "search.yaml"
LOCK = ".search.lock"
_ABSENT = object()


class SearchError(NerError, RuntimeError):
    """A search that cannot start or resume; the message says why and what to do."""


class ResumableSweeperImpl(Sweeper):
    """The search described above; the settings are hydra-optuna-sweeper's (its
    ``OptunaSweeperConf``), except the deprecated ``search_space`` (use ``params``) and
    samplers that need the search space first (``GridSampler``), which are refused."""

    def __init__(
        self,
        sampler: Any,
        direction: Any,
        storage: Any,
        study_name: str | None,
        n_trials: int,
        n_jobs: int,
        max_failure_rate: float,
        search_space: DictConfig | None,
        custom_search_space: str | None,
        params: DictConfig | None,
    ) -> None:
        self.search_space = search_space  # refused by `sweep`, like the settings below
        self.sampler, self.direction, self.storage = sampler, direction, storage
        self.study_name, self.n_trials, self.n_jobs = study_name, n_trials, n_jobs
        self.max_failure_rate, self.params, self.job_idx = max_failure_rate, params, 0
        self.extend = None  # custom_search_space: a function (config, trial) that suggests more
        if custom_search_space:
            self.extend = instantiate({"_target_": custom_search_space, "_partial_": True})

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        """Keep the config and make the launcher that runs the trials."""
        self.config, self.job_idx = config, 0
        self.launcher = Plugins.instance().instantiate_launcher(
            config=config, hydra_context=hydra_context, task_function=task_function
        )

    def _check_settings(self) -> None:
        """SearchError for a setting this sweeper does not take."""
        if self.n_jobs < 1:
            raise SearchError(
                f"hydra.sweeper.n_jobs={self.n_jobs}: expected at least 1 (trials asked at a "
                "time; set it to the launcher's parallel jobs)"
            )
        if self.search_space:
            raise SearchError("hydra.sweeper.search_space: give the search as hydra.sweeper.params")
        if isinstance(self.sampler, functools.partial):
            name = getattr(self.sampler.func, "__name__", self.sampler.func)
            raise SearchError(f"hydra.sweeper.sampler: {name} is not supported")
        if not 0.0 <= self.max_failure_rate <= 1.0:
            rate = self.max_failure_rate
            raise SearchError(f"hydra.sweeper.max_failure_rate={rate}: expected 0 to 1")

    def _get_directions(self) -> list[str]:
        """The study's directions (``maximize``/``minimize``), one per objective."""
        several = isinstance(self.direction, MutableSequence)  # a list (ListConfig) of them
        return [getattr(d, "name", d) for d in (self.direction if several else [self.direction])]

    def sweep(self, arguments: list[str]) -> None:
        """Check and record the search, settle the study's earlier trials, then run the rest."""
        self._check_settings()
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(sweep_dir / LOCK)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            raise SearchError(
                f"{sweep_dir}: another search is running in this folder (wait for it, or give "
                "this one hydra.sweep.dir=DIR)"
            ) from None
        try:
            self.params = self._applicable_params()
            check_study_file(self.storage)
            check_record(sweep_dir / RECORD, self._record(arguments))
            study = optuna.create_study(
                study_name=self.study_name,
                storage=self.storage,
                sampler=self.sampler,
                directions=self._get_directions(),
                load_if_exists=True,
            )
            finished = settle_trials(study)
            self.job_idx = len(study.trials)
            if self.job_idx:
                study.sampler = self._reseeded_sampler(self.job_idx)
            self.n_trials = max(0, self.n_trials - finished)
            log.info(
                "study %s: %d trials finished, %d to run, the next in %s/%d",
                study.study_name,
                finished,
                self.n_trials,
                sweep_dir,
                self.job_idx,
            )
            self._run_trials(study, arguments)
        finally:
            lock.release()

    def _reseeded_sampler(self, offset: int) -> Any:
        """A sampler seeded with seed + `offset` for a resumed study: with the configured seed
        again it would repeat the draws of the first part (TPE's first trials are random)."""
        sampler = self.config.hydra.sweeper.sampler
        if sampler.get("seed") is None:
            return self.sampler
        log.info("resumed study: sampler seed %d + %d", sampler.seed, offset)
        return instantiate(sampler, seed=int(sampler.seed) + offset)

    def _run_trials(self, study: optuna.Study, arguments: list[str]) -> None:
        """Ask, launch and tell `n_trials` trials, `n_jobs` at a time; then write the best."""
        params = [f"{key!s}={value}" for key, value in (self.params or {}).items()]
        searched, fixed = search_space(params + arguments)
        to_go = self.n_trials
        while to_go > 0:
            trials = [study.ask(searched) for _ in range(min(to_go, self.n_jobs))]
            overrides = [self._trial_overrides(trial, fixed) for trial in trials]
            returns = self.launcher.launch(overrides, initial_job_idx=self.job_idx)
            self.job_idx += len(returns)
            failed = [not tell(study, t, r) for t, r in zip(trials, returns, strict=True)]
            if sum(failed) / len(returns) > self.max_failure_rate:
                log.error("%d of %d trials failed", sum(failed), len(returns))
                for job in returns:
                    _ = job.return_value  # raises the failed job's own error
            to_go -= len(trials)
        write_best(study, Path(str(self.config.hydra.sweep.dir)) / "optimization_results.yaml")

    def _trial_overrides(self, trial: optuna.Trial, fixed: dict[str, Any]) -> tuple[str, ...]:
        """The command-line overrides of one trial: its drawn values, then the fixed ones."""
        for key, value in fixed.items():
            trial.set_user_attr(key, value)
        if self.extend is not None:
            self.extend(self.config, trial)
        overlap = trial.params.keys() & trial.user_attrs
        if overlap:
            raise SearchError(f"keys both searched and fixed: {', '.join(sorted(overlap))}")
        return tuple(f"{key}={value}" for key, value in {**trial.params, **fixed}.items())

    def _applicable_params(self) -> DictConfig | None:
        """The configured search space without keys under a null config node."""
        if not self.params:
            return self.params
        kept, dropped = {}, []
        for key, value in self.params.items():
            if applies(self.config, str(key)):
                kept[str(key)] = value
            else:
                dropped.append(str(key))
        if dropped:
            log.info("not searched (a parent node is null in the config): %s", ", ".join(dropped))
        return OmegaConf.create(kept)

    def _record(self, arguments: list[str]) -> dict[str, Any]:
        """What makes two runs of the sweeper the same search (``search.yaml``)."""
        space = {str(k): str(v) for k, v in (self.params or {}).items()}
        fixed = []
        for override in OverridesParser.create().parse_overrides(arguments):
            key = override.get_key_element()
            if override.is_sweep_override():  # as written: a sweep has no other string form
                space[key] = override.input_line.partition("=")[2]
            else:  # a plain value fixes a key, taking it out of the search space
                space.pop(key, None)
                fixed.append(override.input_line)
        return {
            "study_name": self.study_name,
            "directions": self._get_directions(),
            "objective": "dev F1 (the value the task function returns)",
            "search_space": dict(sorted(space.items())),
            "fixed_overrides": sorted(fixed),
        }


def applies(config: DictConfig, key: str) -> bool:
    """Whether `key` (dotted) can be set in `config`: no node on its way is null."""
    parts = key.split(".")
    for end in range(1, len(parts)):
        if OmegaConf.select(config, ".".join(parts[:end]), default=_ABSENT) is None:
            return False
    return True


def check_record(path: Path, record: dict[str, Any]) -> None:
    """Write the search's record, or check it against the one an earlier run of it wrote."""
    if not path.is_file():
        path.write_text(yaml.safe_dump(record, sort_keys=False), encoding="utf-8")
        return
    earlier = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    differences = [
        f"{key}: {earlier.get(key)!r} before, {record[key]!r} now"
        for key in ("study_name", "directions", "search_space", "fixed_overrides")
        if earlier.get(key) != record[key]
    ]
    if differences:
        raise SearchError(
            f"{path}: this folder holds another search; resuming it needs the same settings "
            f"({'; '.join(differences)}). Start a new search with hydra.sweep.dir=DIR or "
            "hydra.sweeper.study_name=NAME."
        )


def settle_trials(study: optuna.Study) -> int:
    """Mark the trials a killed search left running as failed; the number of finished ones."""
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        log.warning("trial %d was interrupted: marked failed", trial.number)
        study.tell(trial.number, state=TrialState.FAIL)
    return len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))


def tell(study: optuna.Study, trial: optuna.Trial, job: Any) -> bool:
    """Record a launched trial's objective values (its task's return value) in the study, or
    mark it failed (False) when the job failed or returned no number per objective."""
    try:
        returned, objectives = job.return_value, len(study.directions)
        values = [float(returned)] if objectives == 1 else [float(v) for v in returned]
        if len(values) != objectives:
            raise ValueError(f"{len(values)} values for {objectives} objectives")
    except Exception as error:  # the job's own failure, or a return value that is no number
        log.warning("trial %d failed: %s", trial.number, error)
        study.tell(trial, state=TrialState.FAIL)
        return False
    study.tell(trial, values)
    return True


def write_best(study: optuna.Study, path: Path) -> None:
    """The best trial's settings and value (or the Pareto front of several objectives)."""
    if len(study.directions) == 1:
        best = study.best_trial
        log.info("best parameters: %s; best value: %s", best.params, best.value)
        results = {"name": "optuna", "best_params": best.params, "best_value": best.value}
    else:
        front = [{"params": t.params, "values": t.values} for t in study.best_trials]
        log.info("%d Pareto-optimal trials", len(front))
        results = {"name": "optuna", "solutions": front}
    OmegaConf.save(OmegaConf.create(results), path)
