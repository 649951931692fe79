"""Adapting a biLM to the user's text: continued pretraining on given sentences, cached.

Task-adaptive pretraining continues an existing biLM (options.json + weights.hdf5, any shape the
tagger reads) on the training split's sentences, domain-adaptive pretraining on those plus text
files the user names (one whitespace-tokenized sentence per line) or named pretraining sources
(``reuters``, ``webtext``, …: `ner.pretrain.sources.SOURCES`, prepared as `ner-pretrain` does).
It is the pretraining run of `ner.pretrain.trainer` started from the biLM
(``pretrain.init_from``), with a fresh softmax over the adaptation text's vocabulary: published
weights carry none. The adapted biLM is exported in the AllenNLP format.

Entries live in ``data_dir()/elmo_adapted/<fingerprint>/``, named by a digest of the base biLM's
files, the text and the settings, and are built once (under a lock, so the seeds of a multirun
share one) and checked against their recorded digests when read: a damaged entry is rebuilt,
never used. The run trains in ``<fingerprint>.work/`` beside it, so a killed adaptation resumes
from its checkpoint on the next call.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from ner.common.downloads import sha256_file
from ner.common.files import write_json
from ner.common.keyed_cache import key_digest, open_or_build
from ner.common.paths import data_dir
from ner.common.verified import digests_match, record_digests
from ner.pretrain.config import PretrainConfig, validate
from ner.pretrain.corpus import CorpusError, is_heldout, prepare_source, read_sentences
from ner.pretrain.trainer import HELDOUT_LOG, train

logger = logging.getLogger(__name__)

CACHE_FOLDER = "elmo_adapted"
METADATA = "adaptation.json"
TASK_TEXT = "task_sentences.txt"  # the given sentences, written into the work folder
# What an entry's metadata keeps of the pretraining run's metrics.json.
RECORDED_METRICS = (
    "steps",
    "tokens_seen",
    "train_seconds",
    "precision",
    "vocab_size",
    "train_tokens",
    "heldout_tokens",
)
FORMAT = 1  # bump when the same inputs would build a different entry


class AdaptTextError(CorpusError):
    """Adaptation text that cannot be used; the message names the file."""


@dataclass(frozen=True)
class AdaptSettings:
    """How a biLM is adapted: the fresh softmax trains alone for `softmax_warmup_steps` (the
    held-out perplexity at its end is the "before" figure), then the biLM and softmax together
    for `steps` updates, Adam at `lr` (the biLM at `bilm_lr_scale` times it) with a linear
    warm-up and decay, each update on
    `batch_size` streams (fewer when the text is short) × `unroll_steps` positions. Every field
    but those in `RUNTIME` is part of the cache fingerprint."""

    steps: int = 600
    softmax_warmup_steps: int = 100
    batch_size: int = 64
    unroll_steps: int = 20
    lr: float = 0.001
    bilm_lr_scale: float = 1.0
    warmup_steps: int = 50
    n_negative_samples: int = 2048
    dropout: float = 0.1
    heldout_per_mille: int = 50  # of the text, by a hash of each sentence, for perplexity
    vocab_max_size: int = 50000
    vocab_min_count: int = 2
    max_sentence_tokens: int = 400  # longer given sentences are cut; a longer file line fails
    seed: int = 1
    # Runtime only (not in the fingerprint): they change how fast, not what is built.
    checkpoint_minutes: float = 2.0
    progress: bool = True
    threads: int | str | None = "auto"
    device: str = "auto"
    precision: str = "auto"

    RUNTIME = ("checkpoint_minutes", "progress", "threads", "device", "precision")

    def fingerprint(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k not in self.RUNTIME}


@dataclass
class AdaptedBiLM:
    """An adapted biLM's files in its cache entry, and what its adaptation measured."""

    options: Path
    weights: Path
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def open(cls, folder: Path) -> AdaptedBiLM | None:
        """The entry in `folder` when its files match their recorded digests, else None."""
        if not digests_match(folder):
            return None
        metadata = json.loads((folder / METADATA).read_text(encoding="utf-8"))
        return cls(folder / "options.json", folder / "weights.hdf5", metadata)


@dataclass
class TextStats:
    """What the adaptation text holds: train and held-out positions (tokens + `<S>`, `</S>`)."""

    sentences: int = 0
    tokens: int = 0
    train_positions: int = 0
    heldout_positions: int = 0

    def add(self, tokens: Sequence[str], per_mille: int) -> None:
        self.sentences += 1
        self.tokens += len(tokens)
        if is_heldout(tokens, per_mille):
            self.heldout_positions += len(tokens) + 2
        else:
            self.train_positions += len(tokens) + 2


