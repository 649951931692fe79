"""Fixtures for the biLM tests: AllenNLP's tiny ELMo and small random biLMs whose clips fire."""

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from ner.bilm.bilm import BiLM
from ner.bilm.options import BiLMOptions

SMALL_OPTIONS = {
    "lstm": {
        "dim": 24,
        "projection_dim": 8,
        "n_layers": 2,
        "cell_clip": 3,
        "proj_clip": 3,
        "use_skip_connections": True,
    },
    "char_cnn": {
        "embedding": {"dim": 4},
        "filters": [[1, 4], [2, 6], [3, 6]],
        "n_highway": 1,
        "n_characters": 262,
        "max_characters_per_token": 50,
        "activation": "relu",
    },
}


def make_random_model(
    directory: Path, seed: int = 0, scales: tuple[float, float, float] = (3.0, 0.5, 8.0)
) -> tuple[Path, Path]:
    """Write options.json + weights.hdf5 of a small random biLM.

    `scales` multiply the 1/sqrt(fan-in) std of the LSTM input, recurrent and projection weights:
    the default makes both the cell and the projection clip fire while keeping the recurrence
    mild (a strong recurrent matrix makes the LSTM chaotic, which amplifies rounding without
    bound). Biases are multiples of 2^-10, so the forget-gate +1.0 is exact in float32 and float64
    alike and float64 comparisons can be tight."""
    torch.manual_seed(seed)
    model = BiLM(BiLMOptions.from_dict(SMALL_OPTIONS))
    with torch.no_grad():
        for layer in model.lstm.layers:
            for weight, scale in zip(
                (layer.w_input, layer.w_state, layer.w_proj), scales, strict=True
            ):
                weight.normal_(0.0, scale / weight.shape[1] ** 0.5)
            layer.bias.copy_(torch.round(torch.randn_like(layer.bias) * 1024) / 1024)
    options_file, weight_file = directory / "options.json", directory / "weights.hdf5"
    model.save(options_file, weight_file)
    return options_file, weight_file


@pytest.fixture
def random_model(tmp_path: Path) -> Callable[..., tuple[Path, Path]]:
    """Factory: random_model(seed=0, scales=...) -> (options_file, weight_file)."""
    return lambda **kwargs: make_random_model(tmp_path, **kwargs)
