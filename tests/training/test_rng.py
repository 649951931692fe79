"""Checkpointed RNG states: restoring one replays every generator a run draws from."""

import random

import numpy as np
import torch

from ner.common.checkpoints import load_checkpoint, save_checkpoint
from ner.training.rng import capture_rng_state, restore_rng_state


def draws() -> tuple:
    return random.random(), float(np.random.standard_normal()), float(torch.rand(1))


def test_restored_state_replays_python_numpy_and_torch(tmp_path):
    random.seed(3)
    np.random.seed(3)
    torch.manual_seed(3)
    np.random.standard_normal()  # leave a cached Gaussian in NumPy's state
    path = tmp_path / "state.pt"
    save_checkpoint(path, {"rng": capture_rng_state()})
    expected = [draws() for _ in range(3)]
    restore_rng_state(load_checkpoint(path)["rng"])  # through torch.load(weights_only=True)
    assert [draws() for _ in range(3)] == expected
