"""Where shards are tagged: this process (``--jobs 1``) or a pool of worker processes, each of
which loads the model once and then tags whatever shards it is given with
`ner.model.tag_files.tag_input`, exactly as a single ``ner-predict`` run tags its chunks."""

import io
import multiprocessing
from collections.abc import Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from typing import IO, Any, Protocol

from ner.common.memory import limit_kernel_cache, pin_mmap_threshold, release_free_memory
from ner.corpus.shards import ShardCounts
from ner.data.tag_input import Line
from ner.model.evaluation import Evaluation, GoldSurvey, ScoreCounts
from ner.model.tag_files import TagCounts, Warn, tag_input
from ner.model.tagger import Tagger


@dataclass(frozen=True)
class TagOptions:
    """How to load the model and tag: the model folder or shipped name, `Tagger.load`'s
    options, torch threads per process, and `tag_input`'s options (the defaults are
    ``ner-predict``'s, with one thread)."""

    model: str
    load: dict[str, Any] = field(default_factory=dict)
    threads: int = 1
    batch_size: int = 64
    chunk_lines: int = 2000
    input_format: str = "text"
    output_format: str = "jsonl"
    text_field: str = "text"
    tag_scheme: str | None = None
    encoding: str = "utf-8"

    def record(self) -> dict[str, Any]:
        """The options that decide the output's bytes, as the manifest keeps them."""
        fields = {
            key: getattr(self, key)
            for key in (
                "threads",
                "batch_size",
                "chunk_lines",
                "input_format",
                "output_format",
                "encoding",
            )
        }
        if self.input_format == "jsonl":
            fields["text_field"] = self.text_field
        return {**fields, **{k: v for k, v in self.load.items() if k != "allow_download"}}

    def tag(
        self,
        tagger: Tagger,
        lines: Iterable[Line],
        out: IO[str],
        warn: Warn,
        counts: TagCounts | None = None,
        gold: GoldSurvey | None = None,
        note: Warn | None = None,
    ) -> tuple[Evaluation | None, int]:
        """`ner.model.tag_files.tag_input` with these options: the one way both a single input
        and a shard are tagged (gold, note: a CoNLL input's, as there). Returns the evaluation
        (None when unscored) and the lines skipped."""
        return tag_input(
            tagger,
            lines,
            out,
            input_format=self.input_format,
            output_format=self.output_format,
            batch_size=self.batch_size,
            chunk_lines=self.chunk_lines,
            tag_scheme=self.tag_scheme,
            text_field=self.text_field,
            warn=warn,
            counts=counts,
            gold=gold,
            note=note,
        )


@dataclass
class ShardResult:
    """A tagged shard: its output text, counts, the warnings its tagging gave, in order, for
    stderr; and a CoNLL file's: its counts against the gold tags (None when unscored) and the
    warnings about the file's gold column (the same for each of its shards, said once)."""

    text: str
    counts: ShardCounts
    messages: list[str] = field(default_factory=list)
    scores: ScoreCounts | None = None
    notes: list[str] = field(default_factory=list)


_tagger: Tagger | None = None  # this process's model, loaded once by `load_model`
_loaded: TagOptions | None = None  # the options it was loaded with


def load_model(options: TagOptions) -> None:
    """Load the model into this process (a worker's initializer), with its thread count; a
    process that holds it already, loaded with the same options, keeps it."""
    import torch

    global _tagger, _loaded
    # Batches of every length would fill oneDNN's cache of compiled kernels and the heap's holes
    # more the longer the input: both are bounded, as in ner-serve, so memory does not grow.
    limit_kernel_cache()
    pin_mmap_threshold()
    torch.set_num_threads(options.threads)
    if _tagger is None or _loaded != options:
        _tagger, _loaded = Tagger.load(options.model, **options.load), options


def tag_shard(
    options: TagOptions, lines: list[Line], gold: GoldSurvey | None = None
) -> ShardResult:
    """Tag one shard with this process's model (JSON lines come read already: their text; a
    CoNLL shard comes with its file's `ner.model.tag_files.read_gold`)."""
    assert _tagger is not None, "load_model first"
    if options.input_format == "jsonl":
        options = replace(options, input_format="text")
    out, counts, messages, notes = io.StringIO(), ShardCounts(), [], []

    def warn(message: str) -> None:
        messages.append(f"warning: {message}")

    evaluation, counts.skipped = options.tag(
        _tagger, lines, out, warn, counts, gold, lambda message: notes.append(f"warning: {message}")
    )
    release_free_memory()  # what this shard's batches freed goes back before the next one's
    scores = None if evaluation is None else evaluation.counts
    return ShardResult(out.getvalue(), counts, messages, scores, notes)


IN_FLIGHT_PER_WORKER = 2  # shards sent to a worker and not yet kept, at most


class Engine(Protocol):
    """Where shards are tagged: `LocalEngine`, or `ner.corpus.ray_engine.RayEngine`.

    lost: what a shard's result raises when its worker died.
    in_flight: how many shards may be in flight besides the one just sent.
    """

    lost: tuple[type[BaseException], ...]
    in_flight: int

    def submit(self, lines: list[Line], gold: GoldSurvey | None) -> "Future[ShardResult]": ...

    def close(self) -> None: ...


class LocalEngine:
    """Tags shards on this machine: in this process for one job, else in `jobs` worker
    processes (started fresh, not forked, so that no torch thread pool is inherited)."""

    def __init__(self, options: TagOptions, jobs: int) -> None:
        self.options = options
        self.pool = None
        self.lost = (BrokenProcessPool,)
        self.in_flight = IN_FLIGHT_PER_WORKER * jobs - 1 if jobs > 1 else 0
        if jobs == 1:
            load_model(options)
        else:
            self.pool = ProcessPoolExecutor(
                jobs,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=load_model,
                initargs=(options,),
            )

    def submit(self, lines: list[Line], gold: GoldSurvey | None) -> "Future[ShardResult]":
        if self.pool is not None:
            return self.pool.submit(tag_shard, self.options, lines, gold)
        future: Future[ShardResult] = Future()
        future.set_result(tag_shard(self.options, lines, gold))
        return future

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
