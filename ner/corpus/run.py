"""`tag_corpus`: tag every input of a corpus into an output folder, resumably.

The driver (this process) reads the inputs and cuts them into shards (`ner.corpus.shards`); the
engine tags them (`ner.corpus.workers` on this machine, `ner.corpus.ray_engine` on a Ray
cluster), at most two per worker in flight (with one local job, one at a time in this process),
so memory stays bounded whatever the input's size; each
finished shard is kept on disk, and an input's output file is assembled from its shards in input
order once all are done. A rerun of the same command (after a
kill, or after ``--shard K/N`` runs) skips the shards that are kept, so it ends with the same
bytes as an uninterrupted run. One run at a time writes into a folder (a lock; with ``--shard``,
one per part).

A CoNLL input's gold column is read before its shards are sent (`ner.model.tag_files.read_gold`),
so that each shard is scored in the same scheme; a finished shard keeps its counts against the
gold tags, and the whole file's scores are said once, when its output is assembled.

An input that cannot be read fails alone: it is named on stderr and in the returned list, and
the other inputs go on.
"""

import sys
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import filelock

from ner.common.downloads import sha256_file
from ner.common.errors import InputError, NerError, file_error
from ner.common.files import file_lock, open_input
from ner.corpus.inputs import READ_ERRORS, CorpusInput, open_decompressed
from ner.corpus.manifest import claim, folder_digest
from ner.corpus.progress import Progress
from ner.corpus.shards import ShardStore, selected, shard_lines
from ner.corpus.workers import Engine, LocalEngine, ShardResult, TagOptions
from ner.data.tag_input import Line, read_lines
from ner.model.evaluation import Evaluation, GoldSurvey
from ner.model.shipped import resolve_model
from ner.model.tag_files import read_gold

STATE = ".ner-predict"  # the hidden folder of manifest, locks and finished shards
WARNING = "warning: "  # how a shard's warnings start (`ner.corpus.workers.tag_shard`)


class WorkerDied(NerError, RuntimeError):
    """A worker process ended mid-run (killed, or out of memory)."""


class UnreadableInput(Exception):
    """An input file could not be opened or read to its end; the message names it."""


@dataclass
class CorpusRun:
    """What to tag: the inputs, the output folder, how (`TagOptions`), how many worker
    processes (Ray actors), which ``--shard K/N`` (None: all), whether to show progress, and
    where: ``local`` or ``ray`` (on the cluster at `ray_address`; None: Ray's default)."""

    inputs: list[CorpusInput]
    output_dir: Path
    options: TagOptions
    jobs: int = 1
    selection: tuple[int, int] | None = None
    quiet: bool = False
    engine: str = "local"
    ray_address: str | None = None


def _reason(path: Path, error: BaseException) -> str:
    if isinstance(error, NerError):
        return str(error)
    if isinstance(error, OSError):
        return str(file_error(path, error))
    return f"{path}: {error}"


@contextmanager
def _opened(item: CorpusInput) -> Iterator[tuple[IO[bytes], IO[bytes]]]:
    """The file of `item` and its decompressed stream; UnreadableInput when it cannot be opened
    or read."""
    try:
        with open_input(item.path) as raw, open_decompressed(raw, item.path) as stream:
            yield raw, stream
    except (NerError, *READ_ERRORS) as error:
        raise UnreadableInput(_reason(item.path, error)) from None


def _read_gold(item: CorpusInput, options: TagOptions) -> GoldSurvey | None:
    """A CoNLL input's gold column (`ner.model.tag_files.read_gold`), read whole before its
    shards are tagged: it decides whether and in which scheme each of them is scored, as for the
    file whole. None for the other formats."""
    if options.input_format != "conll":
        return None
    with _opened(item) as (_, stream):
        return read_gold(read_lines(stream, options.encoding))


def _read_shards(item: CorpusInput, options: TagOptions) -> Iterator[tuple[int, list[Line], int]]:
    """(index, lines, bytes of the file they took) of each shard of `item`;
    UnreadableInput when it cannot be opened or read."""
    with _opened(item) as (raw, stream):
        last = 0
        for index, lines in enumerate(
            shard_lines(
                stream,
                options.input_format,
                options.encoding,
                options.chunk_lines,
                options.text_field,
                options.output_format,
            )
        ):
            position = raw.tell()
            yield index, lines, position - last
            last = position


def _engine(run: CorpusRun) -> Engine:
    """The engine that tags `run`'s shards (Ray is imported only for ``ray``)."""
    if run.engine == "ray":
        from ner.corpus.ray_engine import RayEngine

        return RayEngine(run.options, run.jobs, run.ray_address)
    return LocalEngine(run.options, run.jobs)


