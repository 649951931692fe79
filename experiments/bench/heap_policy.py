"""Memory and CPU time of the first N training steps of a CoNLL-2003 epoch (words ⊕ char-CNN,
the full training split in epoch 1's batch order for seed 1, 1 thread) under one glibc heap
policy: the rise of the peak over the memory before the first step, the resident memory after
the last, glibc's own heap figures, and the process CPU time (less disturbed than the wall clock
by other jobs on the machine). The summed loss shows that the policy leaves the arithmetic alone.

    .venv/bin/python experiments/bench/heap_policy.py 100 default
    .venv/bin/python experiments/bench/heap_policy.py 100 mmap:8   # mmap threshold pinned, MB
    .venv/bin/python experiments/bench/heap_policy.py 100 trim:1   # malloc_trim every K steps

Run the policies one after another, alternating, in fresh processes.
"""

import ctypes
import sys
import time

import torch
from conll_tagger import conll_tagger
from memory_steps import memory  # the same /proc/self/status reading

_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


class MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (bytes)."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in [
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        ]
    ]


def main() -> None:
    steps, policy = int(sys.argv[1]), sys.argv[2]
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2
    trim_every = 0
    if policy.startswith("mmap:"):
        libc.mallopt(_M_MMAP_THRESHOLD, int(float(policy[5:]) * 2**20))
    elif policy.startswith("trim:"):
        trim_every = int(policy[5:])
    elif policy != "default":
        raise SystemExit(f"unknown policy {policy!r}: default, mmap:MB or trim:K")
    setup = conll_tagger()
    model, optimizer, encoded = setup.model, setup.optimizer, setup.encoded
    examples, batches = encoded.examples, setup.batches[:steps]
    model.train()
    print(f"{policy}: before the first step: {memory()}", flush=True)
    with open("/proc/self/status") as status:
        before = int(dict(line.split(":", 1) for line in status)["VmRSS"].split()[0]) / 1024
    wall, cpu, total = time.perf_counter(), time.process_time(), 0.0
    for number, indices in enumerate(batches, 1):
        loss = model(encoded.make_batch([examples[i] for i in indices]))["loss"]
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        total += float(loss.detach())
        if trim_every and number % trim_every == 0:
            libc.malloc_trim(0)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    with open("/proc/self/status") as status:
        peak = int(dict(line.split(":", 1) for line in status)["VmHWM"].split()[0]) / 1024
    heap = libc.mallinfo2()
    print(
        f"{policy}: {steps} steps, CPU {cpu:.1f} s (wall {wall:.1f} s), summed loss {total!r}; "
        f"after: {memory()}, peak {peak - before:.0f} MB above the start; glibc heap "
        f"{heap.arena / 2**20:.0f} MB ({heap.fordblks / 2**20:.0f} MB of it free), "
        f"{heap.hblkhd / 2**20:.0f} MB in separate mappings",
        flush=True,
    )


if __name__ == "__main__":
    main()
