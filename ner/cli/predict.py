"""``ner-predict MODEL INPUT``: tag raw text, pre-tokenized sentences or CoNLL files with a saved
model folder; the formats are `ner.model.tag_files`'s and the html page `ner.serving.html`'s.

CoNLL input whose every token line has a tag in its last column is scored (conlleval-style and
strict seqeval, printed to stderr and written with ``--scores``); a model of per-token labels
(part of speech) is scored by token accuracy. Bad input lines never stop the run: each is warned
about (and recorded in jsonl), and the rest is tagged.

``ner-predict MODEL INPUT... --output-dir DIR [--jobs N] [--shard K/N]`` tags files, folders
and glob patterns (compressed or not) into one output file each, in worker processes, resumably
(`ner.corpus.run`); its files are byte-identical to the single-input command's.
"""

import argparse
import contextlib
import sys
import time
from pathlib import Path

from ner.cli.predict_options import LOAD_OPTIONS, parser, tag_options
from ner.cli.rank_options import check_rank_options, rank
from ner.common.errors import InputError, NerError, report_user_error
from ner.common.files import open_input, open_output, write_json
from ner.corpus.inputs import discover, open_decompressed
from ner.corpus.run import CorpusRun, tag_corpus
from ner.data.tag_input import read_lines
from ner.model.tag_files import KeptResults, LinesAgain
from ner.model.tagger import Tagger


def _warn(message: str) -> None:
    print(f"ner-predict: warning: {message}", file=sys.stderr)


def run_corpus(args: argparse.Namespace) -> int:
    """Tag every input into --output-dir (`ner.corpus.run`); status 1 when an input failed."""
    output_dir = Path(args.output_dir)
    if "-" in args.input or args.output != "-" or args.scores:
        raise InputError("--output-dir takes input files, not -, and no -o or --scores")
    inputs = discover(args.input, output_dir, args.format)
    run = CorpusRun(
        inputs,
        output_dir,
        tag_options(args),
        args.jobs,
        args.shard,
        args.quiet,
        args.engine,
        args.ray_address,
    )
    summary, failed = tag_corpus(run)
    print(f"ner-predict: {summary}", file=sys.stderr)
    if failed:
        print(f"ner-predict: {len(failed)} inputs failed: {'; '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def run(args: argparse.Namespace) -> int:
    """Load the model, tag the input, write the output (the -o file under a temporary name,
    renamed when complete); with --output-dir, tag a corpus (`run_corpus`). Returns the exit
    status."""
    check_rank_options(args)
    if args.output_dir:
        return run_corpus(args)
    if len(args.input) > 1 or args.jobs > 1 or args.shard or args.engine != "local":
        raise InputError("several inputs, --jobs, --shard and --engine need --output-dir")
    (args.input,) = args.input
    import torch

    from ner.serving.html import tagger_page

    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    tagger = Tagger.load(args.model, **{key: getattr(args, key) for key in LOAD_OPTIONS})
    loaded = time.perf_counter()
    with contextlib.ExitStack() as files:
        source = (
            sys.stdin.buffer
            if args.input == "-"
            else open_decompressed(files.enter_context(open_input(args.input)), args.input)
        )
        out = sys.stdout if args.output == "-" else files.enter_context(open_output(args.output))
        kept = KeptResults()
        lines = (  # CoNLL is read twice: its gold column first (`tag_and_score_conll`)
            LinesAgain(source, args.encoding)
            if args.input_format == "conll"
            else read_lines(source, args.encoding)
        )
        name = "standard input" if args.input == "-" else args.input
        if args.rank:
            skipped = rank(args, tagger, lines, out, lambda message: _warn(f"{name}: {message}"))
            evaluation = None
        else:
            evaluation, skipped = tag_options(args).tag(
                tagger, lines, out, lambda message: _warn(f"{name}: {message}"), kept
            )
        if evaluation is not None:
            print(f"ner-predict: {evaluation.summary()}", file=sys.stderr)
            if args.scores:
                write_json(args.scores, evaluation.record(), indent=2)
        if args.format == "html":
            title = "standard input" if args.input == "-" else Path(args.input).name
            out.write(tagger_page(tagger, kept.results, title))
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
