"""Training runs as child processes of a study runner (study.py, learning_curve.py).

Each run is one `ner.cli.train` process in its own process group, its output appended to
``seed<S>.log`` beside the run's folder. A run with a checkpoint but no results is resumed from
it. On SIGTERM or SIGINT the runner passes SIGTERM on to every running child (which saves its
checkpoint after the current batch) and exits, so that rerunning it continues where it stopped
instead of racing a leftover child.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def log(message: str) -> None:
    print(f"[{time.strftime('%Y-%m-%d %H:%M:%S')}] {message}", flush=True)


def launch(
    directory: Path, seed: int, values: list[str], *, resume: bool, name: str
) -> subprocess.Popen:
    """Start the run in `directory`: train with the overrides `values`, or with resume=True
    continue from its last checkpoint (with the config saved there)."""
    directory.mkdir(parents=True, exist_ok=True)
    if resume:
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
        command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
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
