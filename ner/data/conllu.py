"""Reader for CoNLL-U files (Universal Dependencies): one word per line, ten tab-separated columns.

The tagger reads the syntactic words: a multiword-token line (ID ``1-2``, e.g. Spanish ``del``)
is skipped in favour of the word lines that follow it (``de``, ``el``), and empty nodes (ID
``1.1``, enhanced dependencies only) are skipped. Comment lines (``#``) are ignored, except that
``# newdoc`` starts a new document. The label is one column: ``upos``, ``xpos``, ``feats`` (the
whole feature string, ``_`` when a word has none), ``lemma`` or ``deprel``.
"""

from pathlib import Path

from ner.common.errors import InputError
from ner.data.columns import ColumnFormatError, Sentence, _lines, check_sentence_length

FIELDS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")
LABEL_COLUMNS = ("upos", "xpos", "feats", "lemma", "deprel")
# Columns where ``_`` means "not annotated", so it cannot serve as a label.
_REQUIRED = ("upos", "xpos", "lemma", "deprel")


def check_label_column(label_column: str | None) -> str:
    """The CoNLL-U column to label with (default ``upos``), or a ValueError naming the choices."""
    column = (label_column or "upos").lower()
    if column not in LABEL_COLUMNS:
        raise InputError(
            f"label_column={label_column!r} is not a CoNLL-U label column; expected one of "
            f"{', '.join(LABEL_COLUMNS)}"
        )
    return column


def read_conllu_file(
    path: str | Path,
    label_column: str = "upos",
    encoding: str = "utf-8",
    max_sentence_tokens: int | None = 5000,
) -> list[Sentence]:
    """The sentences of a CoNLL-U file as ``tokens`` (FORM) and ``tags`` (`label_column`);
    raises `ColumnFormatError` naming the file and line of malformed input, or of a sentence
    longer than `max_sentence_tokens` words (None: no limit), as the column reader does."""
    path = Path(path)
    index = FIELDS.index(check_label_column(label_column))
    sentences: list[Sentence] = []
    document = 0
    current = Sentence({"tokens": [], "tags": []}, document)

    def finish() -> None:
        nonlocal current
        if current.lines:
            sentences.append(current)
        current = Sentence({"tokens": [], "tags": []}, document)

    for number, line in _lines(path, encoding):
        if not line.strip():
            finish()
            continue
        if line.startswith("#"):
            if line[1:].lstrip().startswith("newdoc") and sentences and not current.lines:
                document += 1
                current.document_id = document
            continue
        values = line.split("\t")
        if len(values) != len(FIELDS):
            raise ColumnFormatError(
                f"{path}:{number}: expected 10 tab-separated CoNLL-U columns, found "
                f"{len(values)}: {line!r}"
            )
        word_id = values[0]
        if "-" in word_id or "." in word_id:  # a multiword token or an empty node
            continue
        if not word_id.isdigit():
            raise ColumnFormatError(f"{path}:{number}: ID {word_id!r} is not a word number")
        form, label = values[1], values[index]
        if not form.strip():
            raise ColumnFormatError(f"{path}:{number}: the FORM column is empty")
        if label == "_" and FIELDS[index] in _REQUIRED:
            raise ColumnFormatError(
                f"{path}:{number}: no {FIELDS[index].upper()} for {form!r} ('_'); does this "
                f"treebank annotate it? (label_column= one of {', '.join(LABEL_COLUMNS)})"
            )
        current.fields["tokens"].append(form)
        current.fields["tags"].append(label)
        current.lines.append(number)
        check_sentence_length(path, current, max_sentence_tokens)
    finish()
    if not sentences:
        raise ColumnFormatError(f"{path}:1: no sentences (the file is empty)")
    return sentences
