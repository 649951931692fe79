"""Tagging a file or stream with a `Tagger` and writing the results (``ner-predict``).

Input formats: ``text``, one document per line, split into sentences and tokenized like CoNLL;
``jsonl``, one JSON object per line whose text field is tagged like ``text`` and whose other
fields are carried through to its output record (`ner.data.tag_input.read_json_lines`);
``tokens``, one pre-tokenized sentence per line, tokens separated by whitespace; ``conll``, CoNLL
blocks (`ner.data.tag_input.read_conll`). Output formats: ``jsonl``, one object per input line
(per sentence for CoNLL input) with the text, its tokens and entities, all with character offsets
into that line, plus each entity's token span and confidence; ``conll``, ``token<TAB>tag`` lines
(for CoNLL input: the input line plus a predicted-tag column, conlleval's layout); ``doccano``,
one doccano JSONL record per input line, and ``label_studio``, one JSON list of Label Studio
tasks with the entities as predictions (`ner.model.pre_annotations`), each a JSON input line's
other fields carried along. The ``html`` page is built from the results themselves
(`KeptResults`, `ner.serving.html.tagger_page`), each as the same `TaggedText.to_json` object as
a jsonl line.

A line that could not be read gets an ``{"line": n, "error": ...}`` record (jsonl) and is handed
to `warn`; the rest is tagged.
"""

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from ner.common.errors import InputError
from ner.data.labels import TOKENS
from ner.data.tag_input import MAX_LINE_CHARS, ConllSentence, Line, read_conll, read_json_lines
from ner.data.tag_schemes import TagSchemeError, split_tag
from ner.model.evaluation import Evaluation
from ner.model.inputs import prepared_lines
from ner.model.pre_annotations import doccano_record, label_studio_task
from ner.model.results import TaggedText
from ner.model.tagger import Tagger

INPUT_FORMATS = ("text", "tokens", "conll", "jsonl")
OUTPUT_FORMATS = ("jsonl", "conll", "html", "doccano", "label_studio")
# Formats whose records hold entity spans: a model of per-token labels has none to write.
SPAN_OUTPUTS = ("doccano", "label_studio")
# The keys of a jsonl output record, which a jsonl input record's own fields may not reuse.
RECORD_KEYS = frozenset({"line", "text", "tokens", "tags", "sentences", "entities", "error"})
# The keys of each format's records (a Label Studio task's data), where they differ.
FORMAT_KEYS = {"doccano": frozenset({"text", "label"}), "label_studio": frozenset({"text"})}
Warn = Callable[[str], None]


@dataclass
class TagCounts:
    """What a tagging call went through: input lines (CoNLL: sentences), tokens, entities."""

    lines: int = 0
    tokens: int = 0
    entities: int = 0

    def add(self, result: TaggedText) -> None:
        self.tokens += len(result.tokens)
        self.entities += len(result.entities)


@dataclass
class KeptResults(TagCounts):
    """`TagCounts` that also keeps the results, in input order (the html page's)."""

    results: list[TaggedText] = field(default_factory=list)

    def add(self, result: TaggedText) -> None:
        super().add(result)
        self.results.append(result)


def _checked(output_format: str) -> str:
    """`output_format`, checked; ``html`` writes nothing while tagging (the page is built from
    the kept results afterwards)."""
    if output_format not in OUTPUT_FORMATS:
        raise ValueError(f"output format must be one of {OUTPUT_FORMATS}, got {output_format!r}")
    return output_format


class RecordWriter:
    """Writes tagged results as the records of a JSON output format: a ``jsonl`` or ``doccano``
    line each, or a Label Studio task each, the items of one JSON list that `close` ends."""

    FORMATS = ("jsonl", "doccano", "label_studio")

    def __init__(self, out: IO[str], output_format: str, model_version: str | None) -> None:
        self.out = out
        self.format = output_format
        self.model_version = model_version
        self.written = 0

    def write(self, number: int, result: TaggedText, fields: dict[str, Any]) -> None:
        """Write the record of `result`, from input line `number`, with the input's `fields`."""
        if self.format == "jsonl":
            record = {"line": number, **result.to_json(), **fields}
        elif self.format == "doccano":
            record = doccano_record(result, fields)
        else:
            record = label_studio_task(result, fields, self.model_version)
        text = json.dumps(record, ensure_ascii=False)
        if self.format == "label_studio":
            self.out.write(("[\n" if self.written == 0 else ",\n") + text)
        else:
            self.out.write(text + "\n")
        self.written += 1

    def close(self) -> None:
        """End the output (a Label Studio list)."""
        if self.format == "label_studio":
            self.out.write("\n]\n" if self.written else "[]\n")


