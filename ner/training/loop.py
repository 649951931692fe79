"""The training loop: Adam + grad-norm clipping, early stopping on dev F1 (token accuracy for
per-token labels), checkpoints, resume.

Every epoch ends with ``last.pt`` (model, optimizer, scheduler, loop state and every RNG) and,
when dev F1 improves, ``best.pt``. Dev F1 is scored after every `eval_every`-th epoch and after
the last one; patience counts epochs since the best one. Batch order comes from a generator
seeded with (seed, epoch), so a run resumed from ``last.pt`` continues exactly as the
uninterrupted run would have.

Ctrl-C or SIGTERM saves ``last.pt`` after the current batch (with the position inside the
epoch) and raises `TrainingInterrupted`. A NaN or inf loss or gradient stops training with
`TrainingDiverged` before the optimizer step, so no checkpoint ever holds a non-finite model.
"""

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from ner.common.batching import length_batches
from ner.common.checkpoints import load_checkpoint, save_checkpoint
from ner.common.errors import NerError
from ner.common.memory import release_free_memory
from ner.common.threads import cpu_threads, pick_device
from ner.tagger.batch import TaggerBatch
from ner.tagger.dataset import Example
from ner.tagger.model import TaggerModel
from ner.training.interrupt import StopRequest, TrainingInterrupted, stop_requests
from ner.training.loggers import NullLogger
from ner.training.rng import capture_rng_state, restore_rng_state
from ner.training.unknown_words import SingletonReplacement

logger = logging.getLogger(__name__)

# The dev scores logged per epoch for each selection metric (W&B keys ``dev/<name>``).
DEV_METRICS = {"f1": ("f1", "precision", "recall"), "accuracy": ("accuracy",)}
METRIC_NAMES = {"f1": "F1", "accuracy": "accuracy"}


@dataclass
class LoopState:
    """Where training stands; saved in every checkpoint."""

    epoch: int = 0
    best_f1: float = -1.0  # the best dev score of the selection metric (F1 or accuracy)
    best_epoch: int = 0
    epochs_without_improvement: int = 0
    train_seconds: float = 0.0
    dev_seconds: float = 0.0
    train_tokens: int = 0
    history: list[dict[str, float]] = field(default_factory=list)
    stopped_early: bool = False
    # Progress inside an epoch that a signal interrupted (all zero at an epoch boundary).
    epoch_batches: int = 0
    epoch_loss: float = 0.0
    epoch_tokens: int = 0


class TrainingDiverged(NerError, ArithmeticError):
    """The loss or a gradient became NaN or inf; the last good checkpoint is left as it was."""


