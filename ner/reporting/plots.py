"""The report's PNG plots for one corpus: dev F1 (or accuracy) per epoch, ELMo mix weights,
per-type (per-label) test F1."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from ner.common.file_names import file_inside

# PNG metadata without the matplotlib version, so unchanged data gives an unchanged file.
METADATA = {"Software": None}


def _colors(count: int) -> list:
    return [plt.get_cmap("tab10")(i % 10) for i in range(count)]


def _save(figure: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=110, metadata=METADATA)
    plt.close(figure)
    return path


def dev_f1_per_epoch(summaries: Sequence[dict[str, Any]], path: Path) -> Path:
    """One line per variant: the mean dev F1 (accuracy for per-token labels) over the seeds
    scored at each epoch, with each seed's curve drawn thin behind it (epochs without a dev
    score, None, are left out)."""
    score = summaries[0].get("metric", "f1")
    name = {"f1": "F1"}.get(score, score)
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for summary, color in zip(summaries, _colors(len(summaries)), strict=True):
        curves = summary[f"dev_{score}_per_epoch"]
        scored: dict[int, list[float]] = {}  # epoch → the seeds' dev F1
        for curve in curves:
            points = [(epoch, f1) for epoch, f1 in enumerate(curve, start=1) if f1 is not None]
            for epoch, f1 in points:
                scored.setdefault(epoch, []).append(f1)
            axes.plot(*zip(*points, strict=True), color=color, alpha=0.25, linewidth=0.8)
        epochs = sorted(scored)
        mean = [np.mean(scored[epoch]) for epoch in epochs]
        label = f"{summary['variant']} (n={len(curves)})"
        axes.plot(epochs, mean, color=color, linewidth=2, label=label)
    axes.set(
        xlabel="epoch", ylabel=f"dev {name} (%)", title=f"{summaries[0]['corpus']}: dev {name}"
    )
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return _save(figure, path)


def _grouped_bars(
    axes: plt.Axes,
    labels: Sequence[str],
    series: Sequence[tuple[str, list[dict[str, Any]]]],
    value_format: str,
) -> None:
    """Bars per label, one per series entry (name, stats per label), with ± std error bars and
    the mean written on each bar."""
    width = 0.8 / max(len(series), 1)
    positions = np.arange(len(labels))
    for index, ((name, entries), color) in enumerate(
        zip(series, _colors(len(series)), strict=True)
    ):
        means = [np.nan if e["mean"] is None else e["mean"] for e in entries]
        errors = [0.0 if e["std"] is None else e["std"] for e in entries]
        bars = axes.bar(
            positions + (index - (len(series) - 1) / 2) * width,
            means,
            width,
            yerr=errors,
            capsize=2,
            label=name,
            color=color,
        )
        axes.bar_label(bars, fmt=value_format, fontsize=7, padding=2)
    axes.set_xticks(positions, labels)
    axes.grid(axis="y", alpha=0.3)
    axes.legend(fontsize=8)


def mix_weights(summaries: Sequence[dict[str, Any]], path: Path) -> Path:
    """The mean softmax weight of each biLM layer per variant (± std over seeds)."""
    mixed = [s for s in summaries if s["mix"]]
    layers = sorted({layer for s in mixed for layer in s["mix"]["layers"]})
    empty = {"mean": None, "std": None}
    series = []
    for s in mixed:
        by_layer = dict(zip(s["mix"]["layers"], s["mix"]["weights"], strict=True))
        gamma = s["mix"]["gamma"]["mean"]
        series.append((f"{s['variant']} (γ={gamma:.2f})", [by_layer.get(i, empty) for i in layers]))
    figure, axes = plt.subplots(figsize=(7, 4.5))
    _grouped_bars(axes, [f"layer {i}" for i in layers], series, "%.2f")
    axes.set(ylabel="mix weight", title=f"{summaries[0]['corpus']}: learned ELMo layer weights")
    return _save(figure, path)


def per_type_f1(summaries: Sequence[dict[str, Any]], path: Path) -> Path:
    """Test F1 per entity (or chunk) type, or per label, and variant (± std over seeds)."""
    types = sorted({name for s in summaries for name in s["per_type_test_f1"]})
    empty = {"mean": None, "std": None}
    series = [
        (s["variant"], [s["per_type_test_f1"].get(t, empty) for t in types]) for s in summaries
    ]
    figure, axes = plt.subplots(figsize=(max(7, 0.9 * len(types) * max(len(series), 2) / 2), 4.5))
    _grouped_bars(axes, types, series, "%.1f")
    # Zoom on the range the scores occupy: differences of a point matter here.
    lows = [e["mean"] - (e["std"] or 0) for _, entries in series for e in entries if e["mean"]]
    if lows:
        axes.set_ylim(bottom=max(0.0, min(lows) - 5), top=100)
    kind = "type" if summaries[0].get("metric", "f1") == "f1" else "label"
    axes.set(ylabel="test F1 (%)", title=f"{summaries[0]['corpus']}: test F1 per {kind}")
    return _save(figure, path)


def corpus_plots(summaries: Sequence[dict[str, Any]], folder: Path) -> list[tuple[str, Path]]:
    """All plots of one corpus's variants into `folder`: [(title, path)]; file names made from
    the corpus name stay inside `folder` (`ner.common.file_names`)."""
    corpus = summaries[0]["corpus"]
    score = summaries[0].get("metric", "f1")
    name = {"f1": "F1"}.get(score, score)
    kind = "type" if score == "f1" else "label"
    plots = [
        (
            f"dev {name} per epoch",
            dev_f1_per_epoch(summaries, file_inside(folder, f"dev_{score}_{corpus}", ".png")),
        ),
        (
            f"test F1 per {kind}",
            per_type_f1(summaries, file_inside(folder, f"per_type_f1_{corpus}", ".png")),
        ),
    ]
    if any(s["mix"] for s in summaries):
        path = file_inside(folder, f"mix_weights_{corpus}", ".png")
        plots.append(("ELMo mix weights", mix_weights(summaries, path)))
    return plots
