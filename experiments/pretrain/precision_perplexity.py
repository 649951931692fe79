"""Does bfloat16 pretraining learn as well as float32? Held-out perplexity after the same steps.

    .venv/bin/python experiments/pretrain/precision_perplexity.py --runs RUNS --steps 2000 \\
        --out experiments/results/pretrain/precision_perplexity.json [OVERRIDE ...]

Starts one `ner-pretrain` process per precision (`pretrain.precision=float32` and `bfloat16`) at
the same time, one thread each, with the same config, seed and corpus (the shipped shape and
default corpus unless OVERRIDEs say otherwise), in RUNS/float32 and RUNS/bfloat16; waits for
both; then writes to --out both runs' held-out perplexity (full softmax, always computed in
float32) at every evaluation (`pretrain.eval_every`) and at the end, the ratio bfloat16 / float32
of each, and both runs' median training speed. Rerunning the same command resumes both runs from
their checkpoints (or, once they are done, only rewrites --out). Their logs: RUNS/*/train.log.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PRECISIONS = ("float32", "bfloat16")
DIRECTIONS = ("forward", "backward")
RECIPE = [  # train_clean.sh's schedule, shortened: Adam, linear decay to 0 at the last step
    "pretrain.threads=1",
    "pretrain.optimizer.lr=0.002",
    "pretrain.lr_schedule=linear",
    "pretrain.state_reset_probability=0.1",
    "pretrain.checkpoint_minutes=10",
    "pretrain.log_every=50",
]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file (none when it does not exist)."""
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def summary(run: Path) -> dict[str, Any]:
    """Held-out perplexities (per evaluation, the last of a repeated step) and speed of a run."""
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    curve = {r["step"]: r for r in read_jsonl(run / "heldout.jsonl")}
    speeds = [r["tokens_per_s"] for r in read_jsonl(run / "log.jsonl")]
    return {
        "precision": metrics["precision"],
        "steps": metrics["steps"],
        "train_seconds": round(metrics["train_seconds"], 1),
        "median_positions_per_s": round(statistics.median(speeds), 1) if speeds else None,
        "final_perplexity": {k: round(metrics["perplexity"][k], 3) for k in DIRECTIONS},
        "heldout_positions": metrics["perplexity"]["heldout_positions"],
        "curve": [
            {
                "step": step,
                "forward": round(r["heldout_forward_ppl"], 3),
                "backward": round(r["heldout_backward_ppl"], 3),
            }
            for step, r in sorted(curve.items())
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, required=True, help="folder of the two runs")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--eval-every", type=int, default=500)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("overrides", nargs="*", help="more ner-pretrain overrides, for both runs")
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[2]
    overrides = [
        *RECIPE,
        f"pretrain.max_steps={args.steps}",
        f"pretrain.eval_every={args.eval_every}",
        *args.overrides,
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    processes = {}
    for precision in PRECISIONS:
        run = args.runs / precision
        run.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "ner.cli.pretrain", *overrides]
        command += [f"pretrain.output_dir={run}", f"pretrain.precision={precision}"]
        log = (run / "train.log").open("a", encoding="utf-8")
        processes[precision] = subprocess.Popen(
            command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    failed = [p for p, process in processes.items() if process.wait()]
    if failed:
        raise SystemExit(f"run(s) {', '.join(failed)} failed: see {args.runs}/*/train.log")
    runs = {p: summary(args.runs / p) for p in PRECISIONS}
    base, mixed = runs["float32"], runs["bfloat16"]
    ratios = {
        k: round(mixed["final_perplexity"][k] / base["final_perplexity"][k], 4) for k in DIRECTIONS
    }
    report = {
        "command": (
            f"experiments/pretrain/precision_perplexity.py --runs RUNS --steps {args.steps} "
            f"--eval-every {args.eval_every} --out experiments/results/pretrain/{args.out.name} "
            + " ".join(args.overrides)
        ).strip(),
        "overrides": overrides,
        "finished_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "perplexity_ratio_bfloat16_over_float32": ratios,
        "within_2_percent": all(r <= 1.02 for r in ratios.values()),
        "curve_ratios": [
            {
                "step": a["step"],
                **{k: round(b[k] / a[k], 4) for k in DIRECTIONS},
            }
            for a, b in zip(base["curve"], mixed["curve"], strict=False)
            if a["step"] == b["step"]
        ],
        **runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
