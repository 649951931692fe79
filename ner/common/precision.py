"""The precision of the biLM's and the tagger's matrix products: ``float32`` or ``bfloat16``.

Prediction spends most of its time in the matrix products of two LSTMs (the biLM's and the
tagger's). In ``bfloat16`` those products take bfloat16 operands, which CPUs with bfloat16
instructions (AVX512-BF16, AMX) and GPUs multiply about twice as fast; everything else (the
char-CNNs, the scalar mix, the LSTM cell state, the CRF) stays in float32. The tagger's BiLSTM
runs torch's fused kernel, which keeps a float32 cell state only through oneDNN (CPUs); where
torch runs another kernel (GPUs, CPUs without bfloat16 support) that BiLSTM stays in float32.
It changes numbers: span confidences move by about 0.01 and a tag changes now and then
(docs/serving.md, "Faster prediction in bfloat16", has the measured figures). A tagger always
trains in float32: the setting only acts while no gradient is taken.

Pretraining (`pretrain.precision`) trains in mixed precision instead: `training_autocast` runs the
forward pass under `torch.autocast`, which gives every matrix product and convolution bfloat16
operands while the weights, their gradients, the optimizer state and the loss stay float32.
"""

import contextlib
import functools
import logging
from pathlib import Path

import torch

PRECISIONS = {"float32": None, "bfloat16": torch.bfloat16}
BFLOAT16_CPU_FLAGS = {"avx512_bf16", "amx_bf16"}  # /proc/cpuinfo flags of native bfloat16 products
CPUINFO = Path("/proc/cpuinfo")
log = logging.getLogger(__name__)


def product_dtype(precision: str) -> torch.dtype | None:
    """The dtype of the LSTM products for a precision name (None: the weights' own, float32)."""
    if precision not in PRECISIONS:
        choices = ", ".join(PRECISIONS)
        raise ValueError(f"precision must be one of {choices}, got {precision!r}")
    return PRECISIONS[precision]


def active_dtype(dtype: torch.dtype | None) -> torch.dtype | None:
    """`dtype` while no gradient is taken, else None: training keeps the weights' float32."""
    return None if torch.is_grad_enabled() else dtype


def fused_lstm_keeps_float32_cell(device: torch.device) -> bool:
    """Whether torch's fused LSTM kernel on `device` runs bfloat16 products with a float32 cell
    state. oneDNN's does when given a float32 initial cell state; torch runs bfloat16 LSTMs
    through oneDNN on CPUs with bfloat16 support. Its other kernels (its own CPU kernel, cuDNN)
    want the cell state in the products' dtype."""
    if device.type != "cpu" or not (
        torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled
    ):
        return False
    return _cpu_lstm_keeps_float32_cell()


@functools.cache
def _cpu_lstm_keeps_float32_cell() -> bool:
    """Asked of torch once (oneDNN on): whether a one-step CPU LSTM given bfloat16 inputs and
    weights and a float32 cell state answers in bfloat16 with a float32 cell state, as oneDNN's
    kernel does; torch's own kernel promotes everything to float32 instead."""
    bfloat16 = torch.bfloat16
    weights = [torch.zeros(4, 1, dtype=bfloat16), torch.zeros(4, 1, dtype=bfloat16)]
    weights += [torch.zeros(4, dtype=bfloat16), torch.zeros(4, dtype=bfloat16)]
    state = (torch.zeros(1, 1, 1, dtype=bfloat16), torch.zeros(1, 1, 1))
    inputs = torch.zeros(1, 1, 1, dtype=bfloat16)
    try:
        with torch.no_grad():
            output, _, cell = torch.lstm(inputs, state, weights, True, 1, 0.0, False, False, True)
    except RuntimeError:  # a kernel that refuses the mix
        return False
    return output.dtype == bfloat16 and cell.dtype == torch.float32


def has_bfloat16(device: torch.device, cpuinfo: Path = CPUINFO) -> bool:
    """Whether `device` multiplies bfloat16 natively: a GPU that supports it without emulation, or
    a CPU whose flags in `cpuinfo` (Linux's) include AVX512-BF16 or AMX-BF16 (False without it)."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported(including_emulation=False)
    if device.type != "cpu" or not cpuinfo.exists():
        return False
    return bool(set(cpuinfo.read_text(errors="replace").split()) & BFLOAT16_CPU_FLAGS)


def warn_if_slow(precision: str, device: torch.device, cpuinfo: Path = CPUINFO) -> None:
    """Log a warning when bfloat16 is asked for on a CPU without bfloat16 instructions (where
    `cpuinfo`, Linux's, says): there it is emulated and slower than float32."""
    if precision != "bfloat16" or device.type != "cpu" or not cpuinfo.exists():
        return
    if not has_bfloat16(device, cpuinfo):
        log.warning(
            "precision bfloat16: this CPU has no bfloat16 instructions (%s), so it will run "
            "slower than in float32",
            ", ".join(sorted(BFLOAT16_CPU_FLAGS)),
        )


def training_precision(setting: str, device: torch.device, cpuinfo: Path = CPUINFO) -> str:
    """The precision a training run uses: `setting`, or for ``auto`` bfloat16 where `device`
    multiplies it natively and float32 elsewhere."""
    if setting == "auto":
        return "bfloat16" if has_bfloat16(device, cpuinfo) else "float32"
    product_dtype(setting)  # checks the name
    return setting


def training_autocast(
    precision: str, device: torch.device
) -> contextlib.AbstractContextManager[object]:
    """The context of a training step's forward pass: `torch.autocast` to bfloat16 on `device`'s
    type (CPU or CUDA), or nothing at all for float32, so that a float32 step is exactly the step
    without this context."""
    dtype = product_dtype(precision)
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=dtype)
