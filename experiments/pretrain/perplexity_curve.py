"""The held-out perplexity curve of a pretraining run, as CSV and PNG.

    .venv/bin/python experiments/pretrain/perplexity_curve.py ~/bilm-run \\
        --out experiments/results/bilm_perplexity.csv

Reads the run's ``heldout.jsonl`` (one row per evaluation, written every `pretrain.eval_every`
steps; an evaluation repeated after a resume counts once, the last one) and, once the run has
finished, its ``metrics.json`` (the exported weights' perplexity, the last row when its step is
new). Writes ``tokens_seen,forward_ppl,backward_ppl`` (positions per direction seen before the
evaluation) and a PNG beside the CSV, with the shipped biLM's held-out perplexity (as its
MODEL_CARD.md states it) as reference lines (measured on its own held-out sentences and
vocabulary, so a guide, not a like-for-like comparison).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from pathlib import Path

from ner.pretrain import PRETRAINED_DIR, SHIPPED_MODEL


def shipped_perplexity(card: Path = PRETRAINED_DIR / SHIPPED_MODEL / "MODEL_CARD.md") -> dict:
    """Direction → the held-out perplexity the shipped biLM's card states (``| forward |
    **87.0** |`` rows)."""
    found = dict(
        re.findall(r"^\| (forward|backward) \| \*\*([0-9.]+)\*\* \|$", card.read_text(), re.M)
    )
    if set(found) != {"forward", "backward"}:
        raise SystemExit(f"{card}: no forward and backward perplexity rows")
    return {direction: float(found[direction]) for direction in ("forward", "backward")}


def curve(run: Path) -> list[tuple[int, float, float]]:
    """(tokens_seen, forward, backward) per evaluation, in step order."""
    rows: dict[int, tuple[int, float, float]] = {}
    log = run / "heldout.jsonl"
    if log.is_file():
        for number, line in enumerate(log.read_text(encoding="utf-8").splitlines(), start=1):
            try:
                record = json.loads(line)
                rows[record["step"]] = (
                    record["tokens_seen"],
                    record["heldout_forward_ppl"],
                    record["heldout_backward_ppl"],
                )
            except (json.JSONDecodeError, KeyError) as error:
                raise SystemExit(f"{log}:{number}: not a held-out record ({error})") from None
    metrics = run / "metrics.json"
    if metrics.is_file():
        final = json.loads(metrics.read_text(encoding="utf-8"))
        ppl = final["perplexity"]
        rows.setdefault(final["steps"], (final["tokens_seen"], ppl["forward"], ppl["backward"]))
    return [rows[step] for step in sorted(rows)]


def plot(points: list[tuple[int, float, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.5, 4.2))
    if points:
        tokens = [p[0] / 1e6 for p in points]
        axis.plot(tokens, [p[1] for p in points], marker="o", label="forward")
        axis.plot(tokens, [p[2] for p in points], marker="o", label="backward")
    for (direction, value), style in zip(shipped_perplexity().items(), (":", "--"), strict=True):
        axis.axhline(value, color="grey", linestyle=style, label=f"shipped biLM, {direction}")
    axis.set_yscale("log")
    axis.set_xlabel("positions seen per direction (millions)")
    axis.set_ylabel("held-out perplexity (full softmax, log scale)")
    axis.grid(alpha=0.3, which="both")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the pretraining output_dir")
    parser.add_argument("--out", type=Path, required=True, help="the CSV (the PNG goes beside it)")
    args = parser.parse_args()
    points = curve(args.run)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["tokens_seen", "forward_ppl", "backward_ppl"])
        writer.writerows((t, f"{f:.2f}", f"{b:.2f}") for t, f, b in points)
    plot(points, args.out.with_suffix(".png"))
    print(f"{len(points)} evaluation(s) -> {args.out}, {args.out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