def _record_writer(tagger: Tagger, out: IO[str], output_format: str) -> RecordWriter | None:
    """The `RecordWriter` of a JSON `output_format` (None for the others); InputError for a
    span format and a model of per-token labels, which has no spans to write."""
    if output_format in SPAN_OUTPUTS and tagger.labels == TOKENS:
        raise InputError(
            f"--format {output_format} writes entity spans, and this model tags per-token labels"
        )
    if output_format not in RecordWriter.FORMATS:
        return None
    return RecordWriter(out, output_format, tagger.version)


def _skip(line: Line, output_format: str, out: IO[str], warn: Warn) -> None:
    """Report an unreadable line: to `warn`, and as an error record in jsonl."""
    warn(line.error or "")
    if _checked(output_format) == "jsonl":
        out.write(json.dumps({"line": line.number, "error": line.error}) + "\n")


def _write_tagged_conll(out: IO[str], tokens: list[str], tags: list[str]) -> None:
    for token, tag in zip(tokens, tags, strict=True):
        out.write(f"{token}\t{tag}\n")
    out.write("\n")


def tag_input(
    tagger: Tagger,
    lines: Iterable[Line],
    out: IO[str],
    *,
    input_format: str = "text",
    output_format: str = "jsonl",
    batch_size: int = 64,
    chunk_lines: int = 2000,
    tag_scheme: str | None = None,
    text_field: str = "text",
    warn: Warn = lambda message: None,
    counts: TagCounts | None = None,
) -> tuple[Evaluation | None, int]:
    """Tag input in any of `INPUT_FORMATS`: CoNLL (`tag_and_score_conll`: scored when it has
    gold tags) or lines of text, tokens or JSON records (`tag_lines`; a record's text is its
    `text_field`). Returns the evaluation (None when unscored) and how many sentences or lines
    were skipped; counts: adds what was tagged to it."""
    counts = TagCounts() if counts is None else counts
    if input_format == "conll":
        return tag_and_score_conll(
            tagger,
            lines,
            out,
            output_format=output_format,
            batch_size=batch_size,
            tag_scheme=tag_scheme,
            warn=warn,
            counts=counts,
        )
    lines, input_format = readable_lines(lines, input_format, text_field, output_format)
    skipped = tag_lines(
        tagger,
        lines,
        out,
        input_format=input_format,
        output_format=output_format,
        batch_size=batch_size,
        chunk_lines=chunk_lines,
        warn=warn,
        counts=counts,
    )
    return None, skipped


def chunks(lines: Iterable[Line], count: int, chars: int) -> Iterator[list[Line]]:
    """Runs of at most `count` lines, each ended early once its text reaches `chars` characters:
    a chunk of long lines (each at most `MAX_LINE_CHARS`) is tagged in bounded memory too. Each
    chunk is tagged as one (its sentences batched together), so a corpus run cuts its shards
    here too."""
    chunk: list[Line] = []
    size = 0
    for line in lines:
        chunk.append(line)
        size += len(line.text or "")
        if len(chunk) == count or size >= chars:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def readable_lines(
    lines: Iterable[Line], input_format: str, text_field: str = "text", output_format: str = "jsonl"
) -> tuple[Iterable[Line], str]:
    """`lines` as `tag_lines` takes them, and their format: JSON lines become the lines of their
    `text_field` (format ``text``, the other fields riding along, none of them a key of the
    `output_format`'s records); others are left as they are."""
    if input_format == "jsonl":
        reserved = FORMAT_KEYS.get(output_format, RECORD_KEYS)
        return read_json_lines(lines, text_field, reserved), "text"
    return lines, input_format


def tag_lines(
    tagger: Tagger,
    lines: Iterable[Line],
    out: IO[str],
    *,
    input_format: str = "text",
    output_format: str = "jsonl",
    batch_size: int = 64,
    chunk_lines: int = 2000,
    warn: Warn = lambda message: None,
    counts: TagCounts | None = None,
) -> int:
    """Tag ``text`` or ``tokens`` input `chunk_lines` lines (or `MAX_LINE_CHARS` characters) at
    a time (`chunks`), so that a stream of any length needs bounded memory, and write each
    chunk's results, a line's `Line.fields` included; returns how many lines were skipped;
    counts: adds what was tagged to it."""
    if input_format not in ("text", "tokens"):
        raise ValueError(f"input format must be text or tokens, got {input_format!r}")
    output_format = _checked(output_format)
    counts = TagCounts() if counts is None else counts
    writer = _record_writer(tagger, out, output_format)
    skipped = 0
    for chunk in chunks(lines, chunk_lines, MAX_LINE_CHARS):
        counts.lines += len(chunk)
        texts = [line.text for line in chunk if line.text is not None]
        prepared = texts if input_format == "text" else prepared_lines(texts)
        tagged = iter(tagger.predict(prepared, batch_size=batch_size))
        for line in chunk:
            if line.error:
                skipped += 1
                _skip(line, output_format, out, warn)
                continue
            result = next(tagged)
            counts.add(result)
            if writer is not None:
                writer.write(line.number, result, line.fields or {})
            elif output_format == "conll":
                for start, end in result.sentences:
                    tokens = [t.text for t in result.tokens[start:end]]
                    _write_tagged_conll(out, tokens, result.tags[start:end])
        out.flush()
    if writer is not None:
        writer.close()
    return skipped


