"""A training run from a composed config: data, features, model, training, final evaluation.

Writes into the run dir: ``config.yaml`` (resolved), ``checkpoints/{best,last}.pt``,
``results.json``, ``predictions_{dev,test}.txt`` and the ``model/`` archive. With ``resume``
set it continues a killed run from its ``last.pt`` with that run's saved config.
"""

import logging
import random
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from ner.common.checkpoints import load_checkpoint
from ner.common.errors import MissingFileError
from ner.common.files import write_json, write_text
from ner.common.memory import release_free_memory
from ner.common.paths import checkout_root
from ner.common.schema import ConfigError
from ner.data.labels import TOKENS
from ner.embeddings.pretrained import PretrainedWords, load_pretrained_words
from ner.features.elmo import ElmoFeatures
from ner.model.archive import MAX_BILM_BYTES, BiLMFiles
from ner.model.saving import save_tagger
from ner.model.tagger import Tagger
from ner.tagger.dataset import Vocabularies, check_label_sets, entity_types, tag_list, token_labels
from ner.tagger.model import TaggerModel
from ner.training.adaptation import adapted_elmo
from ner.training.config import TrainConfig, validate
from ner.training.diagnostics import diagnose
from ner.training.evaluation import evaluate_split, score_split
from ner.training.loggers import NullLogger
from ner.training.loop import LoopState, Trainer
from ner.training.setup import (
    CHECKPOINT_VOCABULARIES,
    Corpus,
    EncodedSplit,
    bilm_files,
    encode_split,
    load_splits,
)
from ner.training.unknown_words import SingletonReplacement

logger = logging.getLogger(__name__)


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (CPU and CUDA)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def git_commit() -> str | None:
    """The checkout's HEAD commit (with ``-dirty`` when there are local changes); None when the
    package is installed rather than run from a git checkout."""
    root = checkout_root()
    if root is None:
        return None
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return f"{commit}-dirty" if dirty else commit


def data_sizes(
    cfg: DictConfig, vocabularies: Vocabularies, elmo: ElmoFeatures | None
) -> dict[str, Any]:
    """The `TaggerModel` arguments that come from the data, not the config: the tags, the
    vocabulary sizes and the biLM's output shape (the ``model`` node holds the rest)."""
    glove = bool(cfg.embeddings.glove)
    return {
        "tags": vocabularies.tags,
        "num_words": len(vocabularies.words) if glove else 0,
        "pretrained_words": len(vocabularies.pretrained or ()) if glove else 0,
        "num_chars": len(vocabularies.chars) if cfg.embeddings.char else 0,
        "elmo_dim": elmo.output_dim if elmo is not None else 0,
        "elmo_layers": elmo.num_layers if elmo is not None else 3,
    }


# The scores a model folder keeps of its run's dev and test results (`save_tagger`).
FOLDER_SCORES = ("precision", "recall", "f1", "accuracy")


def save_model(
    run_dir: Path,
    model: TaggerModel,
    cfg: DictConfig,
    prepared: "Prepared",
    scores: dict[str, dict[str, Any]],
) -> None:
    """Write the self-contained ``model/`` directory that `ner.Tagger` and `ner-predict` load,
    with the best epoch's dev and test `FOLDER_SCORES` (`scores`: the run's, per split). An
    adapted biLM is copied into the folder whatever its size: it exists nowhere else."""
    save_tagger(
        run_dir / "model",
        model,
        prepared.vocabularies,
        prepared.bilm,
        corpus_scheme=prepared.corpus.scheme,
        config=OmegaConf.to_container(cfg, resolve=True),
        scores={
            split: {k: v for k, v in found.items() if k in FOLDER_SCORES}
            for split, found in scores.items()
        },
        **({"embed_bilm_max_bytes": MAX_BILM_BYTES} if prepared.adaptation else {}),
    )


