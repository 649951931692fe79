"""The pretraining loop: data-parallel (torchrun) biLM training with checkpoints, resume and export.

Every process builds the same corpus and the same `batch_size` streams and trains on its own
contiguous share of the stream rows; DDP averages the gradients, so W processes with batch B/W each
follow the same loss curve as one process with batch B. Negative samples are drawn from a generator
seeded by (seed, step), identical on every process. A checkpoint (model, optimizer, schedule, data
position and the carried LSTM state of all streams) is written atomically every
`checkpoint_minutes`, so a kill loses at most one interval; rerunning the same command resumes.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from torch import distributed as dist
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from ner.bilm.char_ids import batch_to_ids
from ner.bilm.lstm import LSTMState
from ner.bilm.options import BiLMOptions
from ner.common.checkpoints import load_checkpoint, save_checkpoint
from ner.common.errors import InputError
from ner.common.files import write_json
from ner.common.memory import keep_freed_memory
from ner.common.paths import data_dir
from ner.common.precision import training_autocast, training_precision, warn_if_slow
from ner.common.threads import cpu_threads, pick_device
from ner.common.wandb_run import GuardedWandb
from ner.pretrain.config import optimizer_config
from ner.pretrain.corpus import CorpusError, EncodedCorpus, encode_corpus
from ner.pretrain.language_model import BidirectionalLM
from ner.pretrain.streams import Batch, StreamBatcher
from ner.pretrain.vocabulary import softmax_vocabulary, vocabulary_size

logger = logging.getLogger(__name__)
CHECKPOINT = "checkpoint.pt"
HELDOUT_LOG = "heldout.jsonl"  # one row per evaluation every `pretrain.eval_every` steps


@dataclass
class Distributed:
    """This process's place in a torchrun job (rank 0 of 1 without torchrun)."""

    rank: int
    world_size: int
    device: torch.device

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @classmethod
    def setup(cls, device: str) -> Distributed:
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
        rank = int(os.environ.get("RANK", "0"))
        target = pick_device(device)
        if target.type == "cuda":
            torch.cuda.set_device(target)
        if world_size > 1 and not dist.is_initialized():
            dist.init_process_group("nccl" if target.type == "cuda" else "gloo")
        return cls(rank, world_size, target)

    def mean(self, values: torch.Tensor) -> torch.Tensor:
        """The mean of `values` over processes (a copy)."""
        values = values.detach().clone()
        if self.world_size > 1:
            dist.all_reduce(values)
            values /= self.world_size
        return values

    def gather_rows(self, tensor: torch.Tensor, dim: int) -> torch.Tensor:
        """Concatenate every process's rows of `tensor` along `dim` (in rank order)."""
        if self.world_size == 1:
            return tensor
        parts = [torch.empty_like(tensor) for _ in range(self.world_size)]
        dist.all_gather(parts, tensor.contiguous())
        return torch.cat(parts, dim=dim)

    def close(self) -> None:
        """Wait for every process, then leave the process group (nothing to do alone)."""
        if self.world_size > 1:
            dist.barrier()
            dist.destroy_process_group()

    def agree(self, flag: bool) -> bool:
        """Rank 0's decision, for every process (checkpoint/stop decisions based on wall time)."""
        if self.world_size == 1:
            return flag
        value = torch.tensor([int(flag)], device=self.device)
        dist.broadcast(value, 0)
        return bool(value.item())


def build_optimizer(
    model: BidirectionalLM,
    node: DictConfig,
    softmax_warmup_steps: int = 0,
    bilm_lr_scale: float = 1.0,
) -> torch.optim.Optimizer:
    """The optimizer `pretrain.optimizer` builds with Hydra (``_target_``) for `model`: one
    parameter group, or with a softmax warm-up or a `bilm_lr_scale` other than 1 two (the
    softmax's, then the biLM's at `bilm_lr_scale` times the learning rate)."""
    optimizer = instantiate(optimizer_config(node))
    if not softmax_warmup_steps and bilm_lr_scale == 1.0:
        return optimizer(model.parameters())
    softmax = list(model.softmax.parameters())
    ids = {id(p) for p in softmax}
    bilm = [p for p in model.parameters() if id(p) not in ids]
    return optimizer([{"params": softmax}, {"params": bilm, "lr": node.lr * bilm_lr_scale}])


