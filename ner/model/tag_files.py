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

Input is tagged `chunk_lines` lines at a time (CoNLL: blocks; `chunks`), so memory does not
grow with it. CoNLL input is read twice: its gold column first (`read_gold`), to know whether
and in which scheme to score it, then to tag it; each chunk's counts against the gold tags are
added up (`ner.model.evaluation.ScoreCounts`) into the scores of the whole file.

A line that could not be read gets an ``{"line": n, "error": ...}`` record (jsonl) and is handed
to `warn`; the rest is tagged.
"""

import json
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from ner.common.errors import InputError
from ner.data.labels import TOKENS
from ner.data.tag_input import (
    MAX_LINE_CHARS,
    ConllSentence,
    Line,
    read_conll,
    read_json_lines,
    read_lines,
)
from ner.model.evaluation import Evaluation, GoldSurvey, ScoreCounts
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
    gold: GoldSurvey | None = None,
    note: Warn | None = None,
) -> tuple[Evaluation | None, int]:
    """Tag input in any of `INPUT_FORMATS`: CoNLL (`tag_and_score_conll`: scored when it has
    gold tags; gold, note: as there) or lines of text, tokens or JSON records (`tag_lines`; a
    record's text is its `text_field`). Returns the evaluation (None when unscored) and how many
    sentences or lines were skipped; counts: adds what was tagged to it."""
    counts = TagCounts() if counts is None else counts
    if input_format == "conll":
        return tag_and_score_conll(
            tagger,
            lines,
            out,
            output_format=output_format,
            batch_size=batch_size,
            chunk_lines=chunk_lines,
            tag_scheme=tag_scheme,
            warn=warn,
            counts=counts,
            gold=gold,
            note=note,
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


def chunks(
    lines: Iterable[Line], count: int, chars: int, *, conll: bool = False
) -> Iterator[list[Line]]:
    """Runs of at most `count` lines, each ended early once its text reaches `chars` characters:
    a chunk of long lines (each at most `MAX_LINE_CHARS`) is tagged in bounded memory too. Each
    chunk is tagged as one (its sentences batched together), so a corpus run cuts its shards
    here too. `conll`: runs of `count` CoNLL blocks (sentences and ``-DOCSTART-`` lines), each
    cut only at the blank line that ends a block, so that `read_conll` reads the chunks as it
    reads them whole."""
    chunk: list[Line] = []
    size = units = 0
    in_block = False
    for line in lines:
        chunk.append(line)
        size += len(line.text or "")
        blank = line.text is not None and not line.text.strip()
        ends = not conll or (blank and in_block)
        in_block = not blank
        units += ends
        if ends and (units == count or size >= chars):
            yield chunk
            chunk, size, units = [], 0, 0
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
        tagger.forget_token_vectors()  # the chunk's bytes depend on the chunk alone
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


def _tag_conll_chunk(
    tagger: Tagger,
    chunk: list[Line],
    out: IO[str],
    writer: RecordWriter | None,
    output_format: str,
    batch_size: int,
    score: ScoreCounts | None,
    warn: Warn,
    counts: TagCounts,
) -> int:
    """Tag one chunk of CoNLL lines as `tag_and_score_conll` does; returns how many blocks
    were skipped."""
    items = list(read_conll(chunk))
    sentences = [item for item in items if isinstance(item, ConllSentence)]
    tag_scheme = None if score is None or score.scheme == TOKENS else score.tag_scheme
    tagger.forget_token_vectors()  # the chunk's bytes depend on the chunk alone
    tagged = tagger.predict_tokens(
        [s.tokens for s in sentences], batch_size=batch_size, tag_scheme=tag_scheme
    )
    if score is not None:
        score.add(tagged, [s.gold or [] for s in sentences])
    results = iter(tagged)
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
            if writer is not None:
                gold = {"gold_tags": item.gold} if output_format == "jsonl" else {}
                writer.write(item.first_line, result, gold)
            elif output_format == "conll":
                for raw, tag in zip(item.lines, result.tags, strict=True):
                    out.write(f"{raw}\t{tag}\n")
                out.write("\n")
    return skipped


def read_gold(lines: Iterable[Line]) -> GoldSurvey:
    """The gold column of CoNLL lines, read in one pass (`GoldSurvey`)."""
    survey = GoldSurvey()
    for item in read_conll(lines):
        if isinstance(item, ConllSentence):
            survey.add(item.gold, item.first_line)
    return survey


class LinesAgain:
    """The lines of a byte stream, read from its start each time they are iterated (CoNLL
    input is read twice: its gold column, then to tag it); a stream that cannot seek (standard
    input) is copied to a temporary file first."""

    def __init__(self, stream: IO[bytes], encoding: str) -> None:
        if not stream.seekable():
            copy = tempfile.TemporaryFile()  # noqa: SIM115 (it lives as long as this object)
            shutil.copyfileobj(stream, copy)
            stream = copy
        self.stream, self.encoding = stream, encoding

    def __iter__(self) -> Iterator[Line]:
        self.stream.seek(0)
        return read_lines(self.stream, self.encoding)


def tag_and_score_conll(
    tagger: Tagger,
    lines: Iterable[Line],
    out: IO[str],
    *,
    output_format: str = "jsonl",
    batch_size: int = 64,
    chunk_lines: int = 2000,
    tag_scheme: str | None = None,
    warn: Warn = lambda message: None,
    counts: TagCounts | None = None,
    gold: GoldSurvey | None = None,
    note: Warn | None = None,
) -> tuple[Evaluation | None, int]:
    """Tag CoNLL input `chunk_lines` blocks at a time (`chunks`), so that a file of any length
    needs bounded memory, and write its blocks in order, ``-DOCSTART-`` lines kept (``conll``);
    score it when every sentence has gold tags in its last column (tagged in the gold's scheme
    unless `tag_scheme` says otherwise; `ner.model.evaluation`), each chunk's counts added up
    into one evaluation of the whole. Returns the evaluation (None when unscored: the sentences
    are tagged in the model's scheme) and how many blocks were skipped.

    gold: the input's `read_gold`, read here when None: `lines` are then read twice (a
    `LinesAgain`, or a list; a one-shot iterator is held whole). note: where the warnings
    about the gold column go (default: `warn`); counts: adds what was tagged to it (a sentence
    counts as a line)."""
    output_format = _checked(output_format)
    counts = TagCounts() if counts is None else counts
    if gold is None:
        lines = list(lines) if iter(lines) is lines else lines
        gold = read_gold(lines)
    score = gold.counts(tagger.labels, tagger.model.tags, tag_scheme, note or warn)
    writer = _record_writer(tagger, out, output_format)
    skipped = 0
    for chunk in chunks(lines, chunk_lines, MAX_LINE_CHARS, conll=True):
        skipped += _tag_conll_chunk(
            tagger, chunk, out, writer, output_format, batch_size, score, warn, counts
        )
        out.flush()
    if writer is not None:
        writer.close()
    return (None if score is None else Evaluation(score)), skipped
