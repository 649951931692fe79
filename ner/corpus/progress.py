"""Progress of a corpus run on stderr: a tqdm bar (bytes done of the total, lines and tokens per
second, ETA) when stderr is a terminal, a plain line every `PLAIN_EVERY` seconds otherwise,
nothing with ``--quiet``; and at the end one summary line."""

import sys
import time
from typing import TextIO

from ner.corpus.shards import ShardCounts

PLAIN_EVERY = 30.0  # seconds between two plain progress lines


class Progress:
    """Counts what a run tagged and shows it; `total_bytes`: the inputs' sizes on disk."""

    def __init__(
        self, total_bytes: int, *, quiet: bool = False, stream: TextIO | None = None
    ) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.total_bytes = total_bytes
        self.done_bytes = 0
        self.counts = ShardCounts()
        self.kept = 0  # shards finished by an earlier run
        self.started = self.shown = time.perf_counter()
        self.bar = None
        if not quiet and self.stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(
                total=total_bytes, unit="B", unit_scale=True, file=self.stream, leave=False
            )

    def advance(self, size: int, counts: ShardCounts | None = None) -> None:
        """`size` more bytes of input are done: tagged now (`counts`), or before or by another
        ``--shard`` part (None)."""
        self.done_bytes += size
        if counts is not None:
            self.counts.add_up(counts)
        if self.bar is not None:
            self.bar.update(size)
            self.bar.set_postfix_str(self._rates())  # redraws the bar
        elif not self.quiet and time.perf_counter() - self.shown >= PLAIN_EVERY:
            self.shown = time.perf_counter()
            share = self.done_bytes / self.total_bytes if self.total_bytes else 1.0
            elapsed = self.shown - self.started
            eta = elapsed * (1 - share) / share if share else float("nan")
            self.say(
                f"{share:.0%} of {self.total_bytes / 1e6:,.1f} MB, {self.counts.lines:,} lines, "
                f"{self.counts.tokens:,} tokens, {self._rates()}, ETA {eta:,.0f} s"
            )

    def _rates(self) -> str:
        elapsed = max(time.perf_counter() - self.started, 1e-9)
        return (
            f"{self.counts.lines / elapsed:,.0f} lines/s, "
            f"{self.counts.tokens / elapsed:,.0f} tokens/s"
        )

    def say(self, message: str) -> None:
        """A line on stderr (above the bar), ``ner-predict: `` first."""
        line = f"ner-predict: {message}"
        if self.bar is not None:
            self.bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)

    def summary(self, inputs: int) -> str:
        """The closing line: inputs, lines, tokens, entities, skipped, wall time, tokens/s."""
        if self.bar is not None:
            self.bar.close()
        wall = time.perf_counter() - self.started
        counts = self.counts
        kept = f"; {self.kept:,} shards were done before and kept" if self.kept else ""
        return (
            f"{inputs:,} inputs, {counts.lines:,} lines, {counts.tokens:,} tokens, "
            f"{counts.entities:,} entities, {counts.skipped:,} lines skipped in {wall:,.1f} s "
            f"({counts.tokens / max(wall, 1e-9):,.0f} tokens/s){kept}"
        )
