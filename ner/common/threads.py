"""Where torch computes: the device and the number of CPU threads, picked the same way by
ner-train, ner-evaluate, ner-predict, ner-serve and ner-pretrain."""

import os

import torch


def cpu_threads(setting: int | str | None) -> int:
    """torch CPU threads: a number, or ``auto`` (or None) = half the cores, 1 to 4.
    Oversubscribed OpenMP threads spin: on a busy 2-core machine 2 threads predicted 17× slower
    than 1 and trained 5× slower (docs/benchmarks.md)."""
    if setting in (None, "auto"):
        return max(1, min(4, (os.cpu_count() or 2) // 2))
    return int(setting)


def pick_device(name: str) -> torch.device:
    """``auto`` → CUDA when available, else CPU. A bare ``cuda`` is this process's GPU: under
    torchrun the one of its ``LOCAL_RANK``, else GPU 0."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(name)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    return device
