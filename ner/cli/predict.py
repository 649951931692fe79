"""``ner-predict MODEL INPUT``: tag raw text, pre-tokenized sentences or CoNLL files.

Input formats (``--input-format``):

* ``text`` (default): one document per line, split into sentences and tokenized like CoNLL;
* ``tokens``: one pre-tokenized sentence per line, tokens separated by whitespace;
* ``conll``: one token per line (first column), blank lines between sentences, ``-DOCSTART-``
  lines kept; when every token line has a tag in its last column the predictions are scored
  (conlleval-style and strict seqeval, printed to stderr and written with ``--scores``).

Output formats (``--format``): ``jsonl`` writes one object per input line (per sentence for CoNLL
input) with the text, its tokens and entities, all with character offsets into that line
(Unicode code points, so ``line[start:end] == text``), plus each entity's token span and CRF
confidence; ``conll`` writes ``token<TAB>tag`` lines (for CoNLL input: the input line plus a
predicted-tag column, conlleval's layout); ``html`` writes one self-contained page with every
line's entities highlighted (one colour per type, confidence on hover, a legend), the rendering
of the ``ner-serve`` page, readable offline.

A model of per-token labels (part of speech) finds no entities: its jsonl tokens carry their
``tag`` and ``confidence`` (the label's probability), the ``conll`` column is the label, the html
page shows each label under its token, and gold-labelled CoNLL input is scored by token accuracy.

Bad input never stops the run: a line that is not valid text in ``--encoding`` or holds NUL bytes
(binary data) gets an ``{"line": n, "error": ...}`` record and a warning, and the rest is tagged.
Text input is read and written in chunks of ``--chunk-lines`` lines, so it streams from stdin.
"""

import argparse
import codecs
import contextlib
import io
import json
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import IO, Any

from ner.cli.options import add_model_options
from ner.common.files import atomic_write, write_json
from ner.common.threads import cpu_threads
from ner.data.lines import Undecodable, read_text_lines, splits_as_bytes
from ner.data.tokenize import TOKENIZERS

FORMATS = ("jsonl", "conll", "html")
INPUT_FORMATS = ("text", "tokens", "conll")
DOCSTART = "-DOCSTART-"


@dataclass
class Line:
    """An input line: its number (1-based) and text, or why it could not be read."""

    number: int
    text: str | None
    error: str | None = None


@dataclass
class ConllSentence:
    """A CoNLL block: the raw token lines, tokens and gold tags (None when untagged)."""

    first_line: int
    lines: list[str]
    tokens: list[str]
    gold: list[str] | None


def encoding_name(value: str) -> str:
    """A text encoding Python knows; otherwise argparse reports a one-line usage error."""
    try:
        name = codecs.lookup(value).name
        splits_as_bytes(name)
    except LookupError:
        raise argparse.ArgumentTypeError(f"unknown text encoding {value!r}") from None
    return name


def read_lines(stream: IO[bytes], encoding: str) -> Iterator[Line]:
    """Decode `stream` line by line; undecodable or binary lines carry an error instead."""
    for number, text in read_text_lines(stream, encoding):
        if isinstance(text, Undecodable):
            yield Line(
                number,
                None,
                f"line {number}: {text.where} is not valid {encoding}; skipped (pass --encoding "
                "if the file uses another encoding)",
            )
        elif "\x00" in text:
            yield Line(number, None, f"line {number} holds NUL bytes (binary data?); skipped")
        else:
            yield Line(number, text)


def read_conll(lines: Iterable[Line]) -> Iterator[ConllSentence | Line]:
    """CoNLL blocks, plus `Line`s for ``-DOCSTART-`` lines (text set) and errors (error set).

    A block with an unreadable line is reported once, on its first bad line, and skipped whole.
    """
    block: list[Line] = []

    def finish() -> Iterator[ConllSentence | Line]:
        bad = next((line for line in block if line.error), None)
        if bad is not None:
            yield Line(
                bad.number, None, f"{bad.error}; its sentence (from line {block[0].number}) too"
            )
        elif block:
            columns = [line.text.split() for line in block]  # type: ignore[union-attr]
            tagged = all(len(c) > 1 for c in columns)
            yield ConllSentence(
                block[0].number,
                [line.text for line in block],  # type: ignore[misc]
                [c[0] for c in columns],
                [c[-1] for c in columns] if tagged else None,
            )
        block.clear()

    for line in lines:
        if line.text is not None and not line.text.strip():
            yield from finish()
        elif line.text is not None and line.text.split()[0] == DOCSTART:
            yield from finish()
            yield line
        else:
            block.append(line)
    yield from finish()


def _warn(message: str) -> None:
    print(f"ner-predict: warning: {message}", file=sys.stderr)


def _write_tagged_conll(out: IO[str], tokens: list[str], tags: list[str]) -> None:
    for token, tag in zip(tokens, tags, strict=True):
        out.write(f"{token}\t{tag}\n")
    out.write("\n")


