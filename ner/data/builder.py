"""Turn read sentences into a `datasets.DatasetDict` with validated ClassLabel tags.

The tag scheme is detected over all splits together, every sentence is checked against it (an
error names file and line; ``lenient=True`` repairs and counts instead), and optionally the tags
are converted to another scheme. All splits share one ClassLabel so tag ids mean the same thing.
"""

from dataclasses import asdict, dataclass, field

import datasets

from ner.common.errors import InputError
from ner.data.columns import ColumnFormatError, Sentence
from ner.data.labels import SPANS, TOKENS, check_labels_option, detect_labels
from ner.data.subsets import holdout_splits
from ner.data.tag_schemes import (
    OUTSIDE,
    TagSchemeError,
    convert_tags,
    guess_scheme,
    repair_tags,
    split_tag,
    tags_to_spans,
)

SPLITS = ("train", "validation", "test")
_PREFIX_ORDER = {"B": 0, "I": 1, "E": 2, "S": 3}


@dataclass
class SplitSource:
    """The sentences of one split and where they came from (for error messages)."""

    sentences: list[Sentence]
    origin: str


@dataclass
class CorpusInfo:
    """What preparing a corpus found: the source scheme, the output scheme, repairs, sizes,
    empty sentences dropped per split, and the held-out splits carved from train (`holdout`:
    fraction, seed and the carved split names; None when the corpus has all three). `labels`
    is ``spans`` (chunk tags) or ``tokens`` (one plain label per token, whose schemes are then
    ``tokens``), and `labels_reason` says why (the option, or what detection found). `spans`
    (span annotation formats) counts what aligning the spans found, per split and in total."""

    name: str
    source_scheme: str
    tag_scheme: str
    sentences: dict[str, int]
    tokens: dict[str, int]
    repairs: dict[str, int] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    dropped_empty: dict[str, int] = field(default_factory=dict)
    holdout: dict | None = None
    labels: str = SPANS
    labels_reason: str = ""
    spans: dict[str, dict[str, int]] | None = None  # span formats: `ner.data.spans.SpanReport`s

    def to_dict(self) -> dict:
        return asdict(self)


def label_order(tag: str) -> tuple[int, str, int]:
    """Sort key: ``O`` first, then by entity type, then B, I, E, S."""
    prefix, label = split_tag(tag)
    return (0, "", 0) if tag == OUTSIDE else (1, label, _PREFIX_ORDER[prefix])


def _located(error: Exception, origin: str, sentence: Sentence, position: int | None) -> str:
    line = sentence.lines[position if position is not None else 0]
    return f"{origin}:{line}: {error}"


def _check_prefixes(splits: dict[str, SplitSource]) -> None:
    for source in splits.values():
        for sentence in source.sentences:
            for position, tag in enumerate(sentence.fields["tags"]):
                try:
                    split_tag(tag)
                except TagSchemeError as error:
                    raise ColumnFormatError(
                        _located(error, source.origin, sentence, position)
                        + " (for one plain label per token, e.g. part of speech, pass "
                        "labels=tokens)"
                    ) from None


def _label_mode(
    splits: dict[str, SplitSource], labels: str | None, tag_scheme: str | None
) -> tuple[str, str]:
    """The corpus's label mode and why: the `labels` option, or `detect_labels`."""
    labels = check_labels_option(labels)
    if labels is None:
        sequences = (s.fields["tags"] for src in splits.values() for s in src.sentences)
        labels, reason = detect_labels(sequences)
        reason = f"detected: {reason}"
    else:
        reason = f"labels={labels}"
    if labels == TOKENS and tag_scheme is not None:
        raise InputError(
            f"tag_scheme={tag_scheme}: per-token labels ({reason}) have no chunk scheme to "
            "convert; leave tag_scheme unset, or pass labels=spans for chunk tags"
        )
    return labels, reason


def drop_empty(splits: dict[str, SplitSource]) -> dict[str, int]:
    """Remove sentences without tokens (a hub row with an empty list) from `splits` in place:
    the CRF needs at least one token per sentence. Returns how many each split lost."""
    dropped = {}
    for split, source in splits.items():
        kept = [s for s in source.sentences if s.fields["tokens"]]
        dropped[split] = len(source.sentences) - len(kept)
        if not kept:
            raise ColumnFormatError(f"{source.origin}: the {split} split has no non-empty sentence")
        source.sentences = kept
    return dropped


