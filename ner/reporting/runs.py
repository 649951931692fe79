"""Finding and reading finished training runs (the ``results.json`` that `ner.cli.train` writes).

A run belongs to a (corpus, variant) group: the corpus is the config's ``data.name``; the variant
is the config's ``variant`` (set by the experiment configs) or, for runs made without one, a name
derived from the inputs used (``glove``, ``elmo_glove``, ``elmo_glove_layers01``, ...); a biLM
adapted before training (``elmo.adapt``) adds ``_task`` or ``_domain`` to either (and
``_lr<scale>`` for an ``elmo.adapt_lr_scale`` other than 1): ``elmo_glove_task``.
"""

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ner.common.errors import NerError

logger = logging.getLogger(__name__)

RESULTS_FILE = "results.json"
BILM_SHA256 = "bilm_weights_sha256"  # added to a run's results by experiments/study/study.py
METRICS = ("f1", "accuracy")  # what a run is scored on: spans, per-token labels
REQUIRED_KEYS = ("dev", "test", "seed", "best_epoch", "epochs_run", "history", "config")

# Config entries that may differ between the seeds of one variant without making them different
# experiments: the seed itself, bookkeeping, logging, devices and threads, `elmo.expected` (the
# shapes a preset checks its files against, not an input; the weights' sha256 is compared), and
# how the trainer is built (``_target_``, ``_partial_``: absent from runs of earlier versions).
# Everything else (biLM files included) must match, or the report warns.
IGNORED_SETTINGS = (
    "elmo.expected",
    "seed",
    "resume",
    "progress",
    "shared_dir",
    "logger",
    "trainer.device",
    "trainer.num_threads",
    "trainer.eval_batch_size",
    "trainer._target_",
    "trainer._partial_",
)


class ReportError(NerError, ValueError):
    """A folder or ``results.json`` that cannot be read as runs; the message names the path."""


@dataclass(frozen=True)
class Run:
    """One finished training run."""

    directory: Path
    corpus: str
    variant: str
    seed: int
    results: dict[str, Any]


def metric(results: dict[str, Any]) -> str:
    """The score a run was selected and compared on: ``accuracy`` for per-token labels, else
    ``f1``."""
    return results.get("metric") or ("accuracy" if "accuracy" in results["test"] else "f1")


def corpus_name(config: dict[str, Any]) -> str:
    """The corpus a run used: a named corpus as is, a folder or hub dataset by its last part;
    ``-<column>`` when ``data.options.label_column`` chose another label column (``conll2000-pos``);
    ``-firstN`` when ``data.max_sentences`` cut its splits and ``-trainF`` when it trained on a
    fraction F of the training sentences (``data.train_fraction``): a subset is not the corpus."""
    name = str(config["data"]["name"]).rstrip("/").rsplit("/", 1)[-1]
    column = (config["data"].get("options") or {}).get("label_column")
    name = f"{name}-{column}" if column else name
    limit = config["data"].get("max_sentences")
    fraction = config["data"].get("train_fraction")
    name = f"{name}-first{limit}" if limit else name
    return f"{name}-train{fraction:g}" if fraction is not None and fraction < 1 else name


def variant_name(config: dict[str, Any]) -> str:
    """The config's ``variant``, else a name built from its inputs and ELMo mix settings; with
    the biLM's adaptation, if any (`adaptation_suffix`), unless the name already ends with it
    (a runner that names its adapted variants, as the learning curve's ``elmo_glove_domain``)."""
    name = str(config["variant"]) if config.get("variant") else _inputs_name(config)
    suffix = adaptation_suffix(config)
    return name if name.endswith(suffix) else name + suffix


def adaptation_suffix(config: dict[str, Any]) -> str:
    """``_task`` or ``_domain`` for a run whose biLM was adapted first (``elmo.adapt``), with
    ``_lr<scale>`` when ``elmo.adapt_lr_scale`` is not 1; empty otherwise."""
    elmo = config.get("elmo") or {}
    mode = elmo.get("adapt") or "none"
    if mode == "none" or not uses_elmo(config):
        return ""
    scale = elmo.get("adapt_lr_scale", 1.0)
    return f"_{mode}" + (f"_lr{scale:g}" if scale != 1 else "")


def _inputs_name(config: dict[str, Any]) -> str:
    """A variant name built from the run's inputs and ELMo mix settings."""
    embeddings = config.get("embeddings") or {}
    elmo = uses_elmo(config)
    parts = []
    if elmo:
        parts.append("elmo")
    if embeddings.get("glove"):
        parts.append("glove" if embeddings["glove"].get("source") else "words")
    if not embeddings.get("char"):
        parts.append("nochar")
    if elmo and (layers := _mix_setting(config, "layers")) is not None:
        parts.append("layers" + "".join(str(layer) for layer in layers))
    if elmo and (weights := _mix_setting(config, "fixed_weights")) is not None:
        parts.append("fixed" + "-".join(f"{w:.3g}" for w in weights))
    return "_".join(parts) or "none"


def uses_elmo(config: dict[str, Any]) -> bool:
    """Whether the run's model read ELMo: ``elmo`` set (runs before the ``elmo`` group held every
    biLM setting: ``embeddings.elmo`` set)."""
    embeddings = config.get("embeddings") or {}
    if "elmo" in embeddings:
        return bool(embeddings["elmo"])
    return bool(config.get("elmo"))