class Trainer:
    """Trains a `TaggerModel` on examples, selecting the epoch with the best dev F1.

    Built from the ``trainer`` config node (a Hydra partial of these arguments; the defaults
    written here are the config's) with the run's other settings, before the model: it sets
    torch's CPU threads and picks the device the run computes on. `setup` then hands it the
    model, `fit` trains it.

    # Parameters
    optimizer: builds the optimizer from the trainable parameters (``trainer.optimizer``).
    scheduler: builds the learning-rate schedule from the optimizer (None: a constant rate).
    max_epochs: the most epochs to train.
    patience: stop after this many epochs without a better dev score (None: never).
    eval_every: score dev after every this many epochs (and after the last), so that tiny
        training sets can run many short epochs without paying for a dev pass after each.
    grad_norm: clip the global gradient norm to this (None: no clipping).
    max_batch_tokens: a batch with more padded positions (rows × longest sentence) runs forward
        and backward in row chunks below it before its one optimizer step (None: one pass).
    eval_batch_size: sentences per batch when the run scores dev and test.
    device: ``auto`` (CUDA when available), ``cpu``, ``cuda`` or ``cuda:N``.
    num_threads: torch CPU threads, a number or ``auto`` (`ner.common.threads.cpu_threads`).
    run_dir: checkpoints go to its ``checkpoints/``.
    batch_size: sentences per training batch.
    mix_l2: the penalty on the ELMo mix's pre-softmax weights (0: none).
    anchor_weight: the weight of `TaggerModel.anchor_penalty` (0: none).
    seed: the batch order's and the unknown-word draws' seed.
    run_logger: the experiment logger (None: none).
    progress: tqdm bars.
    """

    def __init__(
        self,
        *,
        optimizer: Callable[[list[torch.nn.Parameter]], torch.optim.Optimizer],
        scheduler: Callable[[torch.optim.Optimizer], Any] | None = None,
        max_epochs: int = 75,
        patience: int | None = 25,
        eval_every: int = 1,
        grad_norm: float | None = 5.0,
        max_batch_tokens: int | None = 4096,
        eval_batch_size: int = 256,
        device: str = "auto",
        num_threads: int | str = "auto",
        run_dir: Path,
        batch_size: int,
        mix_l2: float = 0.0,
        anchor_weight: float = 0.0,
        seed: int = 1,
        run_logger: NullLogger | None = None,
        progress: bool = True,
    ) -> None:
        self.make_optimizer, self.make_scheduler = optimizer, scheduler
        self.checkpoints = Path(run_dir) / "checkpoints"
        self.max_epochs, self.patience, self.grad_norm = max_epochs, patience, grad_norm
        self.mix_l2, self.batch_size, self.seed = mix_l2, batch_size, seed
        self.anchor_weight, self.eval_batch_size = anchor_weight, eval_batch_size
        self.max_batch_tokens, self.eval_every = max_batch_tokens, eval_every
        self.run_logger = run_logger if run_logger is not None else NullLogger()
        self.device, self.progress = pick_device(str(device)), progress
        torch.set_num_threads(cpu_threads(num_threads))
        self.state = LoopState()
        self.stop = StopRequest()

    def setup(
        self,
        model: TaggerModel,
        *,
        metric: str = "f1",
        unknown_words: SingletonReplacement | None = None,
        extra_state: dict[str, Any] | None = None,
    ) -> None:
        """Take the model to train: onto the device, with its optimizer and schedule.

        # Parameters
        model: the initialised model.
        metric: the dev score that selects the best epoch and drives early stopping, ``f1``
            or ``accuracy`` (per-token labels).
        unknown_words: replaces singleton words by the unknown id in training batches (None:
            no replacement).
        extra_state: plain values stored with each checkpoint (model config, vocabularies) so
            that a checkpoint alone rebuilds the model.
        """
        if metric not in DEV_METRICS:
            raise ValueError(f"unknown metric {metric!r}; expected one of {sorted(DEV_METRICS)}")
        self.metric, self.unknown_words = metric, unknown_words
        self.extra_state = extra_state if extra_state is not None else {}
        self.model = model.to(self.device)
        self.optimizer = self.make_optimizer([p for p in model.parameters() if p.requires_grad])
        self.scheduler = self.make_scheduler(self.optimizer) if self.make_scheduler else None

    def resume(self) -> None:
        """Continue from ``last.pt`` of the run dir (after `setup`)."""
        saved = load_checkpoint(self.checkpoints / "last.pt")
        self.model.load_state_dict(saved["model"])
        self.optimizer.load_state_dict(saved["optimizer"])
        if self.scheduler is not None and saved.get("scheduler") is not None:
            self.scheduler.load_state_dict(saved["scheduler"])
        self.state = LoopState(**saved["loop"])
        restore_rng_state(saved["rng"])
        logger.info(
            "resumed after epoch %d (best dev %s %.2f)",
            self.state.epoch,
            METRIC_NAMES[self.metric],
            self.state.best_f1,
        )

    def _checkpoint(self, name: str, full: bool) -> None:
        content = {**self.extra_state, "model": self.model.state_dict(), "loop": asdict(self.state)}
        if full:
            content.update(
                optimizer=self.optimizer.state_dict(),
                scheduler=self.scheduler.state_dict() if self.scheduler is not None else None,
                rng=capture_rng_state(),
                wandb_run_id=self.run_logger.run_id,
            )
        save_checkpoint(self.checkpoints / name, content)

    def _diverged(self, what: str, batch_number: int) -> TrainingDiverged:
        kept = (
            f"the last good checkpoint ({self.checkpoints / 'last.pt'}, epoch "
            f"{self.state.epoch}) is kept"
            if (self.checkpoints / "last.pt").is_file()
            else "no checkpoint was written"
        )
        return TrainingDiverged(
            f"training stopped: the {what} became NaN or inf in epoch {self.state.epoch + 1}, "
            f"batch {batch_number}; {kept} and no model or results are written. Lower the "
            "learning rate (trainer.optimizer.lr), set trainer.grad_norm, or check the inputs "
            "(a biLM with huge or broken values?)"
        )

    def _train_epoch(
        self, examples: Sequence[Example], make_batch: Callable[[list[Example]], TaggerBatch]
    ) -> tuple[float, int]:
        """One pass over the batches; returns the summed CRF loss (without the mix penalty, so
        that it stays comparable across `mix_l2` settings) and the number of tokens. An epoch
        interrupted by a signal continues at the batch after the last one it finished."""
        generator = np.random.default_rng([self.seed, self.state.epoch])
        lengths = [len(e.words) for e in examples]
        batches = length_batches(lengths, batch_size=self.batch_size, generator=generator)
        self.model.train()
        done = self.state.epoch_batches  # > 0 when resuming an interrupted epoch
        total_loss, total_tokens = self.state.epoch_loss, self.state.epoch_tokens
        started = time.perf_counter()
        bar = tqdm(
            total=len(batches),
            initial=done,
            desc=f"epoch {self.state.epoch + 1}",
            leave=False,
            disable=not self.progress,
            unit="batch",
        )
        for number, indices in enumerate(batches[done:], start=done + 1):
            batch = make_batch([examples[i] for i in indices]).to(self.device)
            if self.unknown_words is not None and batch.words is not None:
                # Drawn per batch, so an epoch resumed mid-way replaces the same words.
                draws = np.random.default_rng([self.seed, self.state.epoch, number])
                batch.words = self.unknown_words(batch.words, draws)
            self.optimizer.zero_grad(set_to_none=True)
            loss = self._accumulate_gradients(batch, number)
            norm = torch.nn.utils.clip_grad_norm_(
                self.model.parameters(), self.grad_norm or float("inf")
            )
            if not torch.isfinite(norm):
                raise self._diverged("gradient", number)
            self.optimizer.step()
            total_loss += loss
            total_tokens += batch.num_tokens
            bar.update(1)
            bar.set_postfix(loss=f"{total_loss / total_tokens:.3f}/tok")
            if self.stop.requested and number < len(batches):
                self.state.epoch_batches, self.state.epoch_loss = number, total_loss
                self.state.epoch_tokens = total_tokens
                self.state.train_seconds += time.perf_counter() - started
                self._checkpoint("last.pt", full=True)
                raise TrainingInterrupted(
                    self.checkpoints.parent,
                    self.stop.signal_number,
                    f"in epoch {self.state.epoch + 1} after batch {number}/{len(batches)}",
                )
        bar.close()
        self.state.epoch_batches, self.state.epoch_loss, self.state.epoch_tokens = 0, 0.0, 0
        return total_loss, total_tokens

    def _accumulate_gradients(self, batch: TaggerBatch, batch_number: int) -> float:
        """Backward of the batch's summed CRF loss plus the model's regularization
        (`TaggerModel.regularization`), chunk by chunk when the batch exceeds
        `max_batch_tokens` (the loss is a sum over sentences, so the chunks' gradients add up
        to the whole batch's); returns the CRF loss."""
        chunks = batch.split(self.max_batch_tokens) if self.max_batch_tokens else [batch]
        total = 0.0
        for position, chunk in enumerate(chunks):
            loss = self.model(chunk)["loss"]
            objective = loss
            if position == 0:  # once per batch, not once per chunk
                penalty = self.model.regularization(
                    mix_l2=self.mix_l2, anchor_weight=self.anchor_weight
                )
                if penalty is not None:
                    objective = loss + penalty
            if not torch.isfinite(objective):
                raise self._diverged("loss", batch_number)
            objective.backward()
            total += float(loss.detach())
        return total

    def fit(
        self,
        examples: Sequence[Example],
        make_batch: Callable[[list[Example]], TaggerBatch],
        evaluate_dev: Callable[[TaggerModel], dict[str, Any]],
    ) -> LoopState:
        """Train until `max_epochs` or until dev F1 has not improved for `patience` epochs.

        Raises `TrainingInterrupted` (after saving ``last.pt``) on SIGINT/SIGTERM and
        `TrainingDiverged` on a non-finite loss or gradient.
        """
        with stop_requests() as self.stop:
            return self._fit(examples, make_batch, evaluate_dev)

    def _fit(
        self,
        examples: Sequence[Example],
        make_batch: Callable[[list[Example]], TaggerBatch],
        evaluate_dev: Callable[[TaggerModel], dict[str, Any]],
    ) -> LoopState:
        epochs = tqdm(
            total=self.max_epochs,
            initial=self.state.epoch,
            desc="training",
            unit="epoch",
            disable=not self.progress,
        )
        while self.state.epoch < self.max_epochs and not self.state.stopped_early:
            metrics, score, seconds = self._epoch(examples, make_batch, evaluate_dev)
            epochs.update(1)
            if self.stop.requested and not self._finished():
                raise TrainingInterrupted(
                    self.checkpoints.parent,
                    self.stop.signal_number,
                    f"after epoch {self.state.epoch}",
                )
            self._log_epoch_line(metrics, score, seconds)
        epochs.close()
        return self.state

    def _epoch(
        self,
        examples: Sequence[Example],
        make_batch: Callable[[list[Example]], TaggerBatch],
        evaluate_dev: Callable[[TaggerModel], dict[str, Any]],
    ) -> tuple[dict[str, float], float | None, float]:
        """Train one epoch, score dev when due, select and schedule on the score, checkpoint and
        log; returns the epoch's metrics, its dev score (None: not scored) and its seconds."""
        started = time.perf_counter()
        learning_rate = self.optimizer.param_groups[0]["lr"]  # the rate this epoch uses
        loss, tokens = self._train_epoch(examples, make_batch)
        release_free_memory()  # scoring dev starts from a heap without the epoch's holes
        trained = time.perf_counter()
        self.state.epoch += 1
        scores = evaluate_dev(self.model) if self._dev_due() else None
        release_free_memory()
        evaluated = time.perf_counter()
        self.state.train_seconds += trained - started
        self.state.dev_seconds += evaluated - trained
        self.state.train_tokens += tokens
        score = None if scores is None else scores[self.metric]
        improved = self._select(score)
        metrics = {
            "train/loss_per_token": loss / max(tokens, 1),
            "lr": learning_rate,
            "train/tokens_per_second": tokens / max(trained - started, 1e-9),
            **self._dev_and_mix_metrics(scores),
        }
        self.state.history.append({"epoch": self.state.epoch, **metrics})
        if improved:
            self._checkpoint("best.pt", full=False)
        self._checkpoint("last.pt", full=True)
        self.run_logger.log_epoch(self.state.epoch, metrics)
        return metrics, score, evaluated - started

    def _select(self, score: float | None) -> bool:
        """Take the epoch's dev score (None: not scored): the best epoch, the schedule's step
        and early stopping; returns whether the score is the best so far."""
        improved = score is not None and score > self.state.best_f1
        if improved:
            self.state.best_f1, self.state.best_epoch = score, self.state.epoch
        self.state.epochs_without_improvement = self.state.epoch - self.state.best_epoch
        if isinstance(self.scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
            if score is not None:
                self.scheduler.step(score)
        elif self.scheduler is not None:
            self.scheduler.step()
        if (
            score is not None
            and self.patience is not None
            and self.state.epochs_without_improvement >= self.patience
        ):
            self.state.stopped_early = True
        return improved

    def _dev_and_mix_metrics(self, scores: dict[str, Any] | None) -> dict[str, float]:
        """The logged dev scores (when scored) and the ELMo mix weights (with ELMo)."""
        metrics = {}
        if scores is not None:
            metrics.update({f"dev/{name}": scores[name] for name in DEV_METRICS[self.metric]})
        mix = self.model.mix_summary()
        for layer, weight in zip(mix.get("layers", []), mix.get("weights", []), strict=True):
            metrics[f"elmo/weight_{layer}"] = weight
        if mix:
            metrics["elmo/gamma"] = mix["gamma"]
        return metrics

    def _log_epoch_line(
        self, metrics: dict[str, float], score: float | None, seconds: float
    ) -> None:
        """One log line per epoch: loss, dev score, the best so far, speed and time."""
        logger.info(
            "epoch %d/%d  loss/tok %.4f  dev %s %s (best %.2f @ %d)  %.0f tok/s  %.1fs%s",
            self.state.epoch,
            self.max_epochs,
            metrics["train/loss_per_token"],
            METRIC_NAMES[self.metric],
            "–" if score is None else f"{score:.2f}",
            self.state.best_f1,
            self.state.best_epoch,
            metrics["train/tokens_per_second"],
            seconds,
            "  early stop" if self.state.stopped_early else "",
        )

    def _dev_due(self) -> bool:
        """Score dev after this epoch (`state.epoch`, counted from 1)?"""
        return self.state.epoch % self.eval_every == 0 or self.state.epoch >= self.max_epochs

    def _finished(self) -> bool:
        return self.state.epoch >= self.max_epochs or self.state.stopped_early