def lr_factor(step: int, warmup_steps: int, max_steps: int, schedule: str) -> float:
    """Linear warm-up, then constant or linear decay to 0 at `max_steps`."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    if schedule == "constant":
        return 1.0
    if schedule == "linear":
        return max(0.0, (max_steps - step) / max(1, max_steps - warmup_steps))
    raise ValueError(f"pretrain.lr_schedule={schedule!r}: expected constant or linear")


def lr_factors(settings: DictConfig) -> list[Callable[[int], float]]:
    """The learning-rate factor of each parameter group (`build_optimizer`): with a softmax
    warm-up the biLM's is 0 for its steps and then runs the schedule over the steps left."""
    schedule = (settings.warmup_steps, settings.max_steps, settings.lr_schedule)
    warmup = settings.softmax_warmup_steps

    def everything(step: int) -> float:
        return lr_factor(step, *schedule)

    def bilm(step: int) -> float:
        if step < warmup:
            return 0.0
        warmup_steps, max_steps, name = schedule
        return lr_factor(step - warmup, warmup_steps, max_steps - warmup, name)

    two_groups = warmup or settings.bilm_lr_scale != 1.0  # as `build_optimizer` makes them
    return [everything, bilm] if two_groups else [everything]


def model_options(cfg: DictConfig) -> BiLMOptions:
    """The architecture: `pretrain.init_from.options` when continuing, else `model`."""
    init = cfg.pretrain.init_from
    if init is not None:
        return BiLMOptions.from_file(init.options)
    return BiLMOptions.from_dict(OmegaConf.to_container(cfg.model, resolve=True), "config model")


