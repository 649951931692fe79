"""`RayTagger`: a tagger held by a Ray actor, which loads the model once and then tags whatever
it is given: the shards of ``ner-predict --engine ray`` (`RayTagger.tag`), or the batches of a
Ray Dataset's text column (``dataset.map_batches(RayTagger, ...)``, `RayTagger.__call__`).

The model travels as its folder's files (`pack_model`), so no node needs the driver's files;
without them the actor loads ``options.model`` itself (a path on that node, or a shipped name).
This module does not import Ray: Ray wraps the class.
"""

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from ner.corpus.workers import ShardResult, TagOptions, load_model, tag_shard
from ner.data.tag_input import Line
from ner.model.evaluation import GoldSurvey

ModelFiles = dict[str, bytes]  # a model folder's files: relative path → bytes


def pack_model(folder: Path) -> ModelFiles:
    """The files of the model folder `folder`, to send to the actors once."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


class RayTagger:
    """Loads the model of `options` once: from `files` (`pack_model`) written into a temporary
    folder of this node, else from ``options.model``.

    # Parameters
    options: how to load and tag (`TagOptions`; a Dataset's text is read as ``text`` and
        written as ``jsonl``, whatever the options' formats).
    files: the model folder's files, or None to load ``options.model`` on this node.
    """

    def __init__(self, options: TagOptions, files: ModelFiles | None = None) -> None:
        self._folder = None
        if files is not None:
            self._folder = tempfile.TemporaryDirectory(prefix="ner-model-")
            for name, data in files.items():
                path = Path(self._folder.name) / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            options = replace(options, model=self._folder.name)
        self.options = options
        load_model(options)

    def tag(self, lines: list[Line], gold: GoldSurvey | None = None) -> ShardResult:
        """Tag one shard, as a local worker does (`ner.corpus.workers.tag_shard`)."""
        return tag_shard(self.options, lines, gold)

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[str]]:
        """Tag a batch's ``text`` column: returns it with a ``tagged`` column, each line's JSON
        record as ``ner-predict`` writes it (tokens, tags, entities; or the line's error), its
        ``line`` counted within the batch."""
        texts = [str(text) for text in batch["text"]]
        lines = [Line(number, text) for number, text in enumerate(texts, 1)]
        options = replace(self.options, input_format="text", output_format="jsonl")
        result = tag_shard(options, lines)
        records = result.text.splitlines()
        return {"text": texts, "tagged": records}
