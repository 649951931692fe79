"""Seed statistics per (corpus, variant): mean ± sample std of dev/test F1 (token accuracy for
per-token labels), per-type (per-label) test F1, epochs, time and ELMo mix weights, as JSON-ready
dicts and Markdown tables.

A group's ``metric`` is ``f1`` or ``accuracy``; its scores are under ``dev_<metric>``,
``test_<metric>`` and ``dev_<metric>_per_epoch``."""

import statistics
from collections.abc import Sequence
from typing import Any

from ner.reporting.runs import Run, differing_settings, metric

METRIC_NAMES = {"f1": "F1", "accuracy": "accuracy"}


def stats(values: Sequence[float | None]) -> dict[str, Any]:
    """``{"mean", "std", "n", "values"}`` of the values that are not None; std is the sample
    std (ddof 1), None for fewer than two values."""
    values = [float(v) for v in values if v is not None]
    return {
        "mean": statistics.fmean(values) if values else None,
        "std": statistics.stdev(values) if len(values) > 1 else None,
        "n": len(values),
        "values": values,
    }


def _mix(runs: Sequence[Run]) -> dict[str, Any] | None:
    """Mean mix weights per mixed layer and γ over the runs that have a mix."""
    mixes = [run.results.get("elmo_mix") or {} for run in runs]
    mixes = [mix for mix in mixes if mix.get("weights")]
    if not mixes:
        return None
    layers = mixes[0].get("layers", list(range(len(mixes[0]["weights"]))))
    return {
        "layers": layers,
        "weights": [stats([mix["weights"][i] for mix in mixes]) for i in range(len(layers))],
        "gamma": stats([mix["gamma"] for mix in mixes]),
    }


PHASES = ("prepare_data", "elmo_features", "train", "dev_eval_during_training", "final_eval")


def run_seconds(times: dict[str, float]) -> float | None:
    """A run's time: the sum of its phases when recorded (training and dev evaluation add up
    over resumed processes, where ``total`` covers only the last process), else ``total``."""
    if "train" in times:
        return sum(times.get(phase, 0.0) for phase in PHASES)
    return times.get("total")


def summarize(corpus: str, variant: str, runs: Sequence[Run]) -> dict[str, Any]:
    """Everything the tables and plots show for one group of seeds."""
    score = metric(runs[0].results)
    rows = "per_label" if score == "accuracy" else "per_type"
    types = sorted({name for run in runs for name in run.results["test"].get(rows, {})})
    per_type = {
        name: stats(
            [run.results["test"][rows][name]["f1"] for run in runs]
            if all(name in run.results["test"].get(rows, {}) for run in runs)
            else []
        )
        for name in types
    }
    times = [run_seconds(run.results.get("time_seconds", {})) for run in runs]
    strict, surface = (
        [run.results["test"].get(mode, {}).get("f1") for run in runs]
        for mode in ("strict", "surface")
    )
    return {
        "corpus": corpus,
        "variant": variant,
        "seeds": [run.seed for run in runs],
        "runs": [str(run.directory) for run in runs],
        "metric": score,
        f"dev_{score}": stats([run.results["dev"][score] for run in runs]),
        f"test_{score}": stats([run.results["test"][score] for run in runs]),
        "test_f1_strict": stats(strict),
        "test_f1_surface": stats(surface),  # runs scored before surface forms were: none
        "per_type_test_f1": per_type,
        "best_epoch": stats([run.results["best_epoch"] for run in runs]),
        "epochs_run": stats([run.results["epochs_run"] for run in runs]),
        "minutes": stats([None if t is None else t / 60 for t in times]),
        "train_tokens_per_second": stats(
            [run.results.get("train_tokens_per_second") for run in runs]
        ),
        "mix": _mix(runs),
        # None for the epochs without a dev score (trainer.eval_every > 1).
        f"dev_{score}_per_epoch": [
            [h.get(f"dev/{score}") for h in run.results["history"]] for run in runs
        ],
        # Seeds whose dev F1 was still improving when max_epochs ended them.
        "still_improving_seeds": [
            run.seed
            for run in runs
            if run.results["best_epoch"] == run.results["epochs_run"]
            and not run.results.get("stopped_early")
        ],
        "differing_settings": differing_settings(runs),
    }


