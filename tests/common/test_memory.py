"""Handing freed memory back to the system, measured in a fresh Python process (glibc only)."""

import subprocess
import sys

import pytest

from ner.common import memory

pytestmark = pytest.mark.skipif(memory._LIBC is None, reason="needs glibc's malloc")

# Resident MB before and after a 12 MB block is written and freed, once glibc has seen a 16 MB
# block come and go (which, left to itself, makes it serve blocks up to 16 MB from its heap).
PROGRAM = """
import numpy as np
from ner.common.memory import pin_mmap_threshold, release_free_memory

def resident_mb():
    with open("/proc/self/status") as status:
        fields = dict(line.split(":", 1) for line in status)
    return int(fields["VmRSS"].split()[0]) / 1024

pinned = pin_mmap_threshold() if PIN else False
np.ones(16 << 20, np.uint8)  # made and freed
before = resident_mb()
block = np.ones(12 << 20, np.uint8)
keep = np.ones(64 << 10, np.uint8)  # above the block: the heap cannot shrink from its top
del block
freed = resident_mb()
blocks = [np.ones(1 << 20, np.uint8) for _ in range(24)]  # 24 MB below the threshold
keep_too = np.ones(64 << 10, np.uint8)
del blocks
kept = resident_mb()
release_free_memory()
print(pinned, freed - before, kept - before, resident_mb() - before)
"""


def run(pin: bool) -> tuple[bool, float, float, float]:
    output = subprocess.run(
        [sys.executable, "-c", f"PIN = {pin}\n{PROGRAM}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return output[0] == "True", *map(float, output[1:])


def test_a_freed_block_above_the_pinned_threshold_leaves_the_process():
    pinned, after_free, heap_kept, trimmed = run(pin=True)
    assert pinned
    assert after_free < 4, f"{after_free:.1f} MB of a freed 12 MB block stayed resident"
    assert heap_kept > 20  # the small blocks, free in the heap
    assert trimmed < 4, f"{trimmed:.1f} MB stayed resident after release_free_memory"


def test_without_the_pin_glibc_keeps_it_in_its_heap_until_a_trim():
    pinned, after_free, _, trimmed = run(pin=False)
    assert not pinned
    assert after_free > 10  # the behaviour the pin exists for
    assert trimmed < 4, f"{trimmed:.1f} MB stayed resident after release_free_memory"
