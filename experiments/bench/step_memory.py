"""Memory of the training step on the longest batch of a CoNLL-2003 epoch (words ⊕ char-CNN, the
full training split in epoch 1's batch order for seed 1, 1 thread): how far one step on it raises
the peak of a fresh copy of the process (forked after a warm-up step), and the operators that
allocate the most during it (`torch.profiler`, memory allocated by each operator and its callees).
With LIMIT arguments, the step also runs as training runs it with `trainer.max_batch_tokens=LIMIT`
(row chunks of at most LIMIT padded positions, one optimizer step), each in its own fresh copy,
and the script counts the epoch's batches that each limit splits.

    .venv/bin/python experiments/bench/step_memory.py [LIMIT ...]    # e.g. 4096 2048
"""

import os
import sys

import torch
from conll_tagger import conll_tagger
from torch.profiler import ProfilerActivity, profile


def resident_mb() -> tuple[float, float]:
    """Current and peak resident memory of this process, MB."""
    with open("/proc/self/status") as status:
        fields = dict(line.split(":", 1) for line in status)
    return tuple(int(fields[key].split()[0]) / 1024 for key in ("VmRSS", "VmHWM"))


def main() -> None:
    setup = conll_tagger()
    model, optimizer, encoded = setup.model, setup.optimizer, setup.encoded
    examples, batches = encoded.examples, setup.batches
    model.train()

    def step(indices: list[int], max_tokens: int | None = None) -> None:
        batch = encoded.make_batch([examples[i] for i in indices])
        optimizer.zero_grad(set_to_none=True)
        for chunk in batch.split(max_tokens) if max_tokens else [batch]:
            model(chunk)["loss"].backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()

    step(batches[0])  # the optimizer's state exists from here on
    longest = max(batches, key=lambda indices: max(len(examples[i].words) for i in indices))
    length = max(len(examples[i].words) for i in longest)
    print(f"longest batch: {len(longest)} sentences of up to {length} tokens")
    for limit in [None, *(int(argument) for argument in sys.argv[1:])]:
        reader, writer = os.pipe()
        child = os.fork()
        if child == 0:
            before = resident_mb()[0]
            step(longest, limit)
            os.write(writer, f"{resident_mb()[1] - before:.0f}".encode())
            os._exit(0)
        os.waitpid(child, 0)
        rise = os.read(reader, 64).decode()
        if limit is None:
            print(f"one step on it raises the peak by {rise} MB (a forked copy of this process)")
            continue
        padded = [len(b) * max(len(examples[i].words) for i in b) for b in batches]
        split = sum(size > limit for size in padded)
        print(
            f"max_batch_tokens={limit}: the step raises the peak by {rise} MB; "
            f"{split} of the epoch's {len(batches)} batches are split"
        )
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as profiler:
        step(longest)
    print(profiler.key_averages().table(sort_by="cpu_memory_usage", row_limit=12))


if __name__ == "__main__":
    main()
