"""Chunks read from tags the way conlleval.pl reads them, whatever the tag scheme: the reading of
the default span scores (`ner.metrics`) and of the significance tests (`ner.reporting`)."""

from collections.abc import Sequence


def conlleval_chunks(tags: Sequence[str]) -> list[tuple[str, int, int]]:
    """The chunks of a tag sequence as conlleval.pl reads them, whatever the scheme: (type,
    first, last) with `last` inclusive, in seqeval's default-mode reading (its `get_entities`).

    A tag is its first character (``B``, ``I``, ``E``, ``S``, ``O``) and the type after the
    first hyphen (``_`` without one). A chunk ends after an ``E`` or ``S``, before a ``B``,
    ``S`` or ``O`` that follows a ``B`` or ``I``, and at a change of type; one starts at a
    ``B`` or ``S``, at an ``I`` or ``E`` after ``O``, ``E`` or ``S``, and at a change of type.
    """
    chunks = []
    previous, previous_type, begin = "O", "", 0
    for position, label in enumerate([*tags, "O"]):
        tag, type_name = label[0], label[1:].split("-", maxsplit=1)[-1] or "_"
        changed = previous_type != type_name
        if (
            previous in "ES"
            or (previous in "BI" and tag in "BSO")
            or (previous not in "O." and changed)
        ):
            chunks.append((previous_type, begin, position - 1))
        if tag in "BS" or (previous in "OES" and tag in "IE") or (tag not in "O." and changed):
            begin = position
        previous, previous_type = tag, type_name
    return chunks