def tag_text_lines(
    tagger: Any, lines: Iterable[Line], args: argparse.Namespace, out: IO[str]
) -> int:
    """Tag `text`/`tokens` input chunk by chunk; returns how many lines were skipped."""
    from ner.model.tagger import whitespace_tokens

    skipped = 0
    lines = iter(lines)
    while chunk := list(islice(lines, args.chunk_lines)):
        good = [line for line in chunk if line.text is not None]
        texts = [line.text for line in good]
        if args.input_format == "text":
            results = tagger.predict(texts, batch_size=args.batch_size)
        else:
            sentences = [[whitespace_tokens(t)] if t.strip() else [] for t in texts]
            results = tagger.tag_tokenized(texts, sentences, args.batch_size)
        tagged = iter(results)
        for line in chunk:
            if line.error:
                skipped += 1
                _warn(line.error)
                if args.format in ("jsonl", "html"):
                    out.write(json.dumps({"line": line.number, "error": line.error}) + "\n")
                continue
            result = next(tagged)
            if args.format in ("jsonl", "html"):
                record = {"line": line.number, **result.to_json()}
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
            else:
                for start, end in result.sentences:
                    _write_tagged_conll(
                        out, [t.text for t in result.tokens[start:end]], result.tags[start:end]
                    )
        out.flush()
    return skipped


def _first_non_tag(sentences: list[ConllSentence]) -> tuple[int, str] | None:
    """(line number, value) of the first last-column value that is no NER tag, e.g. a POS tag
    of a ``token POS`` file; None when every tagged sentence's last column reads as tags."""
    from ner.data.tag_schemes import TagSchemeError, split_tag

    for sentence in sentences:
        for offset, tag in enumerate(sentence.gold or []):
            try:
                split_tag(tag)
            except TagSchemeError:
                return sentence.first_line + offset, tag
    return None


def tag_conll(tagger: Any, lines: Iterable[Line], args: argparse.Namespace, out: IO[str]) -> int:
    """Tag CoNLL input (read whole, to know the gold scheme first) and score it when it has
    gold tags everywhere; returns how many sentences were skipped."""
    items = list(read_conll(lines))
    sentences = [item for item in items if isinstance(item, ConllSentence)]
    per_token = tagger.labels == "tokens"
    not_a_tag = None if per_token else _first_non_tag(sentences)
    if not_a_tag is not None:
        number, value = not_a_tag
        _warn(
            f"the last column is not NER tags (line {number}: {value!r} is not 'O' or "
            "<prefix>-<type>); tagging without scores"
        )
        for sentence in sentences:
            sentence.gold = None
    gold = [s.gold for s in sentences]
    scored = bool(sentences) and all(g is not None for g in gold)
    tokens = [s.tokens for s in sentences]
    evaluation = None
    if scored:  # tagged in the gold's scheme (unless --tag-scheme says otherwise) and scored
        evaluation = tagger.evaluate(
            tokens, gold, tag_scheme=args.tag_scheme, batch_size=args.batch_size
        )
        for warning in evaluation.warnings:
            _warn(warning)
    results = iter(
        evaluation.tagged
        if evaluation
        else tagger.predict_tokens(tokens, batch_size=args.batch_size)
    )
    skipped = 0
    for item in items:
        if isinstance(item, Line) and item.error:
            skipped += 1
            _warn(item.error)
            if args.format in ("jsonl", "html"):
                out.write(json.dumps({"line": item.number, "error": item.error}) + "\n")
        elif isinstance(item, Line):
            if args.format == "conll":
                out.write(f"{item.text}\n\n")
        else:
            result = next(results)
            if args.format in ("jsonl", "html"):
                record = {"line": item.first_line, **result.to_json(), "gold_tags": item.gold}
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
            else:
                for raw, tag in zip(item.lines, result.tags, strict=True):
                    out.write(f"{raw}\t{tag}\n")
                out.write("\n")
    if evaluation is not None:
        _report_scores(evaluation, len(sentences), args)
    elif any(g is not None for g in gold):
        _warn("some sentences have no gold tags, so nothing was scored")
    return skipped


def _report_scores(evaluation: Any, sentences: int, args: argparse.Namespace) -> None:
    """The scores of gold-tagged input, printed and (``--scores``) written."""
    scores = {**evaluation.scores, "sentences": sentences}
    if evaluation.scheme == "tokens":
        summary = (
            f"token accuracy {scores['accuracy']:.2f} ({scores['correct']} of "
            f"{scores['support']} tokens)"
        )
    else:
        scores["scheme"] = evaluation.scheme
        summary = (
            f"precision {scores['precision']:.2f} recall {scores['recall']:.2f} F1 "
            f"{scores['f1']:.2f} (conlleval)"
            + (f", strict F1 {scores['strict']['f1']:.2f}" if "strict" in scores else "")
        )
    print(f"ner-predict: {sentences} sentences scored: {summary}", file=sys.stderr)
    if args.scores:
        write_json(args.scores, scores, indent=2)


