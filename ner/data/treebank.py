"""The Penn Treebank WSJ sample of nltk_data (``treebank.zip``) as part-of-speech sentences.

The sample holds 199 files, ``wsj_0001`` to ``wsj_0199``, of bracketed parse trees
(``combined/*.mrg``) with gold part-of-speech tags on the leaves. Each tree is one sentence;
its leaves ``(TAG word)`` give the tokens and labels in order. Trace and empty elements
(``-NONE-`` leaves such as ``*T*-1`` or ``0``) are not words and are removed. Each file is one
document. The split is by file, fixed: 1-159 train, 160-179 validation, 180-199 test.
"""

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import datasets

from ner.data.builder import CorpusInfo, SplitSource, build_corpus
from ner.data.columns import ColumnFormatError, Sentence, _lines, check_sentence_length

EMPTY_ELEMENT = "-NONE-"
PTB_SAMPLE_FILES = {"train": (1, 159), "validation": (160, 179), "test": (180, 199)}
_TOKEN = re.compile(r"\(|\)|[^\s()]+")
# What a tree past `max_sentence_tokens` words most likely lacks.
_UNCLOSED = "is a closing bracket missing?"


def wsj_entries(first: int, last: int) -> tuple[str, ...]:
    """The archive entries of files ``wsj_<first>.mrg`` to ``wsj_<last>.mrg`` (inclusive)."""
    return tuple(f"treebank/combined/wsj_{n:04d}.mrg" for n in range(first, last + 1))


def read_mrg(
    path: str | Path, document_id: int = 0, max_sentence_tokens: int | None = 5000
) -> list[Sentence]:
    """The sentences of one bracketed-tree file: leaves ``(TAG word)`` as ``tokens``/``tags``,
    without ``-NONE-`` leaves. Raises `ColumnFormatError` (file:line) on unbalanced brackets
    and on a tree of more than `max_sentence_tokens` words (None: no limit)."""
    path = Path(path)
    sentences: list[Sentence] = []
    depth = 0
    # The atoms since the last "(" at the current depth, to recognise a leaf "( TAG word )".
    pending: list[str] = []
    current = Sentence({"tokens": [], "tags": []}, document_id)
    opened_at = 0
    for number, line in _lines(path, "utf-8"):
        for token in _TOKEN.findall(line):
            if token == "(":
                if depth == 0:
                    opened_at = number
                depth += 1
                pending = []
            elif token == ")":
                if depth == 0:
                    raise ColumnFormatError(f"{path}:{number}: ')' closes no open bracket")
                if len(pending) == 2 and pending[0] != EMPTY_ELEMENT:
                    current.fields["tags"].append(pending[0])
                    current.fields["tokens"].append(pending[1])
                    current.lines.append(number)
                    check_sentence_length(path, current, max_sentence_tokens, _UNCLOSED)
                pending = []
                depth -= 1
                if depth == 0:
                    if current.lines:
                        sentences.append(current)
                    current = Sentence({"tokens": [], "tags": []}, document_id)
            else:
                if depth == 0:
                    raise ColumnFormatError(f"{path}:{number}: {token!r} outside any tree")
                pending.append(token)
    if depth:
        raise ColumnFormatError(f"{path}:{opened_at}: the tree opened here is never closed")
    return sentences


def read_treebank(paths: Sequence[Path], max_sentence_tokens: int | None = 5000) -> list[Sentence]:
    """The sentences of several tree files in order; each file is one document."""
    return [
        sentence
        for index, path in enumerate(paths)
        for sentence in read_mrg(path, index, max_sentence_tokens)
    ]


def build_treebank(
    name: str,
    files: Mapping[str, Sequence[Path]],
    max_sentence_tokens: int | None = 5000,
    **options,
) -> tuple[datasets.DatasetDict, CorpusInfo]:
    """The treebank as a corpus; `files` maps each split to its tree files (read in order);
    `max_sentence_tokens` bounds a tree's words; `options` go to `build_corpus`."""
    splits = {}
    for split, paths in files.items():
        origin = f"{paths[0]} .. {paths[-1].name}" if len(paths) > 1 else str(paths[0])
        splits[split] = SplitSource(read_treebank(paths, max_sentence_tokens), origin)
    return build_corpus(name, splits, **options)
