"""Span-level precision/recall/F1 with seqeval: conlleval-compatible by default, strict on request;
the WNUT-17 surface-form scores; token accuracy for per-token labels (part of speech and the like).

Default mode reads chunks the way conlleval.pl does (an ``I-X`` after ``O`` opens a chunk), so it
scores IOB1, IOB2 and BIOES files alike. Strict mode only counts chunks that are well formed in
the given scheme. The surface-form scores (the WNUT-17 shared task's ``wnuteval.py``) count each
distinct (entity text, type) once: how many of the corpus's distinct entities a model found,
rather than how many mentions. All figures are percentages.
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


def _checked(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> None:
    """ValueError unless `gold` and `predicted` have as many sentences, each as many tags."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted ones")
    for index, (g, p) in enumerate(zip(gold, predicted, strict=True)):
        if len(g) != len(p):
            raise ValueError(f"sentence {index}: {len(g)} gold tags but {len(p)} predicted ones")


def _conlleval_chunks(sentences: Sequence[Sequence[str]]) -> dict[str, set]:
    """Each type's chunks, read once as seqeval's default mode reads them: the sentences end to
    end with an ``O`` after each (so no chunk crosses a sentence's end)."""
    found: dict[str, set] = defaultdict(set)
    flat = [tag for sentence in sentences for tag in (*sentence, "O")]
    for type_name, start, end in conlleval_chunks(flat):
        found[type_name].add((start, end))
    return found


def span_counts(
    gold: Sequence[Sequence[str]],
    predicted: Sequence[Sequence[str]],
    *,
    strict: bool = False,
    scheme: str | None = None,
) -> dict[str, list[int]]:
    """Each entity type's [true positives, predicted, gold] chunks, as seqeval's
    ``classification_report`` counts them (default mode: conlleval's reading; `strict`: chunks
    well formed in `scheme`). Chunks lie within a sentence, so the counts of parts of a corpus
    add up to the whole's."""
    _checked(gold, predicted)
    if strict and scheme not in SEQEVAL_SCHEMES:
        raise ValueError(f"strict mode needs a scheme in {sorted(SEQEVAL_SCHEMES)}, got {scheme!r}")
    if strict:
        from seqeval.scheme import Entities

        true_entities, pred_entities = (
            Entities([list(s) for s in side], SEQEVAL_SCHEMES[scheme]) for side in (gold, predicted)
        )
        names = true_entities.unique_tags | pred_entities.unique_tags
        true = defaultdict(set, {name: true_entities.filter(name) for name in names})
        pred = defaultdict(set, {name: pred_entities.filter(name) for name in names})
    else:
        true, pred = _conlleval_chunks(gold), _conlleval_chunks(predicted)
    names = sorted(set(true) | set(pred))
    return {
        name: [len(true[name] & pred[name]), len(pred[name]), len(true[name])] for name in names
    }


def surface_forms(
    tokens: Sequence[Sequence[str]],
    gold: Sequence[Sequence[str]],
    predicted: Sequence[Sequence[str]],
) -> dict[str, dict[str, list[str]]]:
    """Each entity type's distinct surface forms (the chunk's tokens joined by a space), sorted:
    ``gold``, ``predicted`` and ``correct`` (those of predicted chunks that match a gold chunk
    in place and type), as ``wnuteval.py`` collects them (chunks in conlleval's reading). The
    forms of parts of a corpus, merged (`merge_surface_forms`), are the whole's."""
    _checked(gold, predicted)
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for words, g, p in zip(tokens, gold, predicted, strict=True):
        if len(words) != len(g):
            raise ValueError(f"{len(words)} tokens but {len(g)} gold tags: {' '.join(words)!r}")
        true, pred = set(conlleval_chunks(g)), set(conlleval_chunks(p))
        for side, chunks in (("gold", true), ("predicted", pred), ("correct", true & pred)):
            for type_name, first, last in chunks:
                found[type_name][side].add(" ".join(words[first : last + 1]))
    return {
        name: {side: sorted(found[name][side]) for side in ("gold", "predicted", "correct")}
        for name in sorted(found)
    }


def merge_surface_forms(
    into: dict[str, dict[str, list[str]]], other: dict[str, dict[str, list[str]]]
) -> None:
    """Add `other`'s surface forms (`surface_forms`) to `into`'s."""
    for name, sides in other.items():
        mine = into.setdefault(name, {"gold": [], "predicted": [], "correct": []})
        for side, forms in sides.items():
            mine[side] = sorted(set(mine[side]) | set(forms))


def surface_scores(forms: dict[str, dict[str, list[str]]]) -> dict:
    """Surface-form precision, recall and F1 (percent; support: distinct gold forms), overall
    and ``per_type``, from `surface_forms`: ``wnuteval.py``'s "surface form" figures."""
    counts = {
        name: [len(sides["correct"]), len(sides["predicted"]), len(sides["gold"])]
        for name, sides in forms.items()
    }
    return counted_span_scores(counts)


def counted_span_scores(counts: dict[str, list[int]]) -> dict:
    """`span_scores`'s figures from `span_counts` (of a whole corpus, or summed over its parts)."""
    total = _scores(*(sum(count[i] for count in counts.values()) for i in range(3)))
    return {
        **_percent(total),
        "per_type": {name: _percent(_scores(*counts[name])) for name in sorted(counts)},
    }


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
    return counted_span_scores(span_counts(gold, predicted, strict=strict, scheme=scheme))


def evaluate_tags(
    gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]], scheme: str
) -> dict:
    """Default (conlleval) scores, with the strict-mode scores under the ``"strict"`` key."""
    scores = span_scores(gold, predicted)
    scores["strict"] = span_scores(gold, predicted, strict=True, scheme=scheme)
    return scores


def token_pairs(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> Counter:
    """How often each (gold, predicted) label pair occurs: what `token_scores` counts, which
    adds up over the parts of a corpus."""
    _checked(gold, predicted)
    pairs: Counter[tuple[str, str]] = Counter()
    for g, p in zip(gold, predicted, strict=True):
        pairs.update(zip(g, p, strict=True))
    return pairs


def token_scores(
    gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]], *, top_errors: int = 20
) -> dict:
    """Token accuracy (percent) for per-token labels (`counted_token_scores` of `token_pairs`)."""
    return counted_token_scores(token_pairs(gold, predicted), top_errors=top_errors)


def counted_token_scores(pairs: Counter, *, top_errors: int = 20) -> dict:
    """Token accuracy (percent) from `token_pairs`, with precision/recall/F1 per label and the
    most frequent confusions.

    Returns ``{"accuracy", "correct", "support" (tokens), "per_label": {label: {"precision",
    "recall", "f1", "support"}}, "confusions": [{"gold", "predicted", "count"}, ...]}``; the
    confusions are the `top_errors` most frequent (gold, predicted) pairs that differ, most
    frequent first (ties by label). A label's support is its gold count.
    """
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
