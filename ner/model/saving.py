"""A trained tagger as a model folder: writing it (`save_tagger`), the checks that run before
anything is built from one (`check_sizes`, `check_vocabularies`) and the model rebuilt from its
parts (`restored_model`), for `ner.model.tagger.Tagger.load` and a training checkpoint.

A compact folder leaves its pretrained words out; they are rebuilt on load from the pinned table
they came from (`pretrained_words_of`). The folder's metadata also keeps the training run's dev
and test scores when the run gives them, so a server needs nothing outside the folder.
"""

import re
from pathlib import Path
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from ner.common.packed_words import PackedWords
from ner.common.vocabulary import Vocabulary
from ner.embeddings.pretrained import (
    ExtensionMismatch,
    cached_extension,
    extension_digest,
    rebuild_extension,
)
from ner.model.archive import (
    REBUILDABLE,
    WEIGHTS,
    ArchiveError,
    BiLMFiles,
    LoadedArchive,
    save_archive,
)
from ner.model.shipped import portable_config
from ner.tagger.dataset import Vocabularies
from ner.tagger.model import TaggerModel

# The word/char/tag vocabularies' name in a model folder: ``vocabularies/tagger.json``.
VOCABULARIES = "tagger"


def save_tagger(
    directory: str | Path,
    model: TaggerModel,
    vocabularies: Vocabularies,
    bilm: BiLMFiles | None,
    *,
    corpus_scheme: str | None = None,
    config: dict[str, Any] | None = None,
    compact: bool = False,
    pretrained_source: str | None = None,
    scores: dict[str, Any] | None = None,
    **options: Any,
) -> Path:
    """Write a trained tagger as the model directory `Tagger.load` reads: the weights, the
    vocabularies (``vocabularies/tagger.json``: words, chars, tags;
    ``pretrained_words.json``: the words whose frozen float16 vectors follow the trained rows),
    the biLM files and the corpus's tag scheme. config: the run's resolved configuration, kept for
    the record with its biLM paths made portable (`ner.model.shipped.portable_config`, relative
    to the folder that holds `directory`, the run's); options: for
    `ner.model.archive.save_archive` (e.g. ``embed_bilm_max_bytes``).

    compact: write a compact folder instead: float16 weights, a shipped biLM by reference, and
    pretrained words left out, to be rebuilt on load from `pretrained_source`, the named table
    they came from (e.g. ``glove.6B.50d``; checked here first: the rebuilt words must be exactly
    the stored ones). scores: the training run's, kept in the folder's metadata (``dev`` and
    ``test``, each seqeval's or token scores) for whoever serves or reports the model."""
    files = {VOCABULARIES: vocabularies.to_json()}
    rebuilt = {}
    if compact:
        options.update(weights_dtype="float16", refer_to_package=True)
        if vocabularies.pretrained is not None:
            rebuilt["pretrained_words"] = _extension_reference(
                model, vocabularies, pretrained_source
            )
    elif vocabularies.pretrained is not None:
        files["pretrained_words"] = vocabularies.pretrained.to_json()
    return save_archive(
        directory,
        model=model,
        model_config=model.config,
        vocabularies=files,
        bilm=bilm,
        config=portable_config(config, Path(directory).resolve().parent),
        metadata={
            "corpus_scheme": corpus_scheme,
            "vocabularies": "ner.tagger.dataset.Vocabularies",
            **({"scores": scores} if scores else {}),
        },
        rebuilt=rebuilt,
        **options,
    )


def _extension_reference(
    model: TaggerModel, vocabularies: Vocabularies, source: str | None
) -> dict[str, Any]:
    """The manifest entry that lets a loader rebuild the model's pretrained words from `source`;
    ArchiveError if the rebuilt words or vectors would differ from the model's."""
    assert model.pretrained_words is not None and vocabularies.pretrained is not None
    if source not in REBUILDABLE["pretrained_words"]:
        raise ArchiveError(
            f"a compact folder rebuilds pretrained words only from "
            f"{', '.join(REBUILDABLE['pretrained_words'])}, not from {source}: save it in full"
        )
    stored = extension_digest(vocabularies.pretrained, model.pretrained_words)
    words, vectors = rebuild_extension(source, vocabularies.words)
    if extension_digest(words, vectors) != stored:
        raise ArchiveError(
            f"the model's pretrained words are not those of {source} for its vocabulary, so a "
            "compact folder could not rebuild them: export it without compacting"
        )
    return {"source": source, "count": len(words), "sha256": stored}


def _rebuilt_extension(
    entry: dict[str, Any], vocabularies: Vocabularies, directory: Path
) -> tuple[PackedWords, torch.Tensor]:
    """A compact folder's pretrained words and (E, dim) float16 vectors, rebuilt from their
    pinned table (fetched on first use), checked against the manifest's digest and kept in the
    data folder for the next load."""
    try:
        return cached_extension(
            entry["source"], vocabularies.words, entry["count"], entry["sha256"]
        )
    except ExtensionMismatch:
        raise ArchiveError(
            f"model {directory}: the pretrained words rebuilt from {entry['source']} are not "
            "the ones it was saved with (another version of the table?)"
        ) from None


_ENCODER_LAYER = re.compile(r"encoder\.weight_ih_l\d+")


def _shape(value: tuple[int, ...] | None) -> str:
    return "no such tensor" if value is None else f"shape {list(value)}"


