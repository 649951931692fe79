"""Tiny real inputs for the pretraining tests: a Zipf-distributed text file and composed configs."""

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hydra import compose, initialize_config_module
from omegaconf import DictConfig

_TEXT = (
    "the of and to a in is was he for it with as his on be at by i this had not are but from or "
    "have an they which one you were her all she there would their we him been has when who will "
    "more no if out so said what up its about into than them can only other new some could time "
    "Reuters London Paris Tokyo shares rose fell percent company bank market U.S. 1987 , . \" ' s"
)
WORDS = _TEXT.split()

# A tiny biLM (options.json layout) and settings that make a training step take milliseconds.
TINY = [
    "model.lstm.dim=32",
    "model.lstm.projection_dim=8",
    "model.char_cnn.embedding.dim=4",
    "model.char_cnn.filters=[[1,4],[2,8],[3,8]]",
    "vocab.max_size=60",
    "vocab.min_count=1",
    "pretrain.batch_size=4",
    "pretrain.unroll_steps=5",
    "pretrain.n_negative_samples=16",
    "pretrain.warmup_steps=2",
    "pretrain.log_every=1",
    "pretrain.eval_batch_size=4",
    "pretrain.eval_unroll_steps=5",
    "pretrain.threads=1",
    "pretrain.precision=float32",  # the same arithmetic on every CPU (auto picks by the CPU)
    "pretrain.device=cpu",
    "corpus.heldout_per_mille=100",
]


def write_zipf_text(path: Path, sentences: int, seed: int = 0) -> Path:
    """`sentences` lines of 3-15 words drawn from a Zipf distribution over WORDS."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, len(WORDS) + 1)
    lines = [
        " ".join(rng.choice(WORDS, size=rng.integers(3, 16), p=weights / weights.sum()))
        for _ in range(sentences)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def zipf_text(tmp_path: Path) -> Path:
    return write_zipf_text(tmp_path / "text.txt", 300)


@pytest.fixture
def tiny_overrides(tmp_path: Path, zipf_text: Path) -> Callable[..., list[str]]:
    """Command-line overrides for the tiny model on `zipf_text`, plus `overrides`."""

    def make(*overrides: str, output_dir: Path | None = None) -> list[str]:
        return [
            *TINY,
            f"corpus.sources=[{zipf_text}]",
            f"pretrain.output_dir={output_dir or tmp_path / 'run'}",
            *overrides,
        ]

    return make


@pytest.fixture
def tiny_config(tiny_overrides: Callable[..., list[str]]) -> Callable[..., DictConfig]:
    """conf/pretrain.yaml composed with `tiny_overrides(...)`."""

    def make(*overrides: str, output_dir: Path | None = None) -> DictConfig:
        with initialize_config_module("ner.conf", version_base="1.3"):
            return compose("pretrain", overrides=tiny_overrides(*overrides, output_dir=output_dir))

    return make
