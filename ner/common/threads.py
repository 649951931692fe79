"""How many torch CPU threads to use (shared by ner-train, ner-evaluate and ner-predict)."""

import os


def cpu_threads(setting: int | str | None) -> int:
    """torch CPU threads: a number, or ``auto`` = half the cores, 1 to 4. Oversubscribed OpenMP
    threads spin: on a busy 2-core machine 2 threads predicted 17× slower than 1 and trained 5×
    slower (docs/benchmarks.md)."""
    if setting in (None, "auto"):
        return max(1, min(4, (os.cpu_count() or 2) // 2))
    return int(setting)
