"""How the process hands freed memory back to the system (glibc's malloc; elsewhere no-ops), how
many compiled kernels oneDNN keeps, and when Python's cyclic garbage collector runs.

glibc serves blocks below its mmap threshold from the heap and keeps them there once freed.
It raises that threshold (up to 32 MB) each time a large block is freed, so a training run's
tensors of up to 32 MB soon all come from the heap, which then grows in holes between live
blocks until it holds hundreds of MB that no tensor uses. Pinning the threshold at 8 MB keeps the
blocks of 8 MB and more (the activations of long batches) out of the heap, without the time it
would cost to map every mid-sized tensor afresh (a lower threshold, or a trim after every step,
made training steps 20–30% slower); trimming returns what the heap has left free between the
phases of a run, e.g. before scoring dev.
"""

import contextlib
import ctypes
import gc
import os
import threading
from collections.abc import Iterator

_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)
HEAP_BLOCK_LIMIT = 8 * 2**20  # bytes; larger blocks are mapped on their own and unmapped on free


def _glibc() -> ctypes.CDLL | None:
    """The C library of this process when it is glibc (it has malloc_trim and mallopt)."""
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    # musl and macOS have neither
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


_LIBC = _glibc()


def _threshold_set_in_environment() -> bool:
    """Whether the environment sets glibc's mmap threshold (the user's choice wins)."""
    return "MALLOC_MMAP_THRESHOLD_" in os.environ or "mmap_threshold" in os.environ.get(
        "GLIBC_TUNABLES", ""
    )


def pin_mmap_threshold(limit: int = HEAP_BLOCK_LIMIT) -> bool:
    """Serve blocks of `limit` bytes or more by their own mapping, so that they go back to the
    system when freed. Leaves a threshold set in the environment (``MALLOC_MMAP_THRESHOLD_`` or
    ``GLIBC_TUNABLES``) alone. Returns whether the threshold was set."""
    if _LIBC is None or _threshold_set_in_environment():
        return False
    return bool(_LIBC.mallopt(_M_MMAP_THRESHOLD, limit))


def release_free_memory() -> None:
    """Return the heap's free pages to the system (glibc's ``malloc_trim(0)``)."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


_M_TRIM_THRESHOLD = -1  # mallopt's parameter number (malloc.h)
REUSE_LIMIT = 2**30  # bytes


def keep_freed_memory(limit: int = REUSE_LIMIT) -> bool:
    """Keep freed blocks below `limit` bytes, and the free top of the heap, for reuse: the opposite
    trade-off to `pin_mmap_threshold`, for a loop that allocates the same large tensors every step.
    A biLM training step (`ner-pretrain`) frees and reallocates tensors of 20-25 MB (sampled
    logits, gate buffers, the softmax gradient); mapped afresh each time, every 4 KB page of them
    faults on first touch. Leaves thresholds set in the environment alone. Returns whether set."""
    if _LIBC is None or _threshold_set_in_environment():
        return False
    # mallopt answers 1 when it accepted the value
    return (
        _LIBC.mallopt(_M_MMAP_THRESHOLD, limit) == 1
        and _LIBC.mallopt(_M_TRIM_THRESHOLD, limit) == 1
    )


KERNEL_CACHE_VARIABLES = ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "DNNL_PRIMITIVE_CACHE_CAPACITY")
KERNEL_CACHE_ENTRIES = 128


def limit_kernel_cache(entries: int = KERNEL_CACHE_ENTRIES) -> bool:
    """Keep at most `entries` compiled oneDNN kernels (its primitive cache; 1024 by default).
    oneDNN compiles one kernel per input shape of a convolution, a fused LSTM or a bfloat16
    matrix product and keeps it with its buffers; a server that sees batches of every size fills
    all 1024 entries (160-290 MB more than 128 in our runs), where 128 cost no measurable speed
    (experiments/results/bench/serve_memory*.json). Takes effect only before the first oneDNN
    call; leaves a capacity set in the environment alone. Returns whether it set it."""
    if any(name in os.environ for name in KERNEL_CACHE_VARIABLES):
        return False
    os.environ[KERNEL_CACHE_VARIABLES[0]] = str(entries)
    return True


_gc_pauses = 0  # how many `collector_paused` blocks are open, in any thread
_gc_was_enabled = True  # the collector's state when the first of them opened
_gc_lock = threading.Lock()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off inside the block (as it was before, after it).
    Tagging a batch allocates tens of thousands of small objects (tokens, tags, spans), enough to
    set off the collector's full collections, which walk every live container, among them the
    ~190,000 that importing torch leaves: 0.1–0.2 s of a 2-second tag of CoNLL-2003 test on one
    thread. The objects made in the block are freed by reference counting as usual; cycles
    among them wait for the next collection after it. Nested and concurrent
    blocks count: the collector comes back on when the last one closes, and only if it was on."""
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        _gc_pauses += 1
        if _gc_pauses == 1:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()