class _Driver:
    """One run's state: what is in flight, how many shards each input has, what failed."""

    def __init__(self, run: CorpusRun) -> None:
        self.run = run
        self.store = ShardStore(run.output_dir, run.output_dir / STATE)
        self.failed: list[str] = []
        self.pending: dict[Future[ShardResult], tuple[CorpusInput, int, int]] = {}
        self.shards: dict[str, int] = {}  # output → its number of shards, once read whole
        self.noted: set[str] = set()  # the outputs whose CoNLL input's notes were said
        self.progress: Progress | None = None

    def fail(self, reason: str) -> None:
        self.failed.append(reason)
        print(f"ner-predict: error: {reason}; the other inputs go on", flush=True, file=sys.stderr)

    def entries(self) -> dict[str, dict[str, Any]]:
        """Each readable input's size and digest, for the manifest (the others fail now)."""
        entries = {}
        for item in self.run.inputs:
            try:
                size = item.path.stat().st_size
                entries[item.output] = {"size": size, "sha256": sha256_file(item.path)}
            except OSError as error:
                self.fail(_reason(item.path, error))
        return entries

    def tag(self, item: CorpusInput, engine: Engine) -> None:
        """Send the shards of `item` that this run does and that are not kept yet."""
        assert self.progress is not None
        count = 0
        try:
            gold = _read_gold(item, self.run.options)
            for index, lines, size in _read_shards(item, self.run.options):
                count = index + 1
                if not selected(item.output, index, self.run.selection):
                    self.progress.advance(size)
                elif self.store.has(item.output, index):
                    self.progress.kept += 1
                    self.progress.advance(size)
                else:
                    try:  # a pool whose worker died refuses new work as its results do
                        future = engine.submit(lines, gold)
                    except engine.lost:
                        raise _worker_died() from None
                    self.pending[future] = (item, index, size)
                    self.wait(engine.in_flight, engine.lost)
        except UnreadableInput as error:
            self.fail(str(error))
            return
        self.shards[item.output] = count

    def wait(self, limit: int, lost: tuple[type[BaseException], ...]) -> None:
        """Keep finished shards until at most `limit` are in flight (`lost`: what a result
        raises when its worker died)."""
        while len(self.pending) > limit:
            finished, _ = wait(list(self.pending), return_when=FIRST_COMPLETED)
            for future in finished:
                self.keep(future, lost)

    def keep(self, future: "Future[ShardResult]", lost: tuple[type[BaseException], ...]) -> None:
        assert self.progress is not None
        item, index, size = self.pending.pop(future)
        try:
            result = future.result()
        except lost:
            raise _worker_died() from None
        notes = [] if item.output in self.noted else result.notes
        self.noted.add(item.output)
        for message in notes + result.messages:  # the file named after "warning: ", as ner-predict
            warning = message.startswith(WARNING)
            text = message.removeprefix(WARNING)
            self.progress.say(f"{WARNING if warning else ''}{item.path}: {text}")
        self.store.write(item.output, index, result.text, result.counts, result.scores)
        self.progress.advance(size, result.counts)

    def assemble(self) -> None:
        """Write each output whose every shard is kept (a ``--shard`` run writes none), and say
        a scored CoNLL input's scores."""
        assert self.progress is not None
        if self.run.selection is not None:
            return
        for item in self.run.inputs:
            count = self.shards.get(item.output)
            if count is not None and all(self.store.has(item.output, i) for i in range(count)):
                scores = self.store.assemble(item.output, count)
                if scores is not None:
                    self.progress.say(f"{item.path}: {Evaluation(scores).summary()}")

    def go(self) -> str:
        """Tag, keep and assemble; returns the summary line."""
        options = self.run.options
        entries = self.entries()
        model = folder_digest(resolve_model(options.model))
        claim(
            self.run.output_dir / STATE,
            {"model": model, "options": options.record(), "inputs": entries},
        )
        todo = [i for i in self.run.inputs if i.output in entries and not self.store.done(i.output)]
        total = sum(entries[i.output]["size"] for i in todo)
        self.progress = Progress(total, quiet=self.run.quiet)
        engine = _engine(self.run)
        try:
            for item in todo:
                self.tag(item, engine)
            self.wait(0, engine.lost)
        finally:
            engine.close()
        self.assemble()
        return self.progress.summary(len(self.run.inputs))


def tag_corpus(run: CorpusRun) -> tuple[str, list[str]]:
    """Tag `run` (see the module's docstring); returns the summary line and the inputs that
    failed, each as ``path: reason``. InputError when another run holds the folder or the
    manifest is another run's."""
    state = run.output_dir / STATE
    name = "run" if run.selection is None else f"shard-{run.selection[0]}-of-{run.selection[1]}"
    lock = file_lock(state / name, timeout=0)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise InputError(
            f"{run.output_dir}: another ner-predict run is writing into it (lock "
            f"{lock.lock_file}); wait for it to finish, or tag into another --output-dir"
        ) from None
    try:
        driver = _Driver(run)
        return driver.go(), driver.failed
    finally:
        lock.release()


def _worker_died() -> WorkerDied:
    return WorkerDied(
        "a worker process died (killed, out of memory, or its node lost?); the finished shards "
        "are kept: rerun the same command to go on"
    )
