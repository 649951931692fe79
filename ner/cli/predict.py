"""``ner-predict MODEL INPUT``: tag raw text, pre-tokenized sentences or CoNLL files with a saved
model folder; the formats are `ner.model.tag_files`'s and the html page `ner.serving.html`'s.

CoNLL input whose every token line has a tag in its last column is scored (conlleval-style and
strict seqeval, printed to stderr and written with ``--scores``); a model of per-token labels
(part of speech) is scored by token accuracy. Bad input lines never stop the run: each is warned
about (and recorded in jsonl), and the rest is tagged.
"""

import argparse
import contextlib
import io
import json
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from ner.cli.options import add_model_options, encoding_name, positive_int
from ner.common.errors import NerError, report_user_error
from ner.common.files import open_input, open_output, write_json
from ner.common.threads import cpu_threads
from ner.data.tag_input import ConllSentence, Line, read_conll, read_lines
from ner.data.tokenize import TOKENIZERS
from ner.model.tag_files import INPUT_FORMATS, OUTPUT_FORMATS, tag_lines
from ner.model.tag_files import tag_conll as tag_conll_items


def _warn(message: str) -> None:
    print(f"ner-predict: warning: {message}", file=sys.stderr)


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
    from ner.data.tag_schemes import TagSchemeError, detect_scheme, guess_scheme
    from ner.metrics import evaluate_tags, span_scores

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
    gold_scheme = None
    if scored and not per_token:
        try:
            gold_scheme = detect_scheme(gold)  # type: ignore[arg-type]
        except TagSchemeError as error:
            _warn(f"the gold tags are not valid in any scheme ({error}); conlleval scores only")
            gold_scheme = guess_scheme(gold)  # type: ignore[arg-type]
        tagger.use_tag_scheme(args.tag_scheme or gold_scheme)
    predicted, skipped = tag_conll_items(
        tagger, items, out, output_format=args.format, batch_size=args.batch_size, warn=_warn
    )
    if scored and per_token:
        _score_labels(gold, predicted, args)  # type: ignore[arg-type]
    elif scored:
        strict_ok = gold_scheme == tagger.tag_scheme
        scores = (
            evaluate_tags(gold, predicted, gold_scheme)  # type: ignore[arg-type]
            if strict_ok
            else span_scores(gold, predicted)  # type: ignore[arg-type]
        )
        scores["sentences"] = len(sentences)
        scores["scheme"] = gold_scheme
        print(
            f"ner-predict: {len(sentences)} sentences scored: precision {scores['precision']:.2f}"
            f" recall {scores['recall']:.2f} F1 {scores['f1']:.2f} (conlleval)"
            + (f", strict F1 {scores['strict']['f1']:.2f}" if "strict" in scores else ""),
            file=sys.stderr,
        )
        if args.scores:
            write_json(args.scores, scores, indent=2)
    elif any(g is not None for g in gold):
        _warn("some sentences have no gold tags, so nothing was scored")
    return skipped


def _score_labels(gold: list[list[str]], predicted: list[list[str]], args: argparse.Namespace):
    """Token accuracy of per-token labels against the gold column, printed and (``--scores``)
    written."""
    from ner.metrics import token_scores

    scores = token_scores(gold, predicted)
    scores["sentences"] = len(gold)
    print(
        f"ner-predict: {len(gold)} sentences scored: token accuracy {scores['accuracy']:.2f} "
        f"({scores['correct']} of {scores['support']} tokens)",
        file=sys.stderr,
    )
    if args.scores:
        with open(args.scores, "w", encoding="utf-8") as file:
            json.dump(scores, file, indent=2)


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
    p.add_argument("--format", choices=OUTPUT_FORMATS, default="jsonl", help="output format")
    p.add_argument("--input-format", choices=INPUT_FORMATS, default="text")
    p.add_argument("--batch-size", type=positive_int, default=64, help="sentences per batch")
    add_model_options(
        p,
        "scheme of the output tags (default: the training corpus's; for scored CoNLL input: "
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
    p.add_argument(
        "--threads",
        type=positive_int,
        default=cpu_threads("auto"),
        help="torch CPU threads (default: half the cores, 1 to 4; more than free cores spin)",
    )
    p.add_argument(
        "--chunk-lines",
        type=positive_int,
        default=2000,
        help="text input is tagged this many lines at a time",
    )
    p.add_argument("--scores", help="write the scores of gold-tagged CoNLL input to this JSON file")
    return p


def run(args: argparse.Namespace) -> int:
    """Load the model, tag the input, write the output (the -o file under a temporary name,
    renamed when complete); returns the exit status."""
    import torch

    from ner.model.tagger import Tagger
    from ner.serving.html import tagger_page

    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    options = {"max_length": args.max_length, "tag_scheme": args.tag_scheme}
    options |= {"tokenizer": args.tokenizer, "precision": args.precision}
    tagger = Tagger.load(
        args.model, device=args.device, allow_download=args.allow_download, **options
    )
    loaded = time.perf_counter()
    with contextlib.ExitStack() as files:
        source = (
            sys.stdin.buffer if args.input == "-" else files.enter_context(open_input(args.input))
        )
        out = sys.stdout if args.output == "-" else files.enter_context(open_output(args.output))
        records = io.StringIO() if args.format == "html" else out  # html: jsonl first, then a page
        lines = read_lines(source, args.encoding)
        if args.input_format == "conll":
            skipped = tag_conll(tagger, lines, args, records)
        else:
            skipped = tag_lines(
                tagger,
                lines,
                records,
                input_format=args.input_format,
                output_format=args.format,
                batch_size=args.batch_size,
                chunk_lines=args.chunk_lines,
                warn=_warn,
            )
        if args.format == "html":
            name = "standard input" if args.input == "-" else Path(args.input).name
            out.write(tagger_page(tagger, records.getvalue(), name))
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
    except NerError as error:  # a bad model folder, input file or option: one line, status 2
        return report_user_error("ner-predict", error)
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