def write_html(tagger: Any, jsonl: str, args: argparse.Namespace, out: IO[str]) -> None:
    """The jsonl records (error records left out: they were warned about) as one HTML page."""
    from ner.data.tag_schemes import split_tag
    from ner.serving.html import html_document

    # Split at "\n" only: JSON escapes it in strings, but not U+2028, U+0085 and the other
    # characters that `str.splitlines` also breaks at.
    records = [json.loads(line) for line in jsonl.split("\n") if line]
    kept = [r for r in records if "error" not in r]
    source = "standard input" if args.input == "-" else Path(args.input).name
    if tagger.labels == "tokens":
        out.write(html_document(kept, list(tagger.model.tags), f"Labels of {source}", "tokens"))
        return
    labels = sorted({split_tag(tag)[1] for tag in tagger.model.tags if tag != "O"})
    out.write(html_document(kept, labels, f"Entities in {source}"))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ner-predict",
        description="Tag text with a trained model directory (the model/ folder a run saves).",
    )
    p.add_argument(
        "model", help="model directory (e.g. outputs/<run>/model) or shipped tagger (conll2003)"
    )
    p.add_argument("input", help="input file, or - for stdin")
    p.add_argument(
        "-o", "--output", default="-", help="output file, replaced when complete (default: stdout)"
    )
    p.add_argument("--format", choices=FORMATS, default="jsonl", help="output format")
    p.add_argument("--input-format", choices=INPUT_FORMATS, default="text")
    p.add_argument("--batch-size", type=int, default=64, help="sentences per batch")
    p.add_argument(
        "--max-length", type=int, default=256, help="longer sentences are tagged in pieces"
    )
    p.add_argument(
        "--tag-scheme",
        choices=("iob1", "iob2", "bioes"),
        help="scheme of the output tags (default: the training corpus's; for scored CoNLL input: "
        "the gold's)",
    )
    p.add_argument(
        "--tokenizer",
        choices=TOKENIZERS,
        default="news",
        help="how text input is tokenized: news (CoNLL-style, default) or social (keeps "
        "@mentions, #hashtags, URLs, e-mail addresses and emoticons whole)",
    )
    p.add_argument(
        "--encoding", type=encoding_name, default="utf-8", help="input encoding (default utf-8)"
    )
    p.add_argument("--device", default="cpu", help="torch device, e.g. cpu or cuda")
    add_model_options(p)
    p.add_argument(
        "--threads",
        type=int,
        default=cpu_threads("auto"),
        help="torch CPU threads (default: half the cores, 1 to 4; as ner-train's auto: on a busy "
        "machine oversubscribed OpenMP threads spin, and 2 threads ran 17x slower than 1 here)",
    )
    p.add_argument(
        "--chunk-lines",
        type=int,
        default=2000,
        help="text input is tagged this many lines at a time",
    )
    p.add_argument("--scores", help="write the scores of gold-tagged CoNLL input to this JSON file")
    return p


def run(args: argparse.Namespace) -> int:
    """Load the model, tag the input, write the output; returns the exit status."""
    import torch

    from ner.model.archive import ArchiveError
    from ner.model.tagger import Tagger

    for name in ("batch_size", "max_length", "chunk_lines", "threads"):
        if getattr(args, name) < 1:
            print(
                f"ner-predict: error: --{name.replace('_', '-')} must be positive", file=sys.stderr
            )
            return 2
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    try:
        tagger = Tagger.load(
            args.model,
            device=args.device,
            max_length=args.max_length,
            tag_scheme=args.tag_scheme,
            tokenizer=args.tokenizer,
            precision=args.precision,
            allow_download=args.allow_download,
        )
    except (ArchiveError, OSError, ValueError) as error:
        print(f"ner-predict: error: cannot load model {args.model}: {error}", file=sys.stderr)
        return 1
    loaded = time.perf_counter()
    # The -o file is written under a temporary name and renamed when complete: an interrupted
    # or failed run leaves an existing file as it was, never a truncated one.
    with contextlib.ExitStack() as files:
        try:
            source = (
                sys.stdin.buffer
                if args.input == "-"
                else files.enter_context(open(args.input, "rb"))
            )
        except OSError as error:
            print(f"ner-predict: error: {error.filename}: {error.strerror}", file=sys.stderr)
            return 1
        try:
            out = (
                sys.stdout
                if args.output == "-"
                else files.enter_context(atomic_write(args.output, "w", encoding="utf-8"))
            )
        except OSError as error:
            print(f"ner-predict: error: {args.output}: {error.strerror}", file=sys.stderr)
            return 1
        tag = tag_conll if args.input_format == "conll" else tag_text_lines
        records = io.StringIO() if args.format == "html" else out  # html: jsonl first, then a page
        skipped = tag(tagger, read_lines(source, args.encoding), args, records)
        if args.format == "html":
            write_html(tagger, records.getvalue(), args, out)
    unit = "sentences" if args.input_format == "conll" else "lines"
    print(
        f"ner-predict: model loaded in {loaded - started:.2f} s, input tagged in "
        f"{time.perf_counter() - loaded:.2f} s"
        + (f"; {skipped} {unit} skipped" if skipped else ""),
        file=sys.stderr,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        return run(parser().parse_args(argv))
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