class SkipFills(TorchFunctionMode):
    """Parameter initialisation (``normal_``, ``uniform_``, ...) as a no-op, for a model built on
    the meta device only for its tensors' shapes: there each fill would compute nothing, and the
    first would import torch's compiler (about 1.5 s of every model load)."""

    FILLS = frozenset(
        {"normal_", "uniform_", "zero_", "fill_", "eye_", "constant_", "ones_", "zeros_"}
        | {"kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "xavier_normal_"}
        | {"orthogonal_", "trunc_normal_"}
    )

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", None) in self.FILLS:
            # the tensor, unchanged (in place: same shape); nn.init passes it by keyword
            return args[0] if args else (kwargs or {})["tensor"]
        return func(*args, **(kwargs or {}))


def check_sizes(config: dict[str, Any], weights: dict[str, torch.Tensor], directory: Path) -> None:
    """Check a model directory's `TaggerModel` config against its weights before the model is
    built, so that crafted sizes cost nothing: a ``num_layers`` of a million would otherwise
    build a million layers, a ``num_words`` of ten million allocate the embedding, before the
    weights could be compared. First the values that set how many modules the model has, then
    every tensor's shape in a model built on the meta device (which allocates no memory).
    Raises `ArchiveError` naming the config value or the tensor."""
    where = f"{directory}/archive.json: model_config"
    layers = sum(1 for name in weights if _ENCODER_LAYER.fullmatch(name))
    if config.get("num_layers") != layers:
        raise ArchiveError(
            f"{where}.num_layers is {config.get('num_layers')!r}, but the weights hold "
            f"{layers} BiLSTM layer(s)"
        )
    mix = weights.get("elmo_mix.scalar_parameters")
    mixed = None if mix is None or config.get("elmo_mix_layers") is not None else mix.shape[0]
    if config.get("elmo_dim") and mixed is not None and config.get("elmo_layers") != mixed:
        raise ArchiveError(
            f"{where}.elmo_layers is {config.get('elmo_layers')!r}, but the weights mix "
            f"{mixed} biLM layers"
        )
    try:
        with torch.device("meta"), SkipFills():
            model = TaggerModel(**config)
    except (TypeError, ValueError, RuntimeError) as error:
        raise ArchiveError(
            f"{where} does not fit this version of ner-elmo's TaggerModel: {error}"
        ) from None
    expected = {name: tuple(tensor.shape) for name, tensor in model.state_dict().items()}
    stored = {name: tuple(tensor.shape) for name, tensor in weights.items()}
    for name in sorted(expected.keys() | stored.keys()):
        if expected.get(name) != stored.get(name):
            raise ArchiveError(
                f"the weights in {directory} do not fit its model config: {name} has "
                f"{_shape(stored.get(name))} in {WEIGHTS}, {_shape(expected.get(name))} by "
                "the model_config in archive.json"
            )


def check_vocabularies(model: TaggerModel, vocabularies: Vocabularies) -> None:
    """Every id the vocabularies can give has a row in the model (ValueError otherwise): one
    longer than its embedding would make each sentence with one of its last words fail, and with
    it every request tagged in the same batch."""
    sizes = []
    if model.word_embedding is not None:
        rows = model.pretrained_words.shape[0] if model.pretrained_words is not None else 0
        sizes.append(("words", len(vocabularies.words), model.word_embedding.num_embeddings))
        if vocabularies.pretrained is not None:
            sizes.append(("pretrained words", len(vocabularies.pretrained), rows))
    if model.char_encoder is not None:
        sizes.append(
            ("characters", len(vocabularies.chars), model.char_encoder.embedding.num_embeddings)
        )
    for what, entries, rows in sizes:
        if entries != rows:
            raise ValueError(
                f"the vocabulary of {what} has {entries} entries, but the model's embedding "
                f"has {rows} rows: the vocabularies and the weights do not belong together"
            )


def pretrained_words_of(
    archive: LoadedArchive, vocabularies: Vocabularies
) -> tuple[PackedWords | None, torch.Tensor | None]:
    """The words of a model folder's frozen pretrained rows (None without any): stored in the
    folder, or rebuilt from the pinned table of a compact folder, which also gives their
    (E, dim) float16 vectors, left out of its weights (else None)."""
    if "pretrained_words" in archive.rebuilt:
        return _rebuilt_extension(
            archive.rebuilt["pretrained_words"], vocabularies, archive.directory
        )
    words = archive.vocabularies.get("pretrained_words")
    if words is None:
        return None, None
    try:  # packed: a dict of ~400k words would take 4 times the memory
        return PackedWords.from_json(words), None
    except ValueError as error:
        raise ArchiveError(
            f"model {archive.directory}: vocabularies/pretrained_words.json: {error}"
        ) from None


def restored_model(
    source: Path,
    model_config: dict[str, Any],
    state_dict: dict[str, torch.Tensor],
    vocabularies: Vocabularies,
    pretrained: Vocabulary | PackedWords | None,
) -> TaggerModel:
    """A `TaggerModel` from its saved config and weights, checked first (`check_sizes`), with
    the words of its frozen pretrained rows re-attached to `vocabularies` (they are saved apart from
    it) and checked against the model (`check_vocabularies`). source: the folder or file they
    came from, for error messages. Raises `ArchiveError` when the parts do not fit together."""
    check_sizes(model_config, state_dict, source)
    with SkipFills():  # as large as the weights (checked above), which replace every value
        model = TaggerModel(**model_config)
    own = model.state_dict()
    # The weights become the model's tensors (no second copy in memory), in its dtypes:
    # float16 weights are widened to float32, the frozen pretrained rows stay float16.
    weights = {k: v.to(own[k].dtype) if k in own else v for k, v in state_dict.items()}
    model.load_state_dict(weights, assign=True)
    vocabularies.pretrained = pretrained
    try:
        check_vocabularies(model, vocabularies)
    except ValueError as error:
        raise ArchiveError(f"model {source}: {error}") from None
    return model
