"""Work cut into shards, and the finished shards kept on disk until their output is assembled.

A shard is one chunk of `chunk_lines` input lines (CoNLL: blocks, i.e. sentences and
``-DOCSTART-`` lines, cut at a blank line), or fewer that reach `MAX_LINE_CHARS` characters: the
chunk that a single ``ner-predict`` run tags as one, so every sentence is batched with the same
others whatever the split. Shards are numbered within their input, and `selected` deals them out
to ``--shard K/N`` the same way on every machine.

Each finished shard is one file, written atomically: a JSON line of its counts (a scored CoNLL
file's: its counts against the gold tags too, `ScoreCounts`), then its output. An input's output
is assembled from its shards in order under a temporary name and renamed, its shards' scores
added up into the whole file's; a marker then says that input is done, and its shards are
deleted.
"""

import json
import shutil
import zlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from ner.common.files import atomic_write, open_output, write_text
from ner.data.tag_input import MAX_LINE_CHARS, Line, read_lines
from ner.model.evaluation import ScoreCounts
from ner.model.tag_files import TagCounts, chunks, readable_lines


@dataclass
class ShardCounts(TagCounts):
    """What a shard held: `TagCounts` and the lines skipped."""

    skipped: int = 0

    def add_up(self, other: "ShardCounts") -> None:
        """Add `other`'s counts to these."""
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)


def shard_lines(
    stream: IO[bytes],
    input_format: str,
    encoding: str,
    chunk_lines: int,
    text_field: str,
    output_format: str = "jsonl",
) -> Iterator[list[Line]]:
    """The shards of one input stream, in order: the chunks `ner.model.tag_files.tag_lines` and
    `ner.model.tag_files.tag_and_score_conll` cut (JSON lines already read as their text field, for
    `output_format`'s records)."""
    lines = read_lines(stream, encoding)
    conll = input_format == "conll"
    readable, _ = readable_lines(lines, input_format, text_field, output_format)
    yield from chunks(readable, chunk_lines, MAX_LINE_CHARS, conll=conll)


def selected(output: str, index: int, selection: tuple[int, int] | None) -> bool:
    """Whether shard `index` of the input written to `output` is this run's under
    ``--shard K/N`` (`selection` = (K, N); None: every shard is)."""
    if selection is None:
        return True
    part, parts = selection
    return (zlib.crc32(output.encode()) + index) % parts == part


class ShardStore:
    """The finished shards and done markers under an output folder's ``.ner-predict/``."""

    def __init__(self, output_dir: Path, state: Path) -> None:
        self.output_dir = output_dir
        self.shards = state / "shards"
        self.marks = state / "done"

    def path(self, output: str, index: int) -> Path:
        return self.shards / output / f"{index:08d}"

    def has(self, output: str, index: int) -> bool:
        return self.path(output, index).exists()

    def write(
        self, output: str, index: int, text: str, counts: ShardCounts, scores: ScoreCounts | None
    ) -> None:
        """Keep a finished shard (atomically: it exists whole or not at all), with its counts
        and its CoNLL scores' (None: unscored)."""
        record = {**asdict(counts), "scores": None if scores is None else asdict(scores)}
        with atomic_write(self.path(output, index), "w", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
            handle.write(text)

    def done(self, output: str) -> bool:
        """Whether the output of `output`'s input is assembled (and still there)."""
        return (self.marks / output).exists() and (self.output_dir / output).exists()

    def assemble(self, output: str, count: int) -> ScoreCounts | None:
        """Write the output file from its `count` finished shards, in order (under a temporary
        name until complete), mark it done and delete the shards; returns the scores of the
        whole (a scored CoNLL file's; else None)."""
        total = None
        with open_output(self.output_dir / output) as out:
            for index in range(count):
                with open(self.path(output, index), encoding="utf-8") as shard:
                    scores = json.loads(shard.readline()).get("scores")
                    shutil.copyfileobj(shard, out)
                if scores is not None:
                    total = total or ScoreCounts(scores["scheme"], scores["tag_scheme"])
                    total.add_up(ScoreCounts(**scores))
        write_text(self.marks / output, "")
        shutil.rmtree(self.shards / output, ignore_errors=True)
        return total
