"""Ctrl-C and SIGTERM during training: finish the current batch, save a checkpoint, then stop.

Inside `stop_requests()` the first SIGINT or SIGTERM only raises a flag that the training loop
checks after every batch; the loop then saves ``last.pt`` and raises `TrainingInterrupted`,
whose message says how to resume. A second signal interrupts at once (KeyboardInterrupt).
"""

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class TrainingInterrupted(Exception):
    """Training stopped on a signal after saving a checkpoint; `exit_code` is 128 + signal."""

    def __init__(self, run_dir: Path, signal_number: int, where: str) -> None:
        name = signal.Signals(signal_number).name
        super().__init__(f"{name}: stopped {where}; resume with ner-train resume={run_dir}")
        self.exit_code = 128 + signal_number


class StopRequest:
    """Set by the first SIGINT/SIGTERM; `signal_number` says which one arrived."""

    def __init__(self) -> None:
        self.signal_number: int | None = None

    @property
    def requested(self) -> bool:
        return self.signal_number is not None

    def _handle(self, signal_number: int, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt  # a second signal: stop now
        self.signal_number = signal_number


@contextmanager
def stop_requests() -> Iterator[StopRequest]:
    """Catch SIGINT/SIGTERM as a `StopRequest` for the duration of the block (main thread only;
    elsewhere signals keep their usual effect and the request is never set)."""
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request
        return
    previous = {number: signal.signal(number, request._handle) for number in SIGNALS}
    try:
        yield request
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
