"""What a corpus's labels are: chunk tags that encode spans, or one plain label per token.

Chunk tags (``O``, ``B-PER``, ``I-LOC``, ...) in IOB1/IOB2/BIOES encode typed spans, scored with
span F1. Other label sets (part of speech: ``NN``, ``VBZ``; UD features) label each token on its
own: no scheme, no conversion, scored with token accuracy. ``labels=None`` detects which: spans
when at least half of the distinct labels are chunk tags (then a stray label is a scheme error,
as a typo in a NER file should be), tokens otherwise.
"""

from collections.abc import Iterable, Sequence

from ner.common.errors import InputError
from ner.data.tag_schemes import TagSchemeError, split_tag

SPANS = "spans"
TOKENS = "tokens"
LABEL_MODES = (SPANS, TOKENS)


def is_chunk_tag(tag: str) -> bool:
    """Whether `tag` is ``O`` or ``<B|I|E|S>-<type>``."""
    try:
        split_tag(tag)
    except TagSchemeError:
        return False
    return True


def detect_labels(sequences: Iterable[Sequence[str]]) -> tuple[str, str]:
    """(``"spans"`` | ``"tokens"``, why): spans when at least half of the distinct labels are
    chunk tags, else tokens; `why` says which labels decided it, for the log."""
    labels = sorted({tag for tags in sequences for tag in tags})
    if not labels:
        return SPANS, "the corpus has no labels"
    other = [tag for tag in labels if not is_chunk_tag(tag)]
    if not other:
        return SPANS, f"all {len(labels)} labels are chunk tags (O, B-X, I-X, E-X, S-X)"
    shown = ", ".join(other[:5]) + (", ..." if len(other) > 5 else "")
    if 2 * len(other) > len(labels):
        return TOKENS, f"{len(other)} of {len(labels)} labels are not chunk tags ({shown})"
    return SPANS, f"{len(labels) - len(other)} of {len(labels)} labels are chunk tags"


def check_labels_option(labels: str | None) -> str | None:
    """`labels` lowercased, or a ValueError naming the allowed values."""
    if labels is None:
        return None
    if labels.lower() not in LABEL_MODES:
        raise InputError(f"unknown labels={labels!r}; expected one of {', '.join(LABEL_MODES)}")
    return labels.lower()
