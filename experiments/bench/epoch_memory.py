"""Memory of one training epoch (GloVe-free words ⊕ char-CNN, 1 thread) on the first N CoNLL-2003
training sentences: resident memory before the epoch, after it, and the peak.

    .venv/bin/python experiments/bench/epoch_memory.py 2000
    MALLOC_MMAP_THRESHOLD_=1048576 .venv/bin/python experiments/bench/epoch_memory.py 2000

The second form fixes glibc's threshold above which freed memory goes straight back to the
system; by default glibc raises that threshold (up to 32 MB) as large blocks are freed, so the
tensors of later steps come from a heap that keeps growing.
"""

import sys
import tempfile
import time
from pathlib import Path

from conll_tagger import conll_tagger
from memory_steps import memory  # the same /proc/self/status reading

from ner.training.loop import Trainer


def main() -> None:
    setup = conll_tagger(int(sys.argv[1]))
    model, encoded = setup.model, setup.encoded
    trainer = Trainer(
        model,
        setup.optimizer,
        run_dir=Path(tempfile.mkdtemp()),
        max_epochs=1,
        grad_norm=5.0,
        batch_size=64,
        progress=False,
    )
    print("before the epoch:", memory(), flush=True)
    started = time.perf_counter()
    trainer._train_epoch(encoded.examples, encoded.make_batch)
    print(f"after the epoch: {memory()}, {time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
