"""What each kind of corpus source takes: one dataclass per source whose fields are exactly its
options, with their types, defaults, ranges and choices, the one place they are written.

`ner.data.corpora.prepare_corpus` reads its keyword options into the dataclass of the corpus's
source, so that an option the source does not take is refused, naming the option and the source;
the training schema's ``data.options`` is the union of the dataclasses (`options_schema`), and
``ner-train`` refuses the same options before any data loads.
"""

from dataclasses import dataclass, field, fields, make_dataclass
from typing import Any, ClassVar

from ner.common.errors import InputError
from ner.common.schema import at_least, fraction, one_of
from ner.data.columns import DOCSTART
from ner.data.spans import SPAN_FORMATS
from ner.data.tag_schemes import SCHEMES

# How many tokens a line-based sentence may have (longer: likely missing blank lines).
MAX_SENTENCE_TOKENS = 5000
FORMATS = ("columns", "conllu", *SPAN_FORMATS)


@dataclass
class SourceOptions:
    """What every source takes: the tag scheme to convert to (None: the corpus's own), whether to
    repair tag sequences the scheme does not allow (None: only a named corpus's known errors),
    and the kind of labels (``spans``, ``tokens``; None: detected)."""

    description: ClassVar[str] = "a corpus"
    tag_scheme: str | None = one_of(*SCHEMES, default=None)
    lenient: bool | None = None
    labels: str | None = one_of("spans", "tokens", default=None)


@dataclass
class Carving:
    """Splits carved from train when missing: validation from its end, or a `holdout` fraction
    of it for each missing split."""

    validation_fraction: float | None = fraction()
    holdout: float | None = fraction()


@dataclass
class SeededCarving(Carving):
    """`Carving` with the seed that picks the held-out sentences."""

    holdout_seed: int = 0


@dataclass
class LineOptions:
    """Sentences read line by line: the column that holds the labels, the length limit."""

    label_column: str | None = None
    max_sentence_tokens: int | None = at_least(1, MAX_SENTENCE_TOKENS)


@dataclass
class FileOptions:
    """The user's files: a mapping of splits to paths (else found in the folder), their format
    (None: columns) and encoding."""

    files: dict[str, str] | None = None
    format: str | None = one_of(*FORMATS, default=None)
    encoding: str = "utf-8"


@dataclass
class NamedOptions(LineOptions, Carving, SourceOptions):
    """A named corpus: another copy of its archive or files (`source`), another nltk_data."""

    description: ClassVar[str] = "a named corpus (its files have a fixed format)"
    source: str | None = None
    nltk_data_url: str | None = None


@dataclass
class HubOptions(SeededCarving, SourceOptions):
    """A ``hub:<dataset>`` corpus: its revision (required), configuration and tag column."""

    description: ClassVar[str] = "a hub dataset"
    revision: str | None = None
    hub_config: str | None = None
    tag_column: Any = "ner_tags"


@dataclass
class ConlluOptions(LineOptions, FileOptions, SeededCarving, SourceOptions):
    """CoNLL-U files: fixed columns, the labels picked by name (`label_column`)."""

    description: ClassVar[str] = "CoNLL-U files (fixed columns; label_column= picks the label)"


@dataclass
class ColumnOptions(ConlluOptions):
    """Column files: named `columns`, or `token_column` and `tag_column` by number."""

    description: ClassVar[str] = "column files"
    columns: list[str] | None = None
    token_column: int = 0
    tag_column: Any = -1  # a number
    separator: str | None = None  # None: any whitespace; "tab" and "space" name those
    docstart: str | None = DOCSTART


@dataclass
class SpanOptions(FileOptions, SeededCarving, SourceOptions):
    """Span annotations (character offsets aligned to our tokens, `ner.data.spans.SpanFormat`):
    the tokenizer, what a span off token boundaries becomes, whether malformed records are
    skipped (and counted), whose Label Studio annotations count."""

    description: ClassVar[str] = "span annotations (character offsets aligned to our tokens)"
    tokenizer: str = one_of("news", "social", default="news")
    misaligned: str = one_of("error", "snap", "drop", default="error")
    skip_bad: bool = False
    annotator: str | None = None


SOURCES: dict[str, type[SourceOptions]] = {
    "named": NamedOptions,
    "hub": HubOptions,
    "files": ColumnOptions,
    "conllu": ConlluOptions,
    "spans": SpanOptions,
}


def neutral_values() -> dict[str, list[Any]]:
    """Per option, the values that set nothing: None and its defaults in the sources that take
    it (so that a caller passing every option at its default loads any source)."""
    values: dict[str, list[Any]] = {}
    for source in SOURCES.values():
        for spec in fields(source):
            values.setdefault(spec.name, [None]).append(spec.default)
    return values


NEUTRAL = neutral_values()


def options_of(kind: str, name: str, given: dict[str, Any]) -> SourceOptions:
    """`given` (keyword options) as the options of the source `kind` (a key of `SOURCES`) that
    corpus `name` is; raises `InputError` naming the first option it does not take (one at a
    value that sets nothing, `NEUTRAL`, is left out)."""
    source = SOURCES[kind]
    taken = {spec.name for spec in fields(source)}
    for option, value in given.items():
        if option not in taken and value not in NEUTRAL.get(option, [None]):
            raise InputError(
                f"{option}={value!r}: {name} is {source.description}; it does not take it"
            )
    return source(**{option: value for option, value in given.items() if option in taken})


def options_schema() -> type:
    """The union of every source's options as one dataclass, each field nullable with default
    None (the source's own default) and with its range or choices: the training schema's
    ``data.options``. A field that two sources type differently is typed Any."""
    types: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for source in SOURCES.values():
        for spec in fields(source):
            types[spec.name] = spec.type if types.get(spec.name, spec.type) == spec.type else Any
            metadata[spec.name] = spec.metadata
    return make_dataclass(
        "CorpusOptions",
        [
            (
                name,
                Any if typed is Any else typed | None,
                field(default=None, metadata=metadata[name]),
            )
            for name, typed in types.items()
        ],
        namespace={"__doc__": "Options of `ner.data.prepare_corpus`; null: the source's default."},
    )
