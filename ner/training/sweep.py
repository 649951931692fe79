"""The resumable runner of many training runs: `ner-curve`'s learning curves, and the study scripts
in experiments/ (study, learning curves, vocabulary tuning).

Each run is one `ner.cli.train` process in its own process group, in its own folder, its output
appended to ``seed<S>.log`` beside that folder. `run_sweep` starts the runs of a queue `jobs` at
a time (one torch thread each), a run whose folder has a checkpoint but no results resuming from
it, and calls back when one ends. On SIGTERM or SIGINT the runner passes SIGTERM on to every
running child (which saves its checkpoint after the current batch) and exits, so that rerunning
it continues where it stopped instead of racing a leftover child.
"""

from __future__ import annotations

import math
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Hashable
from pathlib import Path


def log(message: str) -> None:
    print(f"[{time.strftime('%Y-%m-%d %H:%M:%S')}] {message}", flush=True)


def run_state(directory: Path, finished: bool = False) -> str:
    """``done`` (`finished`, or a results.json in `directory`), ``partial`` (a checkpoint to
    resume from) or ``todo``."""
    if finished or (directory / "results.json").is_file():
        return "done"
    if (directory / "checkpoints" / "last.pt").is_file():
        return "partial"
    return "todo"


def launch(
    directory: Path, seed: int, values: list[str], *, name: str, cwd: Path | None = None
) -> subprocess.Popen:
    """Start the run in `directory`: train with the overrides `values`, or, when the folder has a
    checkpoint, continue from it (with the config saved there). `cwd`: the folder the run starts
    in, against which relative paths in `values` resolve (default: this process's)."""
    directory.mkdir(parents=True, exist_ok=True)
    if run_state(directory) == "partial":
        stamp = time.strftime("%Y%m%d-%H%M%S")
        where = directory / "resumed" / stamp
        values = [f"resume={directory}", f"hydra.run.dir={where}", "progress=false"]
    else:
        values = [*values, f"hydra.run.dir={directory}"]
    command = [sys.executable, "-m", "ner.cli.train", *values]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "WANDB_SILENT": "true"}
    output = open(directory.parent / f"seed{seed}.log", "a")  # noqa: SIM115 (the child's)
    output.write(f"$ {shlex.join(command)}\n")
    output.flush()
    log(f"start {name}")
    return subprocess.Popen(
        command, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
    )


def stop_children_on_signals(running: dict[object, subprocess.Popen]) -> None:
    """On SIGTERM/SIGINT: SIGTERM to the process group of every child in `running` (read when
    the signal arrives), wait for them to save their checkpoints, exit with 128 + signal."""

    def stop(signum: int, _frame: object) -> None:
        log(f"signal {signum}: stopping {len(running)} run(s); rerun to resume them")
        for process in running.values():
            os.killpg(process.pid, signal.SIGTERM)
        for process in running.values():
            process.wait()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)


def run_sweep(
    queue: list[Hashable],
    *,
    jobs: int,
    start: Callable[[Hashable], subprocess.Popen],
    finished: Callable[[Hashable], bool],
    on_done: Callable[[Hashable], None],
    ready: Callable[[Hashable, dict], bool] = lambda _run, _running: True,
    poll: float = 10.0,
    max_minutes: float | None = None,
) -> list[Hashable]:
    """Run every item of `queue` (each with a ``name``), `jobs` at a time: `start(item)` launches
    it; when its process ends with status 0 and `finished(item)`, `on_done(item)` publishes it,
    otherwise it counts as failed. An item waits while `ready(item, running)` is false; after
    `max_minutes` no item starts and the sweep ends once the running ones have. The failed
    items."""
    queue = list(queue)
    deadline = time.monotonic() + 60 * max_minutes if max_minutes else math.inf
    running: dict[Hashable, subprocess.Popen] = {}
    failed: list[Hashable] = []
    stop_children_on_signals(running)
    while queue or running:
        for item, process in list(running.items()):
            if process.poll() is None:
                continue
            del running[item]
            if process.returncode == 0 and finished(item):
                log(f"done {item.name}")
                on_done(item)
            else:
                failed.append(item)
                log(f"FAILED {item.name} (exit {process.returncode}); see its seed log")
        while queue and len(running) < jobs and time.monotonic() < deadline:
            waiting = [item for item in queue if ready(item, running)]
            if not waiting:
                break
            queue.remove(waiting[0])
            running[waiting[0]] = start(waiting[0])
        if time.monotonic() >= deadline and not running:
            log(f"--max-minutes reached; {len(queue)} run(s) left for the next session")
            break
        if queue or running:
            time.sleep(poll)
    return failed
