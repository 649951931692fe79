"""Training and evaluation from Python, with the configs and steps of the command line.

`train` composes ``conf/train.yaml`` (shipped as ``ner.conf``) with Hydra's compose API and the
overrides ``ner-train`` would take, then runs `ner.training.run.train`: the same run folder,
``config.yaml``, ``results.json`` and ``model/``. `evaluate` scores a run as ``ner-evaluate``
does, or a model (a folder, a shipped name or a `Tagger`) on a split of any corpus::

    import ner
    run = ner.train(overrides=["data.name=mydata.tsv", "data.options.holdout=0.1"])
    print(run.results["test"]["f1"], ner.evaluate(run, corpus="other.tsv")["f1"])
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_module
from omegaconf import DictConfig, OmegaConf, open_dict

from ner.common.errors import InputError
from ner.model.cards import score_split
from ner.model.tagger import Tagger
from ner.training import run
from ner.training.reevaluate import evaluate_run


@dataclass
class TrainedRun:
    """A finished training run: its ``results.json`` content, its folder and its tagger."""

    results: dict[str, Any]
    run_dir: Path
    tagger: Tagger


def compose_config(overrides: Sequence[str] = ()) -> DictConfig:
    """The config ``ner-train OVERRIDES`` runs with, Hydra's own settings (``hydra.run.dir``)
    included."""
    with initialize_config_module("ner.conf", version_base="1.3"):
        return compose("train", overrides=list(overrides), return_hydra_config=True)


def train(
    config: DictConfig | Mapping[str, Any] | None = None,
    *,
    overrides: Sequence[str] = (),
    run_dir: str | Path | None = None,
) -> TrainedRun:
    """Train a tagger as ``ner-train`` does and load it.

    # Parameters
    config: a whole training config (`compose_config`'s, or a run's ``config.yaml``); None
        composes one from `overrides`.
    overrides: ``ner-train``'s command-line overrides (``experiment=...``, ``data.name=...``).
    run_dir: where the run's files go; default: the config's ``hydra.run.dir``
        (``outputs/<date>/<time>``, as for ``ner-train``).
    """
    if config is not None and overrides:
        raise InputError("ner.train: pass a config or overrides, not both")
    cfg = compose_config(overrides) if config is None else OmegaConf.create(dict(config))
    if run_dir is None:
        hydra = cfg.hydra if "hydra" in cfg else compose_config().hydra
        run_dir = hydra.run.dir
    if "hydra" in cfg:
        with open_dict(cfg):
            del cfg["hydra"]
    results = run.train(cfg, Path(run_dir))
    return TrainedRun(results, Path(run_dir), Tagger.load(Path(run_dir) / "model"))


def evaluate(
    run_or_model: TrainedRun | Tagger | str | Path,
    corpus: str | None = None,
    *,
    split: str = "test",
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Scores (seqeval F1, per type, strict; accuracy for per-token labels) of a run or model
    on `split` of `corpus`.

    # Parameters
    run_or_model: a `TrainedRun` or a run folder (scored as ``ner-evaluate`` scores it, on its
        own corpus when `corpus` is None), or a model: a `Tagger`, a model folder or a shipped
        model's name (`corpus` required).
    corpus: a corpus name, folder or file, read with `options` (``data.options``: ``format``,
        ``columns``, ``holdout``, ...).
    split: ``train``, ``validation`` or ``test``.
    """
    if isinstance(run_or_model, TrainedRun):
        run_or_model = run_or_model.run_dir
    if not isinstance(run_or_model, Tagger) and (Path(run_or_model) / "config.yaml").is_file():
        options = dict(options or {})
        return evaluate_run(Path(run_or_model), split=split, corpus=corpus, corpus_options=options)
    if corpus is None:
        raise InputError(f"ner.evaluate: {run_or_model} is a model, not a run; name a corpus")
    tagger = run_or_model if isinstance(run_or_model, Tagger) else Tagger.load(run_or_model)
    return score_split(tagger, corpus, split, options)
