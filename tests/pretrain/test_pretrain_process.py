"""A pretraining process keeps the large tensors it frees for the next step (no fresh mapping, so
no page faults when the step allocates them again). Run in a child process: the allocator
setting is process-wide."""

import json
import os
import subprocess
import sys

import pytest

CHILD = """
import ctypes, json, sys
import torch
from ner.pretrain.trainer import setup_process

class MallInfo2(ctypes.Structure):  # glibc's struct mallinfo2: ten size_t counters
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
if sys.argv[1] == "setup":
    setup_process(1)

def mapped_bytes():
    return libc.mallinfo2().hblkhd  # bytes in blocks mapped on their own

before = mapped_bytes()
logits = torch.empty(2560, 2048)  # 21 MB, the sampled logits of the shipped shape
logits.fill_(1.0)
print(json.dumps({"mapped": mapped_bytes() - before, "threads": torch.get_num_threads()}))
"""


def mapped_by_a_large_tensor(mode: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUNABLES"))}
    result = subprocess.run(
        [sys.executable, "-c", CHILD, mode], capture_output=True, text=True, check=True, env=env
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_setup_process_keeps_large_tensors_in_the_heap() -> None:
    default = mapped_by_a_large_tensor("default")
    assert default["mapped"] >= 2560 * 2048 * 4  # glibc maps a fresh 21 MB block of its own
    tuned = mapped_by_a_large_tensor("setup")
    assert tuned == {"mapped": 0, "threads": 1}  # served from the heap, reused once freed