def task_lines(sentences: Sequence[Sequence[str]], max_tokens: int) -> Iterator[str]:
    """`sentences` as text lines; longer ones cut into pieces of `max_tokens` tokens."""
    for sentence in sentences:
        words = " ".join(sentence).split()  # a token holding whitespace becomes several
        for start in range(0, len(words), max_tokens):
            yield " ".join(words[start : start + max_tokens]) + "\n"


def task_digest(sentences: Sequence[Sequence[str]], max_tokens: int) -> str:
    """The sha256 of the text file `write_task_text` writes, without writing it."""
    digest = hashlib.sha256()
    for line in task_lines(sentences, max_tokens):
        digest.update(line.encode("utf-8"))
    return digest.hexdigest()


def write_task_text(sentences: Sequence[Sequence[str]], path: Path, max_tokens: int) -> None:
    """`sentences` as a text file of the pretraining corpus, one per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        out.writelines(task_lines(sentences, max_tokens))


def text_path(text: str | Path, max_sentence_tokens: int) -> Path:
    """The file of an adaptation text: a named pretraining source, tokenized and cached once
    (`prepare_source`, without evaluation sentences), else the path as given."""
    from ner.pretrain.sources import SOURCES

    if isinstance(text, str) and text in SOURCES:
        try:
            return prepare_source(text, max_sentence_tokens)
        except CorpusError as error:
            raise AdaptTextError(f"adaptation text: {error}") from None
    return Path(text).expanduser()


def text_stats(paths: Sequence[Path], settings: AdaptSettings) -> TextStats:
    """Read every file once: their sizes in sentences and positions, and one line naming the
    file for text that is empty, binary or not UTF-8 (`AdaptTextError`)."""
    stats = TextStats()
    for path in paths:
        try:
            for tokens in read_sentences(path, settings.max_sentence_tokens):
                stats.add(tokens, settings.heldout_per_mille)
        except CorpusError as error:
            raise AdaptTextError(f"adaptation text: {error}") from None
        except OSError as error:
            raise AdaptTextError(f"adaptation text {path}: {error.strerror}") from None
    return stats


def stream_count(stats: TextStats, settings: AdaptSettings) -> int:
    """How many streams the text fills (at most `settings.batch_size`); `AdaptTextError` when it
    cannot fill one batch or hold out one window for perplexity."""
    unroll = settings.unroll_steps
    streams = min(settings.batch_size, (stats.train_positions - 1) // unroll)
    if streams < 1 or stats.heldout_positions <= unroll:
        raise AdaptTextError(
            f"adaptation text too short: {stats.sentences} sentences, {stats.tokens} tokens "
            f"({stats.train_positions} positions to train on, {stats.heldout_positions} held "
            f"out); it needs more than {unroll} of each"
        )
    return streams


def pretrain_config(
    base: tuple[Path, Path],
    sources: Sequence[Path],
    settings: AdaptSettings,
    streams: int,
    output_dir: Path,
) -> DictConfig:
    """The `ner.pretrain.trainer` config of the adaptation: continue `base` on `sources`."""
    cfg = OmegaConf.structured(PretrainConfig)
    cfg.corpus.sources = [str(path) for path in sources]
    cfg.corpus.heldout_per_mille = settings.heldout_per_mille
    cfg.corpus.max_sentence_tokens = settings.max_sentence_tokens
    cfg.vocab.max_size, cfg.vocab.min_count = settings.vocab_max_size, settings.vocab_min_count
    run = cfg.pretrain
    run.output_dir = str(output_dir)
    run.max_steps = settings.softmax_warmup_steps + settings.steps
    run.softmax_warmup_steps = settings.softmax_warmup_steps
    run.batch_size = streams
    run.unroll_steps = run.eval_unroll_steps = settings.unroll_steps
    run.n_negative_samples = settings.n_negative_samples
    run.dropout = settings.dropout
    run.optimizer.lr = settings.lr
    run.bilm_lr_scale = settings.bilm_lr_scale
    run.optimizer.fused = True
    run.warmup_steps = settings.warmup_steps
    run.eval_every = None
    run.checkpoint_minutes = settings.checkpoint_minutes
    run.progress = settings.progress
    run.seed = settings.seed
    run.threads = None if settings.threads is None else str(settings.threads)
    run.device = settings.device
    run.precision = settings.precision
    run.init_from = {"options": str(base[0]), "weights": str(base[1])}
    validate(cfg)
    return cfg


def adaptation_key(
    base: tuple[Path, Path], task: str, texts: Sequence[Path], settings: AdaptSettings
) -> dict[str, Any]:
    """Everything an adapted biLM depends on: the base files', the text's and the settings'."""
    return {
        "format": FORMAT,
        "base": [sha256_file(path) for path in base],
        "task_text": task,
        "texts": [sha256_file(path) for path in texts],
        "settings": settings.fingerprint(),
    }


