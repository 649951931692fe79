"""Every random-number generator state a training run uses, as checkpoint-safe plain values.

A resumed run must draw the same numbers as the uninterrupted one: Python's `random`, NumPy's
global generator, torch's CPU generator (dropout) and, when CUDA is in use, every device's
generator. The states are tensors, ints and lists only, so checkpoints still load with
``torch.load(weights_only=True)``.
"""

import random
from typing import Any

import numpy as np
import torch


def capture_rng_state() -> dict[str, Any]:
    """The current state of every generator (CUDA ones only when CUDA is initialised)."""
    numpy_state = np.random.get_state(legacy=False)
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": {
            "key": torch.from_numpy(numpy_state["state"]["key"].astype(np.int64)),
            "pos": int(numpy_state["state"]["pos"]),
            "has_gauss": int(numpy_state["has_gauss"]),
            "gauss": float(numpy_state["gauss"]),
        },
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng_state(state: dict[str, Any]) -> None:
    """Put every generator back to `state` (from `capture_rng_state`)."""
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    numpy_state = state["numpy"]
    key = numpy_state["key"].numpy().astype(np.uint32)
    np.random.set_state(
        {
            "bit_generator": "MT19937",
            "state": {"key": key, "pos": numpy_state["pos"]},
            "has_gauss": numpy_state["has_gauss"],
            "gauss": numpy_state["gauss"],
        }
    )
    torch.set_rng_state(state["torch"])
    if "cuda" in state:
        if not torch.cuda.is_available():
            raise RuntimeError("this checkpoint was trained on CUDA; resume it on a CUDA device")
        torch.cuda.set_rng_state_all(state["cuda"])
