"""HuggingFace hub token-classification datasets, pinned to a revision, as corpora.

The hub copy goes through the same checks as files: the scheme is detected, every sentence is
validated (errors name the split and row), and tags become one shared ClassLabel. Never the
default; for users who can reach the hub.
"""

from pathlib import Path

import datasets

from ner.common.downloads import DownloadError
from ner.common.errors import InputError
from ner.common.paths import data_dir
from ner.data.builder import CorpusInfo, SplitSource, build_corpus
from ner.data.columns import Sentence


def _strings(values: list, feature) -> list[str]:
    """Sequence values as strings (ClassLabel ids become their names)."""
    inner = getattr(feature, "feature", None)
    if isinstance(inner, datasets.ClassLabel):
        return inner.int2str(values)
    return [str(value) for value in values]


def load_hub_corpus(
    path: str,
    *,
    revision: str | None,
    config: str | None = None,
    tag_column: str = "ner_tags",
    **options,
) -> tuple[datasets.DatasetDict, CorpusInfo]:
    """`path` on the hub at `revision` (or a local dataset folder), with ``tokens`` and the
    `tag_column` renamed to ``tags``; other list columns are kept as strings."""
    local = Path(path).is_dir()
    if revision is None and not local:
        raise InputError(
            f"hub dataset {path!r} needs a pinned revision= (a commit sha or tag) so that the "
            "data cannot change under you"
        )
    where = f"hub:{path}" + (f"@{revision}" if revision else "")
    try:
        hub = datasets.load_dataset(
            path, config, revision=revision, cache_dir=str(data_dir() / "hub")
        )
    except (OSError, ConnectionError, ValueError) as error:
        raise DownloadError(f"could not load {where}: {error} (offline? no access?)") from error
    splits = {}
    for split, dataset in hub.items():
        name = {"valid": "validation", "dev": "validation"}.get(split, split)
        missing = {"tokens", tag_column} - set(dataset.column_names)
        if missing:
            raise InputError(f"{where} ({split}): no column {sorted(missing)}; pass tag_column=")
        lists = [
            c for c in dataset.column_names if isinstance(dataset.features[c], datasets.Sequence)
        ]
        sentences = []
        for row, example in enumerate(dataset):
            fields = {
                "tags" if column == tag_column else column: _strings(
                    example[column], dataset.features[column]
                )
                for column in lists
            }
            document = int(example.get("document_id") or 0)
            sentences.append(Sentence(fields, document, [row] * len(fields["tokens"])))
        splits[name] = SplitSource(sentences, f"{where} {split} row")
    return build_corpus(path, splits, **options)
