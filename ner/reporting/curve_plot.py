"""`ner-curve`'s figure: test F1 of every run and the mean of each fraction against training
sentences, the fitted power law drawn out to 4× the data with its predictions and intervals, and
the law fitted without the whole set (the held-out check)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter, ScalarFormatter

from ner.reporting.extrapolation import PowerLaw
from ner.reporting.plots import _save  # (importing it selects the file-only backend)


def plot_curve(report: dict[str, Any], path: Path) -> Path:
    """Draw `report` (`ner.reporting.curve_report.curve_report`) into the PNG `path`."""
    figure, axis = plt.subplots(figsize=(6.5, 4.2))
    runs = report["runs"]
    axis.scatter(
        [r["train_sentences"] for r in runs],
        [r["test_f1"] for r in runs],
        s=12, color="0.6", label="runs (one per seed)", zorder=2,
    )  # fmt: skip
    found = report["points"]
    axis.errorbar(
        [p["train_sentences"] for p in found],
        [p["mean_f1"] for p in found],
        yerr=[p["std_f1"] for p in found],
        fmt="o", color="C0", capsize=3, label="mean ± std over seeds", zorder=3,
    )  # fmt: skip
    predictions = report["predictions"]
    sizes = np.geomspace(found[0]["train_sentences"], predictions[-1]["train_sentences"], 200)
    law = PowerLaw(**report["fit"])
    axis.plot(sizes, law.f1(sizes), color="C1", label=f"power law ({report['form']})")
    held = PowerLaw(**report["holdout"]["fit"])
    axis.plot(sizes, held.f1(sizes), color="C1", linestyle=":", label="fitted without 100%")
    extra = [p for p in predictions if p["factor"] > 1]
    axis.errorbar(
        [p["train_sentences"] for p in extra],
        [p["f1"] for p in extra],
        yerr=[[p["f1"] - p["low"] for p in extra], [p["high"] - p["f1"] for p in extra]],
        fmt="s", color="C1", capsize=4, label=f"2×, 4× your data ({report['level']:.0%})",
    )  # fmt: skip
    axis.axvline(
        report["train_sentences"], color="0.4", linewidth=0.8, linestyle="--", label="your data"
    )
    axis.set_xscale("log")
    axis.xaxis.set_major_formatter(ScalarFormatter())
    axis.xaxis.set_minor_formatter(NullFormatter())
    axis.set_xlabel("training sentences (log scale)")
    axis.set_ylabel("test F1")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8)
    return _save(figure, path)