def complete_splits(
    name: str,
    splits: dict[str, SplitSource],
    validation_fraction: float | None,
    holdout: float | None = None,
    holdout_seed: int = 0,
) -> tuple[dict[str, SplitSource], dict | None]:
    """`splits` in train/validation/test order, and what `holdout` carved (None if nothing).

    A missing validation split is carved from the last `validation_fraction` of train (a
    contiguous tail, so at most one document straddles the cut; the named corpora's layout).
    With `holdout`, every missing split gets that fraction of the train sentences, picked by
    `holdout_seed` and their tokens (`ner.data.subsets`: the same sentences on every run and
    machine, every copy of a repeated sentence on one side). Any other missing split is an
    error."""
    splits = dict(splits)
    if holdout is not None and validation_fraction is not None:
        raise InputError(f"{name}: pass holdout= or validation_fraction=, not both")
    if "validation" not in splits and "train" in splits and validation_fraction is not None:
        if not 0 < validation_fraction < 1:
            raise InputError(f"validation_fraction must be in (0, 1), got {validation_fraction}")
        train = splits["train"]
        cut = len(train.sentences) - max(1, round(len(train.sentences) * validation_fraction))
        if cut < 1:
            raise InputError(f"{name}: {len(train.sentences)} train sentences are too few to carve")
        splits["train"] = SplitSource(train.sentences[:cut], train.origin)
        splits["validation"] = SplitSource(train.sentences[cut:], train.origin)
    carved = [s for s in SPLITS if s not in splits]
    record = None
    if holdout is not None and carved and "train" in splits:
        train = splits["train"]
        tokens = [sentence.fields["tokens"] for sentence in train.sentences]
        indices = holdout_splits(tokens, holdout, holdout_seed, carved)
        for split, chosen in indices.items():
            splits[split] = SplitSource([train.sentences[i] for i in chosen], train.origin)
        record = {"fraction": holdout, "seed": holdout_seed, "splits": carved}
    missing = [s for s in SPLITS if s not in splits]
    if missing:
        them = "them" if len(missing) > 1 else "it"
        hint = f" (pass holdout=0.1 to carve {them} from train)" if "train" in splits else ""
        raise InputError(f"{name}: no {' or '.join(missing)} split{hint}")
    return {s: splits[s] for s in SPLITS}, record


def build_corpus(
    name: str,
    splits: dict[str, SplitSource],
    *,
    lenient: bool = False,
    tag_scheme: str | None = None,
    validation_fraction: float | None = None,
    holdout: float | None = None,
    holdout_seed: int = 0,
    labels: str | None = None,
) -> tuple[datasets.DatasetDict, CorpusInfo]:
    """Drop empty sentences, complete the splits (see `complete_splits`), decide the label mode
    (`labels`: ``spans``, ``tokens`` or None to detect, `ner.data.labels`), then for chunk tags
    validate, repair (if `lenient`) and convert (if `tag_scheme`), and pack into Arrow.
    Per-token labels are kept as they are, sorted by name."""
    dropped = drop_empty(splits)
    splits, carved = complete_splits(name, splits, validation_fraction, holdout, holdout_seed)
    mode, reason = _label_mode(splits, labels, tag_scheme)
    if mode == SPANS:
        _check_prefixes(splits)
        sequences = (s.fields["tags"] for src in splits.values() for s in src.sentences)
        source_scheme = guess_scheme(sequences)
        target = (tag_scheme or source_scheme).lower()
    else:
        source_scheme = target = TOKENS
    repairs: dict[str, int] = {}
    columns: dict[str, dict[str, list]] = {}
    for split, source in splits.items():
        repairs[split] = 0
        for sentence in source.sentences if mode == SPANS else ():
            tags = sentence.fields["tags"]
            try:
                tags_to_spans(tags, source_scheme)
            except TagSchemeError as error:
                if not lenient:
                    raise ColumnFormatError(
                        _located(error, source.origin, sentence, error.position)
                        + " (pass lenient=True to repair such tags)"
                    ) from None
                tags, changed = repair_tags(tags, source_scheme)
                repairs[split] += changed
            sentence.fields["tags"] = convert_tags(tags, source_scheme, target)
        first = source.sentences[0]
        columns[split] = {key: [s.fields[key] for s in source.sentences] for key in first.fields}
        columns[split]["document_id"] = [s.document_id for s in source.sentences]

    found = {t for c in columns.values() for tags in c["tags"] for t in tags}
    ordered = sorted(found, key=label_order) if mode == SPANS else sorted(found)
    names = list(columns[next(iter(columns))])
    features = datasets.Features(
        {
            key: datasets.Value("int32")
            if key == "document_id"
            else datasets.Sequence(
                datasets.ClassLabel(names=ordered) if key == "tags" else datasets.Value("string")
            )
            for key in ["tokens", "tags", *(k for k in names if k not in ("tokens", "tags"))]
        }
    )
    dataset = datasets.DatasetDict(
        {split: datasets.Dataset.from_dict(columns[split], features=features) for split in splits}
    )
    info = CorpusInfo(
        name=name,
        source_scheme=source_scheme,
        tag_scheme=target,
        sentences={split: len(src.sentences) for split, src in splits.items()},
        tokens={
            split: sum(len(s.fields["tokens"]) for s in src.sentences)
            for split, src in splits.items()
        },
        repairs=repairs,
        origins={split: src.origin for split, src in splits.items()},
        dropped_empty={split: dropped.get(split, 0) for split in splits},
        holdout=carved,
        labels=mode,
        labels_reason=reason,
    )
    return dataset, info