def study_json(summaries: Sequence[dict[str, Any]], corpus: str) -> dict[str, Any]:
    """The study file of one corpus: ``{"variants": {name: {"test_f1", "dev_f1", "seeds"}}}``
    with F1 (``test_accuracy``, ``dev_accuracy`` for per-token labels) in percent, one entry per
    seed in seed order."""
    return {
        "variants": {
            summary["variant"]: {
                **{
                    f"{split}_{summary['metric']}": [
                        round(v, 4) for v in summary[f"{split}_{summary['metric']}"]["values"]
                    ]
                    for split in ("test", "dev")
                },
                "seeds": summary["seeds"],
            }
            for summary in summaries
            if summary["corpus"] == corpus
        }
    }


def format_stats(entry: dict[str, Any], digits: int = 2) -> str:
    """``mean ± std`` (only the mean for one value, ``–`` for none)."""
    if entry["mean"] is None:
        return "–"
    if entry["std"] is None:
        return f"{entry['mean']:.{digits}f}"
    return f"{entry['mean']:.{digits}f} ± {entry['std']:.{digits}f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def markdown(
    summaries: Sequence[dict[str, Any]], plots: dict[str, list[tuple[str, str]]]
) -> list[str]:
    """Markdown lines: per corpus, the main table, per-type test F1, mix weights and plots.

    plots: corpus → [(title, relative path of the PNG)].
    """
    lines: list[str] = []
    for corpus in sorted({s["corpus"] for s in summaries}):
        group = [s for s in summaries if s["corpus"] == corpus]
        score = group[0]["metric"]
        name = METRIC_NAMES[score]
        # Surface-form F1 only where some run has it (runs scored before it was have none).
        surface = any(s["test_f1_surface"]["n"] for s in group)
        modes = ("strict", *(["surface"] if surface else [])) if score == "f1" else ()
        lines += [f"### {corpus}", ""]
        lines += _table(
            [
                *("variant", "seeds", f"dev {name}", f"test {name}"),
                *(f"test F1 ({mode})" for mode in modes),
                *("best epoch", "epochs", "min/run", "train tok/s"),
            ],
            [
                [
                    f"`{s['variant']}`",
                    ", ".join(map(str, s["seeds"])),
                    format_stats(s[f"dev_{score}"]),
                    f"**{format_stats(s[f'test_{score}'])}**",
                    *(format_stats(s[f"test_f1_{mode}"]) for mode in modes),
                    format_stats(s["best_epoch"], 1),
                    format_stats(s["epochs_run"], 1),
                    format_stats(s["minutes"], 1),
                    format_stats(s["train_tokens_per_second"], 0),
                ]
                for s in group
            ],
        )
        types = sorted({name for s in group for name in s["per_type_test_f1"]})
        lines += ["", "Test F1 per type:" if score == "f1" else "Test F1 per label:", ""]
        lines += _table(
            ["variant", *types],
            [
                [f"`{s['variant']}`"]
                + [format_stats(s["per_type_test_f1"].get(t, stats([]))) for t in types]
                for s in group
            ],
        )
        mixed = [s for s in group if s["mix"]]
        if mixed:
            lines += ["", "Learned ELMo mix (softmax weights per biLM layer, γ):", ""]
            lines += _table(
                ["variant", "layers", "weights", "γ"],
                [
                    [
                        f"`{s['variant']}`",
                        ", ".join(map(str, s["mix"]["layers"])),
                        ", ".join(format_stats(w, 3) for w in s["mix"]["weights"]),
                        format_stats(s["mix"]["gamma"], 3),
                    ]
                    for s in mixed
                ],
            )
        lines.append("")
        for title, path in plots.get(corpus, []):
            lines += [f"![{title}]({path})", ""]
    return lines


def settings_warnings(summaries: Sequence[dict[str, Any]]) -> list[str]:
    """One line per setting that differs between a group's seeds, and per group with seeds
    that were still improving at their last epoch (more epochs would likely change them)."""
    warnings = []
    for s in summaries:
        if s["still_improving_seeds"]:
            seeds = ", ".join(map(str, s["still_improving_seeds"]))
            warnings.append(
                f"{s['corpus']}/{s['variant']}: seed(s) {seeds} had their best dev F1 at the last"
                " epoch run (still improving when max_epochs stopped them)"
            )
        for key, values in s["differing_settings"].items():
            pairs = ", ".join(
                f"seed {seed}: {v!r}" for seed, v in zip(s["seeds"], values, strict=True)
            )
            warnings.append(f"{s['corpus']}/{s['variant']}: seeds differ in {key} ({pairs})")
    return warnings