def run_dir_and_config(
    cfg: DictConfig, run_dir: Path | None = None
) -> tuple[Path, DictConfig, bool]:
    """The output dir (`run_dir`, else Hydra's) and the config to use; with ``resume=DIR`` that
    run's own saved config."""
    if not cfg.get("resume"):
        return Path(run_dir or HydraConfig.get().runtime.output_dir), cfg, False
    run_dir = Path(cfg.resume).expanduser().resolve()
    saved = run_dir / "config.yaml"
    if not saved.is_file():
        raise MissingFileError(f"resume={cfg.resume}: no config.yaml in {run_dir}")
    if not (run_dir / "checkpoints" / "last.pt").is_file():
        raise MissingFileError(f"resume={cfg.resume}: no checkpoints/last.pt in {run_dir}")
    logger.info("resuming %s with its saved config (other overrides are ignored)", run_dir)
    # Onto the schema's defaults, as plain keys (a run's own `+` keys stay): keys a newer version
    # added take their defaults, interpolated from the saved groups where the schema says so.
    defaults = OmegaConf.create(OmegaConf.to_container(OmegaConf.structured(TrainConfig)))
    return run_dir, OmegaConf.merge(defaults, OmegaConf.load(saved)), True


def make_logger(cfg: DictConfig) -> NullLogger:
    """The configured experiment logger. The W&B runs of one Hydra multirun (seeds, a search)
    share a group, the sweep folder, unless ``logger.group`` is set."""
    if not cfg.logger:
        return NullLogger()
    if cfg.logger.get("group") is None and HydraConfig.initialized():
        hydra_config = HydraConfig.get()
        if hydra_config.mode == RunMode.MULTIRUN:
            return instantiate(cfg.logger, group=str(hydra_config.sweep.dir))
    return instantiate(cfg.logger)


def labels_and_scheme(cfg: DictConfig, corpus: Corpus) -> tuple[list[str], str]:
    """The model's labels in id order and its scheme: chunk tags in ``model.tag_scheme`` for a
    span corpus; for per-token labels every label of the corpus and the scheme ``tokens``."""
    splits = corpus.splits
    if corpus.scheme == TOKENS:
        return token_labels(splits), TOKENS
    if not cfg.model.get("crf", True):
        raise ConfigError(
            f"model.crf=false: {corpus.summary['name']} has chunk tags (spans, "
            f"{corpus.scheme.upper()}), which need the CRF; a softmax per token is for "
            "per-token labels (data.options.labels=tokens)"
        )
    check_label_sets(splits)
    model_scheme = cfg.model.tag_scheme
    return tag_list(entity_types(splits["train"].tags), model_scheme), model_scheme