def _mix_setting(config: dict[str, Any], name: str) -> Any:
    """``elmo.mix.layers`` or ``elmo.mix.fixed_weights`` (older runs: ``model.elmo_mix_layers``,
    ``model.elmo_fixed_weights``)."""
    mix = (config.get("elmo") or {}).get("mix")
    if mix is not None:
        return mix.get(name)
    old_key = {"layers": "elmo_mix_layers", "fixed_weights": "elmo_fixed_weights"}[name]
    return (config.get("model") or {}).get(old_key)


def find_result_files(roots: Sequence[Path], exclude: Sequence[Path] = ()) -> list[Path]:
    """Every ``results.json`` under `roots` (folders searched recursively, or the files given),
    except those in the `exclude` folders."""
    files: list[Path] = []
    for root in map(Path, roots):
        if root.is_file():
            files.append(root)
        elif root.is_dir():
            files += sorted(root.rglob(RESULTS_FILE))
        else:
            raise ReportError(f"{root}: no such file or folder")
    return [f for f in files if not any(f.is_relative_to(folder) for folder in exclude)]


def load_run(path: Path) -> Run:
    """Read one ``results.json``; malformed or foreign files are a `ReportError` naming them."""
    try:
        results = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ReportError(f"{path}: cannot read it as JSON ({error})") from error
    if not isinstance(results, dict):
        raise ReportError(f"{path}: expected a JSON object, got {type(results).__name__}")
    missing = [key for key in REQUIRED_KEYS if key not in results]
    if missing:
        raise ReportError(
            f"{path}: not a ner.cli.train results file (missing {', '.join(missing)})"
        )
    if results.get("metric") not in (None, *METRICS):
        raise ReportError(f"{path}: 'metric' must be one of {', '.join(METRICS)}")
    for split in ("dev", "test"):
        scores = results[split]
        if not isinstance(scores, dict) or not (set(METRICS) & set(scores)):
            raise ReportError(f"{path}: {split!r} has no 'f1' (or 'accuracy') score")
    config = results["config"]
    if not isinstance(config, dict) or "name" not in (config.get("data") or {}):
        raise ReportError(f"{path}: its config has no data.name")
    return Run(
        Path(path).parent, corpus_name(config), variant_name(config), results["seed"], results
    )


def flatten(config: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts → {"a.b.c": value}; lists and scalars are leaves."""
    if not isinstance(config, dict):
        return {prefix: config}
    flat: dict[str, Any] = {}
    for key, value in config.items():
        flat.update(flatten(value, f"{prefix}{key}." if isinstance(value, dict) else prefix + key))
    return flat


def _ignored(key: str) -> bool:
    return any(key == name or key.startswith(name + ".") for name in IGNORED_SETTINGS)


def bilm_weights_sha256(run: Run) -> str | None:
    """The sha256 of the biLM weights a run used: recorded by the study runner, else read from
    the run's model archive (``model/archive.json``); None without ELMo or without either."""
    if run.results.get(BILM_SHA256):
        return run.results[BILM_SHA256]
    archive = run.directory / "model" / "archive.json"
    try:
        bilm = json.loads(archive.read_text(encoding="utf-8")).get("bilm") or {}
    except (OSError, json.JSONDecodeError):
        return None
    return (bilm.get("weights") or {}).get("sha256")


def _used_settings(config: dict[str, Any]) -> dict[str, Any]:
    """The config without its ``elmo`` group when the model has no ELMo input: a GloVe-only run
    does not depend on which biLM preset was the default."""
    if uses_elmo(config):
        return config
    return {key: value for key, value in config.items() if key != "elmo"}


def differing_settings(runs: Sequence[Run]) -> dict[str, list[Any]]:
    """Config entries whose values differ between `runs` (one value per run, in order), and the
    biLM weights' sha256 (the same weights path may hold different weights over time)."""
    flats = [
        {
            **flatten(_used_settings(run.results["config"])),
            "bilm_weights_sha256": bilm_weights_sha256(run),
        }
        for run in runs
    ]
    keys = sorted({key for flat in flats for key in flat if not _ignored(key)})
    return {
        key: [flat.get(key) for flat in flats]
        for key in keys
        if len({json.dumps(flat.get(key), sort_keys=True) for flat in flats}) > 1
    }


def load_runs(roots: Sequence[Path], exclude: Sequence[Path] = ()) -> tuple[list[Run], list[str]]:
    """All runs under `roots` but not in `exclude`, one per (corpus, variant, seed), and warnings
    about what was set aside: when a seed was run more than once, the newest ``results.json``
    is used."""
    by_key: dict[tuple[str, str, int], list[tuple[float, Run]]] = {}
    for path in find_result_files(roots, exclude):
        run = load_run(path)
        by_key.setdefault((run.corpus, run.variant, run.seed), []).append(
            (path.stat().st_mtime, run)
        )
    runs, warnings = [], []
    for (corpus, variant, seed), found in sorted(by_key.items()):
        found.sort(key=lambda item: (item[0], str(item[1].directory)))
        newest = found[-1][1]
        runs.append(newest)
        if len(found) > 1:
            older = ", ".join(str(run.directory) for _, run in found[:-1])
            warnings.append(
                f"{corpus}/{variant} seed {seed}: {len(found)} runs; using the newest "
                f"{newest.directory} (set aside: {older})"
            )
    return runs, warnings


def group_runs(runs: Iterable[Run]) -> dict[tuple[str, str], list[Run]]:
    """Runs by (corpus, variant), each group sorted by seed."""
    groups: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        groups.setdefault((run.corpus, run.variant), []).append(run)
    return {key: sorted(group, key=lambda run: run.seed) for key, group in sorted(groups.items())}