def tag_conll(
    tagger: Tagger,
    items: Iterable[ConllSentence | Line],
    out: IO[str],
    *,
    output_format: str = "jsonl",
    batch_size: int = 64,
    warn: Warn = lambda message: None,
    tagged: Sequence[TaggedText] | None = None,
    counts: TagCounts | None = None,
) -> tuple[list[list[str]], int]:
    """Tag the CoNLL blocks among `items` and write them in order, ``-DOCSTART-`` lines kept
    (``conll``); returns the predicted tags of each sentence and how many blocks were skipped.
    tagged: the sentences' results when they are tagged already (e.g. by an evaluation);
    counts: adds what was tagged to it (a sentence counts as a line)."""
    items = list(items)
    output_format = _checked(output_format)
    counts = TagCounts() if counts is None else counts
    writer = _record_writer(tagger, out, output_format)
    if tagged is None:
        sentences = [item.tokens for item in items if isinstance(item, ConllSentence)]
        tagged = tagger.predict_tokens(sentences, batch_size=batch_size)
    results = iter(tagged)
    predicted: list[list[str]] = []
    skipped = 0
    for item in items:
        if isinstance(item, Line) and item.error:
            skipped += 1
            _skip(item, output_format, out, warn)
        elif isinstance(item, Line):
            if output_format == "conll":
                out.write(f"{item.text}\n\n")
        else:
            result = next(results)
            counts.lines += 1
            counts.add(result)
            predicted.append(result.tags)
            if writer is not None:
                gold = {"gold_tags": item.gold} if output_format == "jsonl" else {}
                writer.write(item.first_line, result, gold)
            elif output_format == "conll":
                for raw, tag in zip(item.lines, result.tags, strict=True):
                    out.write(f"{raw}\t{tag}\n")
                out.write("\n")
    if writer is not None:
        writer.close()
    return predicted, skipped


def _first_non_tag(sentences: list[ConllSentence]) -> tuple[int, str] | None:
    """(line number, value) of the first last-column value that is no NER tag, e.g. a POS tag
    of a ``token POS`` file; None when every tagged sentence's last column reads as tags."""
    for sentence in sentences:
        for offset, tag in enumerate(sentence.gold or []):
            try:
                split_tag(tag)
            except TagSchemeError:
                return sentence.first_line + offset, tag
    return None


def tag_and_score_conll(
    tagger: Tagger,
    lines: Iterable[Line],
    out: IO[str],
    *,
    output_format: str = "jsonl",
    batch_size: int = 64,
    tag_scheme: str | None = None,
    warn: Warn = lambda message: None,
    counts: TagCounts | None = None,
) -> tuple[Evaluation | None, int]:
    """Tag CoNLL input (read whole, to know the gold scheme first), write it as `tag_conll`
    does, and score it when every sentence has gold tags in its last column (tagged in the
    gold's scheme unless `tag_scheme` says otherwise; `ner.model.evaluation`). Returns the
    evaluation (None when unscored) and how many blocks were skipped; counts: as `tag_conll`."""
    items = list(read_conll(lines))
    sentences = [item for item in items if isinstance(item, ConllSentence)]
    not_a_tag = None if tagger.labels == TOKENS else _first_non_tag(sentences)
    if not_a_tag is not None:
        warn(
            f"the last column is not NER tags (line {not_a_tag[0]}: {not_a_tag[1]!r} is not 'O' "
            "or <prefix>-<type>); tagging without scores"
        )
        for sentence in sentences:
            sentence.gold = None
    gold = [s.gold for s in sentences]
    evaluation = None
    if sentences and all(g is not None for g in gold):
        evaluation = tagger.evaluate(
            [s.tokens for s in sentences], gold, tag_scheme=tag_scheme, batch_size=batch_size
        )
        for warning in evaluation.warnings:
            warn(warning)
    elif any(g is not None for g in gold):
        warn("some sentences have no gold tags, so nothing was scored")
    tagged = evaluation.tagged if evaluation else None
    _, skipped = tag_conll(
        tagger, items, out, output_format=output_format, batch_size=batch_size, warn=warn,
        tagged=tagged, counts=counts,
    )  # fmt: skip
    return evaluation, skipped