def train(cfg: DictConfig, run_dir: Path | None = None) -> dict[str, Any]:
    """Train, select on dev F1 (accuracy for per-token labels), evaluate the best epoch on dev
    and test, write the run's files into `run_dir` (None: Hydra's run dir).

    Raises `ConfigError` for a value out of range before anything is read or written."""
    started = time.perf_counter()
    validate(cfg)
    run_dir, cfg, resuming = run_dir_and_config(cfg, run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    if not resuming:
        write_text(run_dir / "config.yaml", OmegaConf.to_yaml(cfg, resolve=True))
    # The logger starts before seeding: W&B's start-up must not shift the training RNG streams.
    run_logger = make_logger(cfg)
    resume_id = None
    if resuming:
        resume_id = load_checkpoint(run_dir / "checkpoints" / "last.pt").get("wandb_run_id")
    run_logger.start(run_dir, OmegaConf.to_container(cfg, resolve=True), resume_id)
    try:
        results = fit_and_evaluate(cfg, run_dir, resuming, run_logger)
        results["time_seconds"]["total"] = time.perf_counter() - started
        write_json(run_dir / "results.json", results)  # last: a finished run's mark
        run_logger.log_final(results)
    finally:
        run_logger.finish()
    return results


@dataclass
class Prepared:
    """The corpus and what the run builds from it before the model: the model's labels and
    scheme, the vocabularies, the pretrained word vectors (until the model holds them), the
    biLM features, the biLM's files, and what adapting it measured (``elmo.adapt``)."""

    corpus: Corpus
    tags: list[str]
    model_scheme: str
    vocabularies: Vocabularies
    pretrained: PretrainedWords | None
    elmo: ElmoFeatures | None
    bilm: BiLMFiles | None = None
    adaptation: dict[str, Any] | None = None

    @property
    def metric(self) -> str:
        """The dev score that selects the best epoch: accuracy for per-token labels, else F1."""
        return "accuracy" if self.model_scheme == TOKENS else "f1"


def prepare_data(cfg: DictConfig, device: torch.device) -> Prepared:
    """Read the corpus, choose the labels, build the vocabularies, load the pretrained words and
    set up the biLM features."""
    corpus = load_splits(OmegaConf.to_container(cfg.data, resolve=True))
    splits = corpus.splits
    tags, model_scheme = labels_and_scheme(cfg, corpus)
    # vocabulary=all: train+dev+test text, AllenNLP's transductive setting (published numbers).
    vocabulary_splits = splits.values() if cfg.embeddings.vocabulary == "all" else [splits["train"]]
    vocabularies = Vocabularies.build(
        [s for split in vocabulary_splits for s in split.tokens],
        tags,
        max_chars=cfg.embeddings.char.max_chars if cfg.embeddings.char else 50,
    )
    pretrained = None
    glove = cfg.embeddings.glove
    # glove.source null: word embeddings trained from a random init (no pretrained vectors).
    if glove and glove.source:
        pretrained = load_pretrained_words(
            glove.source,
            vocabularies.words,
            dim=glove.dim,
            seed=cfg.seed,
            member=glove.member,
            sha256=glove.sha256,
        )
        vocabularies.pretrained = pretrained.extension  # dev/test words are looked up as new text
    if cfg.elmo is None:
        return Prepared(corpus, tags, model_scheme, vocabularies, pretrained, None)
    elmo_config, adaptation = adapted_elmo(  # on the training sentences only
        OmegaConf.to_container(cfg.elmo, resolve=True),
        OmegaConf.to_container(cfg.trainer, resolve=True),
        splits["train"].tokens,
        progress=bool(cfg.progress),
    )
    elmo = ElmoFeatures(
        elmo_config, cache=cfg.elmo.cache, device=device, progress=bool(cfg.progress)
    )
    bilm = bilm_files(elmo_config)
    return Prepared(corpus, tags, model_scheme, vocabularies, pretrained, elmo, bilm, adaptation)


def encode_splits(prepared: Prepared) -> dict[str, EncodedSplit]:
    """Every split as the model's examples (with their biLM layers, computed or cached)."""
    corpus = prepared.corpus
    return {
        name: encode_split(
            split, prepared.vocabularies, corpus.scheme, prepared.model_scheme, prepared.elmo
        )
        for name, split in corpus.splits.items()
    }


def build_model(
    cfg: DictConfig, prepared: Prepared, resuming: bool
) -> tuple[TaggerModel, dict[str, Any]]:
    """The seeded, initialised model and its config; the pretrained vectors move into it (a
    resumed run gets them from its checkpoint) and are released from `prepared`."""
    sizes = data_sizes(cfg, prepared.vocabularies, prepared.elmo)
    # Seeded here, after the features: whether the biLM had to be loaded (a cache miss) must
    # not change the model's initialisation or the dropout stream.
    seed_everything(cfg.seed)
    # tag_scheme: per-token labels are "tokens", whatever the config says
    model: TaggerModel = instantiate(
        cfg.model, _convert_="all", tag_scheme=prepared.model_scheme, **sizes
    )
    pretrained, prepared.pretrained = prepared.pretrained, None
    if pretrained is not None:
        model.set_pretrained_rows(pretrained.initial, pretrained.found_rows, copy=not resuming)
        if model.pretrained_words is not None and not resuming:  # None: no word beyond training
            model.pretrained_words.copy_(pretrained.vectors)
    del pretrained  # the frozen vectors live on in the model, their words in the vocabularies
    release_free_memory()  # what reading the corpus and splitting the GloVe table left free
    return model, model.config


def anchor_weight(cfg: DictConfig) -> float:
    """The weight of the word anchor penalty: ``embeddings.glove.anchor_weight`` with
    ``tuning=anchored``, else 0."""
    glove = cfg.embeddings.glove
    return float(glove.anchor_weight) if glove and glove.tuning == "anchored" else 0.0


def unknown_word_replacement(cfg: DictConfig, prepared: Prepared) -> SingletonReplacement | None:
    """Words seen once in training, replaced by the unknown word with the configured
    probability (``embeddings.unknown_replacement``; None: off, or no word embeddings)."""
    if not (cfg.embeddings.glove and cfg.embeddings.unknown_replacement > 0):
        return None
    return SingletonReplacement.from_sentences(
        prepared.corpus.splits["train"].tokens,
        prepared.vocabularies.words,
        cfg.embeddings.unknown_replacement,
    )


def make_trainer(cfg: DictConfig, run_dir: Path, run_logger: NullLogger) -> Trainer:
    """The training loop of the ``trainer`` node (`Trainer`'s arguments, a Hydra partial) with
    what the run's other groups give it; it sets the CPU threads and picks the device."""
    make = instantiate(cfg.trainer)
    return make(
        run_dir=run_dir,
        batch_size=cfg.data.batch_size,
        mix_l2=cfg.elmo.mix.l2 if cfg.elmo else 0.0,
        anchor_weight=anchor_weight(cfg),
        seed=cfg.seed,
        run_logger=run_logger,
        progress=bool(cfg.progress),
    )


def setup_trainer(
    trainer: Trainer,
    cfg: DictConfig,
    model: TaggerModel,
    config: dict[str, Any],
    prepared: Prepared,
) -> None:
    """Hand `trainer` the model, with what each checkpoint must hold to rebuild it."""
    trainer.setup(
        model,
        metric=prepared.metric,
        unknown_words=unknown_word_replacement(cfg, prepared),
        extra_state={
            "model_config": config,
            CHECKPOINT_VOCABULARIES: prepared.vocabularies.to_json(),
            "corpus_scheme": prepared.corpus.scheme,
            # An adapted biLM lives in the data folder's cache: ner-evaluate reads it from here.
            **({"bilm": asdict(prepared.bilm)} if prepared.adaptation else {}),
        },
    )


def dev_scorer(
    model: TaggerModel,
    prepared: Prepared,
    encoded: dict[str, EncodedSplit],
    cfg: DictConfig,
    trainer: Trainer,
) -> Callable[[TaggerModel], dict[str, Any]]:
    """Scores dev after an epoch, on the cached biLM layers: F1 or accuracy selects the epoch."""
    validation = encoded["validation"]

    def score(_: TaggerModel) -> dict[str, Any]:
        return evaluate_split(
            model,
            prepared.corpus.splits["validation"],
            validation.examples,
            validation.make_batch,
            corpus_scheme=prepared.corpus.scheme,
            model_scheme=prepared.model_scheme,
            batch_size=trainer.eval_batch_size,
            device=trainer.device,
            progress=bool(cfg.progress),
        )

    return score


def evaluate_best_epoch(
    cfg: DictConfig, model: TaggerModel, prepared: Prepared, run_dir: Path, trainer: Trainer
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The best epoch's model (``best.pt``) scored on dev and test as ner-predict and
    ner-evaluate run it (a `Tagger`), writing the predictions; returns the dev and test scores."""
    model.load_state_dict(load_checkpoint(run_dir / "checkpoints" / "best.pt")["model"])
    corpus = prepared.corpus
    tagger = Tagger(
        model,
        prepared.vocabularies,
        prepared.bilm,
        device=trainer.device,
        corpus_scheme=corpus.scheme,
    )
    dev, test = (
        score_split(
            tagger,
            corpus.splits[name],
            corpus.scheme,
            batch_size=trainer.eval_batch_size,
            predictions_file=run_dir / f"predictions_{short}.txt",
        )
        for name, short in (("validation", "dev"), ("test", "test"))
    )
    return dev, test


def run_results(
    cfg: DictConfig,
    prepared: Prepared,
    state: LoopState,
    scores: dict[str, dict[str, Any]],
    model: TaggerModel,
    times: dict[str, float],
    commit: str | None,
) -> dict[str, Any]:
    """The content of ``results.json`` (``time_seconds.total`` is added when the run ends)."""
    corpus, splits = prepared.corpus, prepared.corpus.splits
    dev, test = scores["dev"], scores["test"]
    warnings = diagnose(
        state.history,
        dev,
        best_epoch=state.best_epoch,
        epochs_run=state.epoch,
        train_sentences=len(splits["train"].tokens),
        scheme=corpus.scheme,
    )
    return {
        "dev": dev,
        "test": test,
        "best_epoch": state.best_epoch,
        "epochs_run": state.epoch,
        "stopped_early": state.stopped_early,
        "seed": cfg.seed,
        "corpus_scheme": corpus.scheme,
        "model_scheme": prepared.model_scheme,
        "labels": "tokens" if prepared.model_scheme == TOKENS else "spans",
        "metric": prepared.metric,
        "sentences": {name: len(s.tokens) for name, s in splits.items()},
        "tokens": {name: s.num_tokens for name, s in splits.items()},
        "data": corpus.summary,
        "warnings": warnings,
        "time_seconds": {
            "prepare_data": times["prepare_data"],
            "elmo_features": times["elmo_features"],
            "train": state.train_seconds,
            "dev_eval_during_training": state.dev_seconds,
            "final_eval": times["final_eval"],
        },
        "train_tokens_per_second": state.train_tokens / max(state.train_seconds, 1e-9),
        "elmo_mix": model.mix_summary(),
        "elmo_adaptation": prepared.adaptation,
        "history": state.history,
        "git_commit": commit,
        "config": OmegaConf.to_container(cfg, resolve=True),
    }


def log_best(results: dict[str, Any], run_dir: Path) -> None:
    """One line: the best epoch and its dev and test scores."""
    dev, test = results["dev"], results["test"]
    epochs = (results["best_epoch"], results["epochs_run"])
    if results["metric"] == "accuracy":
        logger.info(
            "best epoch %d/%d: dev accuracy %.2f, test accuracy %.2f → %s",
            *(*epochs, dev["accuracy"], test["accuracy"], run_dir),
        )
    else:
        logger.info(
            "best epoch %d/%d: dev F1 %.2f, test F1 %.2f (strict %.2f) → %s",
            *(*epochs, dev["f1"], test["f1"], test["strict"]["f1"], run_dir),
        )


def fit_and_evaluate(
    cfg: DictConfig, run_dir: Path, resuming: bool, run_logger: NullLogger
) -> dict[str, Any]:
    """Build data, features and model from `cfg`, train, and score the best epoch."""
    started = time.perf_counter()
    commit = git_commit()  # the code that runs, before anyone can commit during a long run
    trainer = make_trainer(cfg, run_dir, run_logger)  # sets the threads, picks the device
    prepared = prepare_data(cfg, trainer.device)
    prepared_at = time.perf_counter()
    encoded = encode_splits(prepared)
    features_at = time.perf_counter()
    model, config = build_model(cfg, prepared, resuming)
    setup_trainer(trainer, cfg, model, config, prepared)
    if resuming:
        trainer.resume()
    train_split = encoded["train"]
    state = trainer.fit(
        train_split.examples,
        train_split.make_batch,
        dev_scorer(model, prepared, encoded, cfg, trainer),
    )
    evaluated_at = time.perf_counter()
    dev, test = evaluate_best_epoch(cfg, model, prepared, run_dir, trainer)
    times = {
        "prepare_data": prepared_at - started,
        "elmo_features": features_at - prepared_at,
        "final_eval": time.perf_counter() - evaluated_at,
    }
    scores = {"dev": dev, "test": test}
    results = run_results(cfg, prepared, state, scores, model, times, commit)
    log_best(results, run_dir)
    save_model(run_dir, model, cfg, prepared, scores)
    return results