def heldout_batcher(corpus: EncodedCorpus, cfg: DictConfig) -> StreamBatcher:
    """Held-out streams: `eval_batch_size` of them, fewer if the held-out text is short."""
    unroll = cfg.pretrain.eval_unroll_steps
    positions = corpus.heldout.num_tokens + 2 * corpus.heldout.num_sentences
    streams = max(1, min(cfg.pretrain.eval_batch_size, (positions - 1) // unroll))
    try:
        return StreamBatcher(corpus.heldout, streams, unroll, shuffle=False)
    except CorpusError as error:
        raise CorpusError(
            f"held-out part ({corpus.heldout.num_sentences} sentences) too small: {error}; "
            "raise corpus.heldout_per_mille or add text"
        ) from None


def perplexities(
    model: BidirectionalLM, corpus: EncodedCorpus, cfg: DictConfig
) -> dict[str, float]:
    """Full-softmax held-out perplexity per direction, streams with carried state (no shuffle)."""
    batcher = heldout_batcher(corpus, cfg)
    model.eval()
    state = model.zero_state(batcher.num_streams)
    total, count = torch.zeros(2, dtype=torch.float64), 0
    for batch in batcher.batches(0):
        nll, state = model.heldout_nll(batch, state)
        total += nll.double().cpu()
        count += batch.forward_targets.numel()
    model.train()
    forward, backward = (math.exp(v / count) for v in total.tolist())
    return {"forward": forward, "backward": backward, "heldout_positions": count}


def heldout_record(
    model: BidirectionalLM, corpus: EncodedCorpus, cfg: DictConfig, position: dict[str, Any]
) -> dict[str, Any]:
    """One row of the held-out perplexity curve (`HELDOUT_LOG`), evaluated now."""
    ppl = perplexities(model, corpus, cfg)
    logger.info(
        "step %d: held-out perplexity forward %.2f backward %.2f",
        *(position["step"], ppl["forward"], ppl["backward"]),
    )
    return {
        "step": position["step"],
        "tokens_seen": position["step"] * cfg.pretrain.batch_size * cfg.pretrain.unroll_steps,
        "elapsed_s": position["elapsed_s"],
        "heldout_forward_ppl": ppl["forward"],
        "heldout_backward_ppl": ppl["backward"],
    }


def step_seed(seed: int, step: int, rank: int) -> int:
    """The global torch seed of one training step in one process (drawn from all three)."""
    return int(np.random.SeedSequence([seed, step, rank]).generate_state(1)[0])


def reset_rows(
    state: LSTMState, probability: float, generator: torch.Generator, streams: int, rows: slice
) -> LSTMState:
    """Zero the state of each of the `streams` streams with `probability` (drawn for all of them, so
    every process agrees; this one keeps `rows`): the biLM must also work from a zero state, which
    is where it starts at inference."""
    if not probability:
        return state
    keep = torch.rand(streams, generator=generator)[rows] >= probability
    keep = keep.to(state.h.device)[None, None, :, None]  # (1, 1, B, 1)
    return LSTMState(state.h * keep, state.c * keep)


def train_step(
    model: torch.nn.Module,
    batch: Batch,
    state: LSTMState,
    negatives: torch.Tensor,
    optimizer: torch.optim.Optimizer,
    clip_norm: float,
    precision: str = "float32",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, LSTMState]:
    """One update on the mean of the two directions' losses; returns the losses (detached), the
    gradient norm before clipping, and the state to carry into the next window.

    In bfloat16 the forward pass runs under autocast (its products in bfloat16); the backward pass
    follows the forward's dtypes, so the float32 weights get float32 gradients.
    """
    with training_autocast(precision, negatives.device):
        forward_loss, backward_loss, state = model(batch, state, negatives)
    optimizer.zero_grad(set_to_none=True)
    ((forward_loss + backward_loss) / 2).backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
    optimizer.step()
    return forward_loss.detach(), backward_loss.detach(), grad_norm, state


def setup_process(threads: int | str | None) -> None:
    """CPU threads, and an allocator that keeps freed memory for the next step: the step's large
    tensors then come back without page faults (about a tenth of a step, docs/pretraining.md)."""
    torch.set_num_threads(cpu_threads(threads))
    keep_freed_memory()


def start_position() -> dict[str, Any]:
    """Where a new run stands: no step taken, at the start of epoch 0."""
    return {"step": 0, "epoch": 0, "epoch_step": 0, "elapsed_s": 0.0}


@dataclass
class Clock:
    """A run's wall time: in all (carried over resumes), since the last checkpoint, and in the
    current speed window (the steps since the last logged rate, without evaluations)."""

    started: float
    last_checkpoint: float
    window_start: float
    window_steps: int = 0

    @classmethod
    def resume(cls, elapsed_s: float) -> Clock:
        now = time.monotonic()
        return cls(started=now - elapsed_s, last_checkpoint=now, window_start=now)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def window_rate(self, positions_per_step: int) -> float:
        """Positions per second trained in the current window, which then starts anew."""
        now = time.monotonic()
        rate = self.window_steps * positions_per_step / (now - self.window_start)
        self.window_start, self.window_steps = now, 0
        return rate

    def checkpoint_due(self, minutes: float) -> bool:
        return time.monotonic() - self.last_checkpoint > 60 * minutes


@dataclass
class PretrainingRun:
    """This process's part of a pretraining run: its model, optimizer and streams, and where it
    stands (`position`, and the LSTM `state` that its rows of the streams carry)."""

    cfg: DictConfig
    env: Distributed
    output_dir: Path
    precision: str
    corpus: EncodedCorpus
    vocab_size: int
    model: BidirectionalLM
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LambdaLR
    batcher: StreamBatcher
    state: LSTMState
    position: dict[str, Any] = field(default_factory=start_position)
    wandb: GuardedWandb = field(default_factory=GuardedWandb)

    @classmethod
    def build(
        cls, cfg: DictConfig, env: Distributed, output_dir: Path, precision: str
    ) -> PretrainingRun:
        """Read the corpus, then build the model, the optimizer and schedule, and the streams."""
        settings = cfg.pretrain
        corpus = encode_corpus(
            list(cfg.corpus.sources), cfg.corpus.heldout_per_mille, cfg.corpus.max_sentence_tokens
        )
        vocab_size = vocabulary_size(corpus.train_counts, cfg.vocab.max_size, cfg.vocab.min_count)
        char_table = batch_to_ids([corpus.types])[0].to(torch.int16)  # (n_types, 50)
        model = BidirectionalLM(model_options(cfg), vocab_size, char_table, settings.dropout)
        model = model.to(env.device)
        if settings.init_from is not None:
            model.load_bilm_weights(settings.init_from.weights)
        optimizer = build_optimizer(
            model, settings.optimizer, settings.softmax_warmup_steps, settings.bilm_lr_scale
        )
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factors(settings))
        heldout_batcher(corpus, cfg)  # fail now, not after training, if the held-out part is small
        batcher = StreamBatcher(
            corpus.train,
            settings.batch_size,
            settings.unroll_steps,
            shuffle=True,
            seed=settings.seed,
        )
        state = model.zero_state(settings.batch_size // env.world_size)
        parts = (corpus, vocab_size, model, optimizer, scheduler, batcher, state)
        return cls(cfg, env, output_dir, precision, *parts)

    @property
    def local_streams(self) -> int:
        """How many of the `batch_size` streams each process trains on."""
        return self.cfg.pretrain.batch_size // self.env.world_size

    @property
    def rows(self) -> slice:
        """This process's rows of the `batch_size` streams."""
        local = self.local_streams
        return slice(self.env.rank * local, (self.env.rank + 1) * local)

    @property
    def positions_per_step(self) -> int:
        return self.cfg.pretrain.batch_size * self.cfg.pretrain.unroll_steps

    @property
    def checkpoint_path(self) -> Path:
        return self.output_dir / CHECKPOINT

    @property
    def fingerprint(self) -> dict[str, int]:
        """What a checkpoint must have been trained on to be resumed."""
        return {
            "types": len(self.corpus.types),
            "vocab_size": self.vocab_size,
            "train_tokens": self.corpus.train.num_tokens,
        }

    def resume_if_saved(self) -> str | None:
        """Continue from the output folder's checkpoint, if there is one; returns the W&B run id
        it logged to (None: no checkpoint, or no W&B run)."""
        path = self.checkpoint_path
        if not path.exists():
            return None
        saved = load_checkpoint(path, map_location=self.env.device)
        if saved["fingerprint"] != self.fingerprint:
            raise InputError(
                f"{path} was trained on other data ({saved['fingerprint']}, now "
                f"{self.fingerprint}): use another pretrain.output_dir"
            )
        self.model.load_state_dict(saved["model"])
        self.optimizer.load_state_dict(saved["optimizer"])
        self.scheduler.load_state_dict(saved["scheduler"])
        self.position = saved["position"]
        rows = self.rows
        self.state = LSTMState(saved["state_h"][:, :, rows], saved["state_c"][:, :, rows])
        logger.info("resumed from %s at step %d", path, self.position["step"])
        return saved.get("wandb_run_id")

    def start_logging(self, resume_id: str | None) -> None:
        """Open the W&B run on rank 0 when `wandb.project` is set (continuing `resume_id`)."""
        wandb = self.cfg.wandb
        if self.env.is_main and wandb.project:
            config = OmegaConf.to_container(self.cfg, resolve=True)
            self.wandb.start_run(
                self.output_dir, config, mode=wandb.mode, project=wandb.project, resume_id=resume_id
            )

    def save(self) -> None:
        """Write the checkpoint (every process takes part: rank 0 gathers the carried state)."""
        h = self.env.gather_rows(self.state.h, dim=2)
        c = self.env.gather_rows(self.state.c, dim=2)
        if not self.env.is_main:
            return
        payload = {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "position": dict(self.position),
            "state_h": h.cpu(),
            "state_c": c.cpu(),
            "fingerprint": self.fingerprint,
            "config": OmegaConf.to_container(self.cfg, resolve=True),
            "wandb_run_id": self.wandb.run_id,
        }
        save_checkpoint(self.checkpoint_path, payload)

    def step(
        self, network: torch.nn.Module, batch: Batch
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One training step on this process's rows of `batch`; returns the two directions'
        losses and the gradient norm."""
        settings, step = self.cfg.pretrain, self.position["step"]
        generator = torch.Generator().manual_seed(settings.seed * 1_000_003 + step)
        # Dropout draws from torch's global generator, seeded per step and process, so that
        # a resumed run draws the masks an uninterrupted one would have.
        torch.manual_seed(step_seed(settings.seed, step, self.env.rank))
        negatives = self.model.softmax.sampler.sample(settings.n_negative_samples, generator)
        state = reset_rows(
            self.state, settings.state_reset_probability, generator, settings.batch_size, self.rows
        )
        forward_loss, backward_loss, grad_norm, self.state = train_step(
            network,
            batch,
            state,
            negatives.to(self.env.device),
            self.optimizer,
            settings.clip_norm,
            self.precision,
        )
        self.scheduler.step()
        self.position["step"] += 1
        self.position["epoch_step"] += 1
        return forward_loss, backward_loss, grad_norm

    def log_training(
        self, losses: torch.Tensor, grad_norm: torch.Tensor, clock: Clock, progress: tqdm
    ) -> None:
        """The losses (averaged over processes), rate and learning rate: into ``log.jsonl``, the
        progress bar and W&B (rank 0)."""
        losses = self.env.mean(losses)
        rate = clock.window_rate(self.positions_per_step)
        record = {
            "step": self.position["step"],
            "epoch": self.position["epoch"],
            "loss": float(losses.mean()),
            "forward_loss": float(losses[0]),
            "backward_loss": float(losses[1]),
            "grad_norm": float(grad_norm),
            "lr": self.scheduler.get_last_lr()[0],
            "tokens_per_s": rate,
            "tokens_seen": self.position["step"] * self.positions_per_step,
            "elapsed_s": self.position["elapsed_s"],
        }
        if self.env.is_main:
            progress.set_postfix(loss=f"{record['loss']:.3f}", tok_s=f"{rate:.0f}")
            append_json_line(self.output_dir / "log.jsonl", record)
            self.wandb.log(record, step=self.position["step"])

    def log_heldout(self) -> None:
        """Evaluate the held-out perplexity into ``heldout.jsonl`` and W&B (rank 0)."""
        if self.env.is_main:
            record = heldout_record(self.model, self.corpus, self.cfg, self.position)
            append_json_line(self.output_dir / HELDOUT_LOG, record)
            self.wandb.log(record, step=self.position["step"])

    def evaluation_due(self) -> bool:
        """Every `eval_every` steps, and at the end of the softmax warm-up (the "before")."""
        settings, step = self.cfg.pretrain, self.position["step"]
        every = settings.eval_every and step % settings.eval_every == 0
        return bool(
            every or (settings.softmax_warmup_steps and step == settings.softmax_warmup_steps)
        )

    def should_stop(self) -> bool:
        """Whether `max_steps` or `max_minutes` is reached (rank 0 decides for all)."""
        settings = self.cfg.pretrain
        over_time = (
            settings.max_minutes is not None
            and self.position["elapsed_s"] > 60 * settings.max_minutes
        )
        return self.env.agree(self.position["step"] >= settings.max_steps or over_time)

    def train_steps(self, network: torch.nn.Module) -> None:
        """Train until `should_stop`, epoch after epoch, logging every `log_every` steps,
        evaluating every `eval_every` and saving a checkpoint every `checkpoint_minutes`."""
        settings, position = self.cfg.pretrain, self.position
        progress = tqdm(
            total=settings.max_steps,
            initial=position["step"],
            disable=not (self.env.is_main and settings.progress),
            unit="step",
        )
        clock = Clock.resume(position["elapsed_s"])
        stop = position["step"] >= settings.max_steps
        while not stop:
            for batch in self.batcher.batches(position["epoch"], position["epoch_step"], self.rows):
                forward_loss, backward_loss, grad_norm = self.step(network, batch)
                position["elapsed_s"] = clock.elapsed()
                clock.window_steps += 1
                progress.update()
                if position["step"] % settings.log_every == 0:
                    losses = torch.stack([forward_loss, backward_loss])
                    self.log_training(losses, grad_norm, clock, progress)
                if self.evaluation_due():
                    self.log_heldout()
                    clock.window_start = time.monotonic()  # the evaluation is not training speed
                stop = self.should_stop()
                if self.env.agree(clock.checkpoint_due(settings.checkpoint_minutes)) and not stop:
                    self.save()
                    clock.last_checkpoint = time.monotonic()
                if stop:
                    break
            else:
                position["epoch"] += 1
                position["epoch_step"] = 0
                self.state = self.model.zero_state(self.local_streams)
        progress.close()

    def export(self) -> dict[str, Any]:
        """Rank 0: evaluate and export the biLM (`finish`); returns its metrics."""
        position = self.position
        epochs = position["epoch"] + position["epoch_step"] / self.batcher.steps_per_epoch
        metrics = finish(
            self.model,
            self.corpus,
            self.vocab_size,
            self.cfg,
            position,
            epochs,
            self.output_dir,
            self.precision,
        )
        self.wandb.summarize({f"heldout_ppl_{k}": v for k, v in metrics["perplexity"].items()})
        return metrics


def append_json_line(path: Path, record: dict[str, Any]) -> None:
    """Append `record` as one line of JSON to `path`."""
    with path.open("a", encoding="utf-8") as log:
        log.write(json.dumps(record) + "\n")


def output_folder(settings: DictConfig, env: Distributed) -> Path:
    """`pretrain.output_dir` (created), after checking that the processes share the batch."""
    output_dir = Path(settings.output_dir or data_dir() / "pretrain" / "run")
    output_dir.mkdir(parents=True, exist_ok=True)
    if settings.batch_size % env.world_size:
        raise InputError(
            f"pretrain.batch_size={settings.batch_size} is not divisible by "
            f"{env.world_size} processes"
        )
    return output_dir


def data_parallel(model: torch.nn.Module, env: Distributed) -> torch.nn.Module:
    """`model` itself in one process, wrapped in `DistributedDataParallel` in several."""
    if env.world_size == 1:
        return model
    return DistributedDataParallel(
        model, device_ids=[env.device] if env.device.type == "cuda" else None
    )


def train(cfg: DictConfig) -> dict[str, Any] | None:
    """Train (or resume) a biLM per `cfg`; rank 0 exports it and returns its metrics."""
    settings = cfg.pretrain
    setup_process(settings.threads)
    env = Distributed.setup(settings.device)
    output_dir = output_folder(settings, env)
    torch.manual_seed(settings.seed + env.rank)
    precision = training_precision(settings.precision, env.device)
    warn_if_slow(precision, env.device)
    logger.info("precision %s on %s", precision, env.device)
    run = PretrainingRun.build(cfg, env, output_dir, precision)
    resume_id = run.resume_if_saved()
    network = data_parallel(run.model, env)
    run.start_logging(resume_id)
    run.train_steps(network)
    run.save()
    metrics = run.export() if env.is_main else None
    run.wandb.finish()
    env.close()
    return metrics


def finish(
    model: BidirectionalLM,
    corpus: EncodedCorpus,
    vocab_size: int,
    cfg: DictConfig,
    position: dict[str, Any],
    epochs: float,
    output_dir: Path,
    precision: str,
) -> dict[str, Any]:
    """Held-out perplexities, then options.json + weights.hdf5 + vocab.txt + metrics.json."""
    ppl = perplexities(model, corpus, cfg)
    model.bilm.save(output_dir / "options.json", output_dir / "weights.hdf5")
    softmax_vocabulary(corpus.types, vocab_size).write_lines(output_dir / "vocab.txt")
    positions_per_step = cfg.pretrain.batch_size * cfg.pretrain.unroll_steps
    metrics = {
        "perplexity": ppl,
        "steps": position["step"],
        "epochs": epochs,
        "tokens_seen": position["step"] * positions_per_step,
        "train_seconds": position["elapsed_s"],
        "precision": precision,  # of the training steps (held-out perplexity: always float32)
        "vocab_size": vocab_size,
        "types": len(corpus.types),
        "train_tokens": corpus.train.num_tokens,
        "train_sentences": corpus.train.num_sentences,
        "heldout_tokens": corpus.heldout.num_tokens,
        "heldout_sentences": corpus.heldout.num_sentences,
        "sources": corpus.source_stats,
    }
    write_json(output_dir / "metrics.json", metrics, indent=2)
    logger.info("held-out perplexity forward %.2f backward %.2f", ppl["forward"], ppl["backward"])
    return metrics
