"""Precision names, the training guard and the slow-CPU warning (ner.common.precision)."""

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from ner.common.precision import (
    active_dtype,
    fused_lstm_keeps_float32_cell,
    product_dtype,
    training_autocast,
    training_precision,
    warn_if_slow,
)


def test_precision_names() -> None:
    assert product_dtype("float32") is None
    assert product_dtype("bfloat16") is torch.bfloat16
    with pytest.raises(ValueError, match="one of float32, bfloat16, got 'half'"):
        product_dtype("half")


def test_only_without_gradients() -> None:
    assert active_dtype(torch.bfloat16) is None
    with torch.no_grad():
        assert active_dtype(torch.bfloat16) is torch.bfloat16
        assert active_dtype(None) is None


# Our answer and torch's own check (an internal op, here only as the reference), side by side.
COMPARE = """
import torch
from ner.common.precision import fused_lstm_keeps_float32_cell
cpu = torch.device("cpu")
print(fused_lstm_keeps_float32_cell(cpu), bool(torch.ops.mkldnn._is_mkldnn_bf16_supported()))
with torch.backends.mkldnn.flags(enabled=False):
    print(fused_lstm_keeps_float32_cell(cpu))
"""


@pytest.mark.filterwarnings("ignore:TF32 acceleration on top of oneDNN")
@pytest.mark.parametrize("isa", [None, "AVX2"])
def test_the_float32_cell_check_agrees_with_torchs_own(isa: str | None) -> None:
    """Where oneDNN multiplies bfloat16 (and only with oneDNN on) the fused LSTM keeps a float32
    cell state; oneDNN limited to AVX2 (``ONEDNN_MAX_CPU_ISA``) never does."""
    env = {k: v for k, v in os.environ.items() if k != "ONEDNN_MAX_CPU_ISA"}
    env.update({"ONEDNN_MAX_CPU_ISA": isa} if isa else {})
    lines = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", COMPARE],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    ours, torchs = lines[0].split()
    assert ours == torchs and lines[1] == "False"
    if isa == "AVX2":
        assert ours == "False"
    assert not fused_lstm_keeps_float32_cell(torch.device("meta"))


@pytest.mark.parametrize(
    ("flags", "precision", "warned"),
    [
        ("fpu avx2 avx512f", "bfloat16", True),
        ("fpu avx512f avx512_bf16", "bfloat16", False),
        ("fpu amx_bf16 amx_tile", "bfloat16", False),
        ("fpu avx2", "float32", False),
    ],
)
def test_warns_when_the_cpu_lacks_bfloat16(tmp_path: Path, caplog, flags, precision, warned):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
    with caplog.at_level(logging.WARNING):
        warn_if_slow(precision, torch.device("cpu"), cpuinfo)
        warn_if_slow(precision, torch.device("cpu"), tmp_path / "missing")  # not Linux: silent
    assert ("no bfloat16 instructions" in caplog.text) == warned


@pytest.mark.parametrize(
    ("flags", "setting", "chosen"),
    [
        ("fpu avx512f avx512_bf16", "auto", "bfloat16"),
        ("fpu amx_bf16 amx_tile", "auto", "bfloat16"),
        ("fpu avx2 avx512f", "auto", "float32"),
        ("fpu avx2", "bfloat16", "bfloat16"),  # asked for: kept (and warned about)
        ("fpu avx512_bf16", "float32", "float32"),
    ],
)
def test_training_precision_auto_follows_the_cpu(tmp_path: Path, flags, setting, chosen):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
    assert training_precision(setting, torch.device("cpu"), cpuinfo) == chosen
    assert training_precision("auto", torch.device("cpu"), tmp_path / "missing") == "float32"
    with pytest.raises(ValueError, match="got 'half'"):
        training_precision("half", torch.device("cpu"), cpuinfo)


def test_training_autocast_is_nothing_in_float32():
    x, w = torch.randn(4, 8), torch.randn(8, 3)
    with training_autocast("float32", torch.device("cpu")):
        assert not torch.is_autocast_enabled("cpu") and (x @ w).dtype == torch.float32
    with training_autocast("bfloat16", torch.device("cpu")):
        assert (x @ w).dtype == torch.bfloat16
