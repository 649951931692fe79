"""Resident memory of a command over time: runs it, samples its VmRSS and VmHWM (peak) every
`--every` seconds from /proc, and prints each change of 10 MB or more beside the command's
latest log line, so the step where memory peaks shows up.

    .venv/bin/python experiments/bench/rss_timeline.py -- \
        .venv/bin/python -m ner.cli.train experiment=conll2003_glove logger=none ...
"""

import argparse
import os
import subprocess
import sys
import threading
import time


def memory_mb(pid: int) -> tuple[float, float] | None:
    """VmRSS and VmHWM of `pid` in MB; None once it has exited."""
    try:
        with open(f"/proc/{pid}/status") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
    except (FileNotFoundError, ProcessLookupError):
        return None
    if "VmRSS" not in fields:  # a zombie
        return None
    return tuple(int(fields[key].split()[0]) / 1024 for key in ("VmRSS", "VmHWM"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=0.1, help="seconds between samples")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    started = time.perf_counter()
    process = subprocess.Popen(command, stderr=subprocess.STDOUT, stdout=subprocess.PIPE, text=True)
    last_line = [""]

    def read_output() -> None:
        for line in process.stdout:
            sys.stdout.write(f"{time.perf_counter() - started:8.1f}s | {line}")
            last_line[0] = line.strip()[:100]

    reader = threading.Thread(target=read_output, daemon=True)
    reader.start()
    shown = 0.0
    while (sample := memory_mb(process.pid)) is not None:
        rss, peak = sample
        if abs(rss - shown) >= 10:
            shown = rss
            elapsed = time.perf_counter() - started
            print(f"{elapsed:8.1f}s RSS {rss:6.0f} MB peak {peak:6.0f} MB | {last_line[0]}")
            sys.stdout.flush()
        time.sleep(args.every)
    _, status, usage = os.wait4(process.pid, 0)  # ru_maxrss: the exact peak, in KB
    reader.join()
    code = os.waitstatus_to_exitcode(status)
    print(f"exit {code}; peak {usage.ru_maxrss / 1024:.0f} MB", flush=True)


if __name__ == "__main__":
    main()
