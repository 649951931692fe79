"""Mixed-precision pretraining (`pretrain.precision=bfloat16`): it learns, everything it keeps or
exports stays float32, and the float32 step is exactly the step without any precision handling."""

import json
from itertools import pairwise
from pathlib import Path

import h5py
import pytest
import torch

from ner.bilm.options import BiLMOptions
from ner.common.checkpoints import load_checkpoint
from ner.pretrain.language_model import BidirectionalLM
from ner.pretrain.streams import Batch
from ner.pretrain.trainer import train, train_step

CONSTANT = ["pretrain.lr_schedule=constant", "pretrain.warmup_steps=0"]


def test_bfloat16_training_learns(tiny_config, tmp_path: Path) -> None:
    metrics = train(
        tiny_config(
            "pretrain.precision=bfloat16",
            *CONSTANT,
            "pretrain.max_steps=20",
            "pretrain.eval_every=2",
        )
    )
    rows = [
        json.loads(line) for line in (tmp_path / "run" / "heldout.jsonl").read_text().splitlines()
    ]
    assert metrics["precision"] == "bfloat16"
    for direction in ("forward", "backward"):  # held-out perplexity falls at every evaluation
        curve = [r[f"heldout_{direction}_ppl"] for r in rows]
        assert len(curve) == 10 and all(b < a for a, b in pairwise(curve))
        assert curve[-1] < 0.85 * curve[0]


def test_bfloat16_keeps_and_exports_float32(tiny_config, tmp_path: Path) -> None:
    train(tiny_config("pretrain.precision=bfloat16", "pretrain.max_steps=3"))
    run = tmp_path / "run"
    saved = load_checkpoint(run / "checkpoint.pt")
    assert {t.dtype for t in saved["model"].values()} == {torch.float32}
    moments = [t for s in saved["optimizer"]["state"].values() for t in s.values() if t.dim()]
    assert moments and {t.dtype for t in moments} == {torch.float32}
    assert saved["state_h"].dtype == saved["state_c"].dtype == torch.float32  # carried LSTM state
    with h5py.File(run / "weights.hdf5", "r") as weights:
        datasets: list[h5py.Dataset] = []
        weights.visititems(lambda _, item: datasets.append(item) if "shape" in dir(item) else None)
        dtypes = {str(d.dtype) for d in datasets}
    assert len(datasets) > 10 and dtypes == {"float32"}


def tiny_model(seed: int = 0) -> BidirectionalLM:
    options = BiLMOptions.from_dict(
        {
            "lstm": {"dim": 32, "projection_dim": 8, "n_layers": 2, "cell_clip": 3,
                     "proj_clip": 3, "use_skip_connections": True},
            "char_cnn": {"embedding": {"dim": 4}, "filters": [[1, 4], [2, 8], [3, 8]],
                         "n_highway": 1, "n_characters": 262, "max_characters_per_token": 50,
                         "activation": "relu"},
        }
    )  # fmt: skip
    generator = torch.Generator().manual_seed(seed)
    table = torch.randint(1, 262, (40, 50), generator=generator, dtype=torch.int16)
    torch.manual_seed(seed)
    return BidirectionalLM(options, 30, table, dropout=0.1)


def steps(precision: str | None, count: int = 3) -> tuple[list[float], dict[str, torch.Tensor]]:
    """Losses and final parameters of `count` Adam steps on fixed batches; `precision` None runs
    the step as it was written before precisions existed (forward, backward, clip, update)."""
    model = tiny_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    state = model.zero_state(3)
    generator = torch.Generator().manual_seed(5)
    losses = []
    for step in range(count):
        ids = torch.randint(0, 40, (3, 6), generator=generator)
        batch = Batch(ids[:, :-1], ids[:, 1:], ids[:, 1:].flip(1), ids[:, :-1].flip(1))
        negatives = torch.randint(0, 30, (12,), generator=generator)
        torch.manual_seed(100 + step)  # the dropout masks
        if precision is None:
            forward, backward, state = model(batch, state, negatives)
            optimizer.zero_grad(set_to_none=True)
            ((forward + backward) / 2).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        else:
            forward, backward, _, state = train_step(
                model, batch, state, negatives, optimizer, 1.0, precision
            )
        losses += [forward.item(), backward.item()]
    return losses, {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_the_float32_step_is_unchanged() -> None:
    plain_losses, plain = steps(None)
    losses, weights = steps("float32")
    assert losses == plain_losses
    assert all(torch.equal(weights[k], plain[k]) for k in plain)
    # The same comparison sees what bfloat16 products change: small, but not nothing.
    mixed_losses, mixed = steps("bfloat16")
    assert mixed_losses != plain_losses
    assert mixed_losses == pytest.approx(plain_losses, rel=0.02)
    assert all(mixed[k].dtype == torch.float32 for k in mixed)
