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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
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
from ner.common.wandb_run import start_wandb
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

    def agree(self, flag: bool) -> bool:
        """Rank 0's decision, for every process (checkpoint/stop decisions based on wall time)."""
        if self.world_size == 1:
            return flag
        value = torch.tensor([int(flag)], device=self.device)
        dist.broadcast(value, 0)
        return bool(value.item())


def build_optimizer(model: torch.nn.Module, cfg: DictConfig) -> torch.optim.Optimizer:
    """adam | adagrad (bilm-tf: lr 0.2, initial accumulator 1.0) | sgd."""
    name, lr = cfg.name, cfg.lr
    if name == "adam":
        return torch.optim.Adam(model.parameters(), lr=lr, fused=True)
    if name == "adagrad":
        return torch.optim.Adagrad(model.parameters(), lr=lr, initial_accumulator_value=1.0)
    if name == "sgd":
        return torch.optim.SGD(model.parameters(), lr=lr)
    raise ValueError(f"pretrain.optimizer.name={name!r}: expected adam, adagrad or sgd")


def lr_factor(step: int, warmup_steps: int, max_steps: int, schedule: str) -> float:
    """Linear warm-up, then constant or linear decay to 0 at `max_steps`."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    if schedule == "constant":
        return 1.0
    if schedule == "linear":
        return max(0.0, (max_steps - step) / max(1, max_steps - warmup_steps))
    raise ValueError(f"pretrain.lr_schedule={schedule!r}: expected constant or linear")


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


def train(cfg: DictConfig) -> dict[str, Any] | None:
    """Train (or resume) a biLM per `cfg`; rank 0 exports it and returns its metrics."""
    settings = cfg.pretrain
    setup_process(settings.threads)
    env = Distributed.setup(settings.device)
    output_dir = Path(settings.output_dir or data_dir() / "pretrain" / "run")
    output_dir.mkdir(parents=True, exist_ok=True)
    if settings.batch_size % env.world_size:
        raise InputError(
            f"pretrain.batch_size={settings.batch_size} is not divisible by "
            f"{env.world_size} processes"
        )
    torch.manual_seed(settings.seed + env.rank)
    precision = training_precision(settings.precision, env.device)
    warn_if_slow(precision, env.device)
    logger.info("precision %s on %s", precision, env.device)

    corpus = encode_corpus(
        list(cfg.corpus.sources), cfg.corpus.heldout_per_mille, cfg.corpus.max_sentence_tokens
    )
    vocab_size = vocabulary_size(corpus.train_counts, cfg.vocab.max_size, cfg.vocab.min_count)
    options = model_options(cfg)
    char_table = batch_to_ids([corpus.types])[0].to(torch.int16)  # (n_types, 50)
    model = BidirectionalLM(options, vocab_size, char_table, settings.dropout).to(env.device)
    if settings.init_from is not None:
        model.load_bilm_weights(settings.init_from.weights)
    optimizer = build_optimizer(model, settings.optimizer)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: lr_factor(s, settings.warmup_steps, settings.max_steps, settings.lr_schedule),
    )
    heldout_batcher(corpus, cfg)  # fail now, not after training, if the held-out part is too small
    batcher = StreamBatcher(
        corpus.train, settings.batch_size, settings.unroll_steps, shuffle=True, seed=settings.seed
    )
    local = settings.batch_size // env.world_size
    rows = slice(env.rank * local, (env.rank + 1) * local)
    fingerprint = {
        "types": len(corpus.types),
        "vocab_size": vocab_size,
        "train_tokens": corpus.train.num_tokens,
    }

    position = {"step": 0, "epoch": 0, "epoch_step": 0, "elapsed_s": 0.0}
    state = model.zero_state(local)
    checkpoint_path = output_dir / CHECKPOINT
    if checkpoint_path.exists():
        saved = load_checkpoint(checkpoint_path, map_location=env.device)
        if saved["fingerprint"] != fingerprint:
            raise InputError(
                f"{checkpoint_path} was trained on other data ({saved['fingerprint']}, now "
                f"{fingerprint}): use another pretrain.output_dir"
            )
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        scheduler.load_state_dict(saved["scheduler"])
        position = saved["position"]
        state = LSTMState(saved["state_h"][:, :, rows], saved["state_c"][:, :, rows])
        logger.info("resumed from %s at step %d", checkpoint_path, position["step"])

    run = model
    if env.world_size > 1:
        run = DistributedDataParallel(
            model, device_ids=[env.device] if env.device.type == "cuda" else None
        )
    wandb_run = None
    if env.is_main and cfg.wandb.project:
        wandb_run = start_wandb(
            output_dir,
            OmegaConf.to_container(cfg, resolve=True),
            mode=cfg.wandb.mode,
            project=cfg.wandb.project,
        )

    def checkpoint() -> None:
        h = env.gather_rows(state.h, dim=2)
        c = env.gather_rows(state.c, dim=2)
        if env.is_main:
            payload = {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "position": dict(position),
                "state_h": h.cpu(),
                "state_c": c.cpu(),
                "fingerprint": fingerprint,
                "config": OmegaConf.to_container(cfg, resolve=True),
            }
            save_checkpoint(checkpoint_path, payload)

    positions_per_step = settings.batch_size * settings.unroll_steps
    log_path = output_dir / "log.jsonl"
    progress = tqdm(
        total=settings.max_steps, initial=position["step"], disable=not env.is_main, unit="step"
    )
    started = time.monotonic() - position["elapsed_s"]
    last_checkpoint = window_start = time.monotonic()
    window_steps = 0
    stop = position["step"] >= settings.max_steps
    while not stop:
        for batch in batcher.batches(position["epoch"], position["epoch_step"], rows):
            generator = torch.Generator().manual_seed(settings.seed * 1_000_003 + position["step"])
            # Dropout draws from torch's global generator, seeded per step and process, so that
            # a resumed run draws the masks an uninterrupted one would have.
            torch.manual_seed(step_seed(settings.seed, position["step"], env.rank))
            negatives = model.softmax.sampler.sample(settings.n_negative_samples, generator)
            state = reset_rows(
                state, settings.state_reset_probability, generator, settings.batch_size, rows
            )
            forward_loss, backward_loss, grad_norm, state = train_step(
                run,
                batch,
                state,
                negatives.to(env.device),
                optimizer,
                settings.clip_norm,
                precision,
            )
            scheduler.step()
            position["step"] += 1
            position["epoch_step"] += 1
            position["elapsed_s"] = time.monotonic() - started
            window_steps += 1
            progress.update()
            if position["step"] % settings.log_every == 0:
                losses = env.mean(torch.stack([forward_loss, backward_loss]))
                rate = window_steps * positions_per_step / (time.monotonic() - window_start)
                record = {
                    "step": position["step"],
                    "epoch": position["epoch"],
                    "loss": float(losses.mean()),
                    "forward_loss": float(losses[0]),
                    "backward_loss": float(losses[1]),
                    "grad_norm": float(grad_norm),
                    "lr": scheduler.get_last_lr()[0],
                    "tokens_per_s": rate,
                    "tokens_seen": position["step"] * positions_per_step,
                    "elapsed_s": position["elapsed_s"],
                }
                window_start, window_steps = time.monotonic(), 0
                if env.is_main:
                    progress.set_postfix(loss=f"{record['loss']:.3f}", tok_s=f"{rate:.0f}")
                    with log_path.open("a", encoding="utf-8") as log:
                        log.write(json.dumps(record) + "\n")
                    if wandb_run is not None:
                        wandb_run.log(record, step=position["step"])
            if settings.eval_every and position["step"] % settings.eval_every == 0:
                if env.is_main:
                    record = heldout_record(model, corpus, cfg, position)
                    with (output_dir / HELDOUT_LOG).open("a", encoding="utf-8") as log:
                        log.write(json.dumps(record) + "\n")
                    if wandb_run is not None:
                        wandb_run.log(record, step=position["step"])
                window_start = time.monotonic()  # the evaluation is not training speed
            over_time = (
                settings.max_minutes is not None
                and position["elapsed_s"] > 60 * settings.max_minutes
            )
            stop = env.agree(position["step"] >= settings.max_steps or over_time)
            due = time.monotonic() - last_checkpoint > 60 * settings.checkpoint_minutes
            if env.agree(due) and not stop:
                checkpoint()
                last_checkpoint = time.monotonic()
            if stop:
                break
        else:
            position["epoch"] += 1
            position["epoch_step"] = 0
            state = model.zero_state(local)
    progress.close()
    checkpoint()
    metrics = None
    if env.is_main:
        epochs = position["epoch"] + position["epoch_step"] / batcher.steps_per_epoch
        metrics = finish(model, corpus, vocab_size, cfg, position, epochs, output_dir, precision)
        if wandb_run is not None:
            wandb_run.summary.update(
                {f"heldout_ppl_{k}": v for k, v in metrics["perplexity"].items()}
            )
            wandb_run.finish()
    if env.world_size > 1:
        dist.barrier()
        dist.destroy_process_group()
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
