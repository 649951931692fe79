"""hydra-optuna-sweeper's search, made to resume where it stopped.

The stock sweeper reopens a study from its storage but then runs ``n_trials`` more trials and
numbers their job folders from 0 again, over the finished ones. Here, before the stock loop runs:

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

import logging
from pathlib import Path
from typing import Any

import optuna
import yaml
from filelock import FileLock, Timeout
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.utils import instantiate
from hydra_plugins.hydra_optuna_sweeper._impl import OptunaSweeperImpl
from omegaconf import DictConfig, OmegaConf
from optuna.trial import TrialState

from ner.common.errors import NerError

from ._study_file import check_study_file

log = logging.getLogger(__name__)

RECORD = "search.yaml"
LOCK = ".search.lock"
_ABSENT = object()


class SearchError(NerError, RuntimeError):
    """A search that cannot start or resume; the message says why and what to do."""


class ResumableSweeperImpl(OptunaSweeperImpl):
    """`OptunaSweeperImpl` with the resume, record and pruning steps described above."""

    def sweep(self, arguments: list[str]) -> None:
        """Check and record the search, settle the study's earlier trials, then run the rest."""
        if self.n_jobs < 1:
            raise SearchError(
                f"hydra.sweeper.n_jobs={self.n_jobs}: expected at least 1 (trials asked at a "
                "time; set it to the launcher's parallel jobs)"
            )
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
                directions=self._get_directions(),
                load_if_exists=True,
            )
            finished = settle_trials(study)
            self.job_idx = len(study.trials)
            if self.job_idx:
                self._reseed_sampler(self.job_idx)
            self.n_trials = max(0, self.n_trials - finished)
            log.info(
                "study %s: %d trials finished, %d to run, the next in %s/%d",
                study.study_name,
                finished,
                self.n_trials,
                sweep_dir,
                self.job_idx,
            )
            super().sweep(arguments)
        finally:
            lock.release()

    def _reseed_sampler(self, offset: int) -> None:
        """A sampler seeded with seed + `offset` for a resumed study: with the configured seed
        again it would repeat the draws of the first part (TPE's first trials are random)."""
        sampler = self.config.hydra.sweeper.sampler
        if sampler.get("seed") is None or sampler.get("_partial_"):
            return
        self.sampler = instantiate(sampler, seed=int(sampler.seed) + offset)
        log.info("resumed study: sampler seed %d + %d", sampler.seed, offset)

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