@dataclass
class Adaptation:
    """One adaptation to build into its cache entry `folder`: the base biLM, the text and
    settings."""

    base: tuple[Path, Path]
    sentences: Sequence[Sequence[str]]
    texts: list[Path]
    settings: AdaptSettings
    streams: int
    folder: Path

    @property
    def work(self) -> Path:
        """Where the pretraining run trains and keeps its checkpoint, beside the entry."""
        return self.folder.with_name(self.folder.name + ".work")

    def build(self, staging: Path) -> None:
        """Train (or resume) in the work folder, then put the export and its record in
        `staging`."""
        if self.folder.exists():  # there, but its files do not match their digests
            logger.warning("%s: damaged adapted biLM, adapting again", self.folder)
        sources = list(self.texts)
        if self.sentences:
            write_task_text(
                self.sentences, self.work / TASK_TEXT, self.settings.max_sentence_tokens
            )
            sources.insert(0, self.work / TASK_TEXT)
        cfg = pretrain_config(self.base, sources, self.settings, self.streams, self.work)
        logger.info(
            "adapting the biLM %s on %d given sentences and %d text files (%d streams): its "
            "weights carry no softmax, so a fresh one over the adaptation text's vocabulary "
            "trains alone for %d steps, then the biLM with it for %d",
            *(self.base[1], len(self.sentences), len(self.texts), self.streams),
            *(self.settings.softmax_warmup_steps, self.settings.steps),
        )
        metrics = train(cfg)
        for name in ("options.json", "weights.hdf5"):
            shutil.copyfile(self.work / name, staging / name)
        write_json(staging / METADATA, self.record(metrics), indent=2)
        record_digests(staging)

    def perplexity_before(self) -> dict[str, float] | None:
        """The held-out perplexities at the end of the softmax warm-up, of the biLM as it was
        (the last such row: a resumed run may have evaluated it twice); None without one."""
        log = self.work / HELDOUT_LOG
        rows = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        ends = [row for row in rows if row["step"] == self.settings.softmax_warmup_steps]
        if not ends:
            return None
        return {
            "forward": ends[-1]["heldout_forward_ppl"],
            "backward": ends[-1]["heldout_backward_ppl"],
        }

    def record(self, metrics: dict[str, Any]) -> dict[str, Any]:
        """The entry's metadata: what was adapted on what, and the held-out perplexities."""
        return {
            "base": {"options": str(self.base[0]), "weights": str(self.base[1])},
            "texts": [str(path) for path in self.texts],
            "task_sentences": len(self.sentences),
            "settings": asdict(self.settings),
            "perplexity_before": self.perplexity_before(),
            "perplexity_after": metrics["perplexity"],
            **{key: metrics[key] for key in RECORDED_METRICS},
        }


def adapt_bilm(
    base: tuple[str | Path, str | Path],
    sentences: Sequence[Sequence[str]],
    texts: Sequence[str | Path] = (),
    settings: AdaptSettings | None = None,
    cache_dir: Path | None = None,
) -> AdaptedBiLM:
    """The biLM `base` continued on `sentences` and the text files `texts`, from the cache or
    built into it.

    # Parameters
    base: the local options.json and weights.hdf5 of the biLM to adapt.
    sentences: tokenized sentences (the training split's: task-adaptive pretraining).
    texts: files of one whitespace-tokenized sentence per line or names of pretraining sources
        (domain-adaptive pretraining); one that is empty, binary or not UTF-8 raises
        `AdaptTextError` naming it.
    settings: the adaptation's (default `AdaptSettings()`).
    cache_dir: where entries live (default ``data_dir()/elmo_adapted``).
    """
    settings = settings or AdaptSettings()
    base = (Path(base[0]), Path(base[1]))
    paths = [text_path(text, settings.max_sentence_tokens) for text in texts]
    stats = text_stats(paths, settings)
    for line in task_lines(sentences, settings.max_sentence_tokens):
        stats.add(line.split(), settings.heldout_per_mille)
    streams = stream_count(stats, settings)
    task = task_digest(sentences, settings.max_sentence_tokens)
    key = adaptation_key(base, task, paths, settings)
    folder = Path(cache_dir or data_dir() / CACHE_FOLDER) / key_digest(key)
    adaptation = Adaptation(base, sentences, paths, settings, streams, folder)
    entry = open_or_build(folder, AdaptedBiLM.open, adaptation.build, lambda d, _: open_entry(d))
    shutil.rmtree(adaptation.work, ignore_errors=True)  # the checkpoint of a finished adaptation
    return entry


def open_entry(folder: Path) -> AdaptedBiLM:
    """The entry just built in `folder` (its digests were recorded a moment ago)."""
    entry = AdaptedBiLM.open(folder)
    if entry is None:
        raise CorpusError(f"{folder}: the adapted biLM was changed while it was written")
    return entry
