"""Span-level precision/recall/F1 with seqeval: conlleval-compatible by default, strict on request;
token accuracy for per-token labels (part of speech and the like).

Default mode reads chunks the way conlleval.pl does (an ``I-X`` after ``O`` opens a chunk), so it
scores IOB1, IOB2 and BIOES files alike. Strict mode only counts chunks that are well formed in
the given scheme. All figures are percentages.
"""

from collections import Counter, defaultdict
from collections.abc import Sequence

from seqeval.scheme import IOB1, IOB2, IOBES

from ner.common.chunks import conlleval_chunks

# seqeval.metrics imports scikit-learn (about a second), which tagging text never needs: the
# functions that score import it when they run.

# seqeval's class for each of `ner.data.tag_schemes.SCHEMES` (a module of the same layer, so
# not imported here; a test checks that the names agree).
SEQEVAL_SCHEMES = {"iob1": IOB1, "iob2": IOB2, "bioes": IOBES}


def _percent(entry: dict[str, float]) -> dict[str, float]:
    return {
        "precision": 100.0 * float(entry["precision"]),
        "recall": 100.0 * float(entry["recall"]),
        "f1": 100.0 * float(entry["f1-score"]),
        "support": int(entry["support"]),
    }


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def _scores(true_positives: int, predicted: int, gold: int) -> dict[str, float]:
    """Precision, recall and F1 (fractions, 0 where undefined) and support, with seqeval's
    arithmetic (so its figures to the last bit)."""
    precision, recall = _ratio(true_positives, predicted), _ratio(true_positives, gold)
    denominator = precision + recall
    f1 = 2.0 * precision * recall / denominator if denominator else 0.0
    return {"precision": precision, "recall": recall, "f1-score": f1, "support": gold}


def _conlleval_report(gold: list[list[str]], predicted: list[list[str]]) -> dict:
    """What seqeval's ``classification_report(gold, predicted, output_dict=True,
    zero_division=0)`` returns for its per-type and micro-average rows, with the chunks read
    once per side (the report reads them ten times, which dominated scoring dev each epoch).
    The sentences are read end to end with an ``O`` after each, as seqeval reads them."""
    chunks: tuple[dict[str, set], dict[str, set]] = (defaultdict(set), defaultdict(set))
    for found, sentences in zip(chunks, (gold, predicted), strict=True):
        flat = [tag for sentence in sentences for tag in (*sentence, "O")]
        for type_name, start, end in conlleval_chunks(flat):
            found[type_name].add((start, end))
    true, pred = chunks
    counts = {
        name: (len(true[name] & pred[name]), len(pred[name]), len(true[name]))
        for name in sorted(set(true) | set(pred))
    }
    rows = {name: _scores(*count) for name, count in counts.items()}
    rows["micro avg"] = _scores(*(sum(count[i] for count in counts.values()) for i in range(3)))
    return rows


def span_scores(
    gold: Sequence[Sequence[str]],
    predicted: Sequence[Sequence[str]],
    *,
    strict: bool = False,
    scheme: str | None = None,
) -> dict:
    """Overall micro P/R/F1 (percent) and per entity type.

    Returns ``{"precision", "recall", "f1", "support", "per_type": {type: {...}}}``. With
    ``strict=True``, `scheme` ("iob1" | "iob2" | "bioes") says how chunks are formed.
    """
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted ones")
    for index, (g, p) in enumerate(zip(gold, predicted, strict=True)):
        if len(g) != len(p):
            raise ValueError(f"sentence {index}: {len(g)} gold tags but {len(p)} predicted ones")
    if strict and scheme not in SEQEVAL_SCHEMES:
        raise ValueError(f"strict mode needs a scheme in {sorted(SEQEVAL_SCHEMES)}, got {scheme!r}")
    gold_lists = [list(g) for g in gold]
    predicted_lists = [list(p) for p in predicted]
    if not any(tag != "O" for sentence in gold_lists + predicted_lists for tag in sentence):
        # seqeval has no "micro avg" row when there are no chunks at all.
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0, "per_type": {}}
    if strict:
        from seqeval.metrics import classification_report

        report = classification_report(
            gold_lists,
            predicted_lists,
            output_dict=True,
            zero_division=0,
            mode="strict",
            scheme=SEQEVAL_SCHEMES[scheme],
        )
    else:
        report = _conlleval_report(gold_lists, predicted_lists)
    averages = {"micro avg", "macro avg", "weighted avg"}
    return {
        **_percent(report["micro avg"]),
        "per_type": {name: _percent(row) for name, row in report.items() if name not in averages},
    }


def evaluate_tags(
    gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]], scheme: str
) -> dict:
    """Default (conlleval) scores, with the strict-mode scores under the ``"strict"`` key."""
    scores = span_scores(gold, predicted)
    scores["strict"] = span_scores(gold, predicted, strict=True, scheme=scheme)
    return scores


def token_scores(
    gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]], *, top_errors: int = 20
) -> dict:
    """Token accuracy (percent) for per-token labels, with precision/recall/F1 per label and the
    most frequent confusions.

    Returns ``{"accuracy", "correct", "support" (tokens), "per_label": {label: {"precision",
    "recall", "f1", "support"}}, "confusions": [{"gold", "predicted", "count"}, ...]}``; the
    confusions are the `top_errors` most frequent (gold, predicted) pairs that differ, most
    frequent first (ties by label). A label's support is its gold count.
    """
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted ones")
    pairs: Counter[tuple[str, str]] = Counter()
    for index, (g, p) in enumerate(zip(gold, predicted, strict=True)):
        if len(g) != len(p):
            raise ValueError(f"sentence {index}: {len(g)} gold tags but {len(p)} predicted ones")
        pairs.update(zip(g, p, strict=True))
    total = sum(pairs.values())
    correct = sum(count for (g, p), count in pairs.items() if g == p)
    gold_counts: Counter[str] = Counter()
    predicted_counts: Counter[str] = Counter()
    for (g, p), count in pairs.items():
        gold_counts[g] += count
        predicted_counts[p] += count
    per_label = {}
    for label in sorted(set(gold_counts) | set(predicted_counts)):
        hits = pairs[label, label]
        precision = hits / predicted_counts[label] if predicted_counts[label] else 0.0
        recall = hits / gold_counts[label] if gold_counts[label] else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_label[label] = {
            "precision": 100.0 * precision,
            "recall": 100.0 * recall,
            "f1": 100.0 * f1,
            "support": gold_counts[label],
        }
    errors = sorted(
        ((count, g, p) for (g, p), count in pairs.items() if g != p),
        key=lambda item: (-item[0], item[1], item[2]),
    )
    return {
        "accuracy": 100.0 * correct / total if total else 0.0,
        "correct": correct,
        "support": total,
        "per_label": per_label,
        "confusions": [
            {"gold": g, "predicted": p, "count": count} for count, g, p in errors[:top_errors]
        ],
    }
