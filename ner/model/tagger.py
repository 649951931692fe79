"""`Tagger`: a trained model ready to tag text, with character offsets and CRF confidences.

    from ner import Tagger
    tagger = Tagger.load("outputs/run/model")
    tagger.predict(["EU rejects German call to boycott British lamb."])

Raw text is split into sentences and tokenized like CoNLL (`ner.data.tokenize`); every token and
entity keeps its character offsets into the input string. An entity's confidence is the CRF's
marginal probability of exactly that span and type (forward-backward over the same constrained
scores Viterbi decodes with), summed over every tag sequence that encodes it (in IOB1 a chunk may
open with ``I-X`` or ``B-X``; an unconstrained model may open one with a stray ``I-X``).
Sentences longer than `max_length` tokens are tagged in pieces, so a runaway "sentence" (a
5,000-token line without punctuation) costs neither memory nor the rest of the input.

A model of per-token labels (part of speech: ``labels == "tokens"``) finds no entities; each token
gets its label and that label's probability: the CRF's marginal P(y_t = label | text) from the
same forward-backward, or the softmax probability of a model without a CRF.
"""

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

from ner.bilm.bilm import BiLM
from ner.common.batching import length_batches
from ner.common.errors import InputError
from ner.common.memory import collector_paused, release_free_memory
from ner.common.packed_words import PackedWords
from ner.common.precision import product_dtype, warn_if_slow
from ner.common.vocabulary import Vocabulary
from ner.data.labels import SPANS, TOKENS
from ner.data.tag_schemes import SCHEMES, Span, spans_to_tags, split_tag, tags_to_spans
from ner.data.tokenize import Token, check_tokenizer, tokenize_sentences
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
    load_archive,
    save_archive,
)
from ner.model.shipped import portable_config, resolve_model
from ner.tagger.constraints import continuation_mask
from ner.tagger.dataset import Encoder, collate
from ner.tagger.marginals import CrfPosterior
from ner.tagger.model import TaggerModel

if TYPE_CHECKING:
    from ner.model.evaluation import Evaluation

_WHITESPACE_TOKEN = re.compile(r"\S+")
# Distinct token strings whose biLM char-CNN vectors a Tagger keeps (emptied when it holds more):
# frequent words are encoded once per process, and memory stays bounded (25 MB at 128 floats).
TOKEN_CACHE_SIZE = 50_000


@dataclass(frozen=True)
class Entity:
    """A tagged span: ``text == source[start:end]``; tokens ``token_start`` to ``token_end``
    (exclusive); `confidence` = P(this exact span has this type | text) under the CRF."""

    text: str
    type: str
    start: int
    end: int
    token_start: int
    token_end: int
    confidence: float

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "type": self.type,
            "start": self.start,
            "end": self.end,
            "token_start": self.token_start,
            "token_end": self.token_end,
            "confidence": round(self.confidence, 6),
        }


@dataclass
class TaggedText:
    """One input text: its tokens (with offsets), one tag per token, sentence spans (token
    indices, end exclusive) and entities; for per-token labels `confidences` holds each token's
    label probability (None for span models)."""

    text: str
    tokens: list[Token]
    tags: list[str]
    sentences: list[tuple[int, int]]
    entities: list[Entity]
    confidences: list[float] | None = None

    def token_json(self) -> list[dict[str, Any]]:
        """The tokens with offsets; for per-token labels also each one's tag and confidence."""
        tokens = [{"text": t.text, "start": t.start, "end": t.end} for t in self.tokens]
        if self.confidences is not None:
            for token, tag, confidence in zip(tokens, self.tags, self.confidences, strict=True):
                token.update(tag=tag, confidence=round(confidence, 6))
        return tokens

    def to_json(self) -> dict[str, Any]:
        """The ``--format jsonl`` object."""
        return {
            "text": self.text,
            "tokens": self.token_json(),
            "tags": self.tags,
            "sentences": [
                {"start": self.tokens[a].start, "end": self.tokens[b - 1].end}
                for a, b in self.sentences
            ],
            "entities": [entity.to_json() for entity in self.entities],
        }


@dataclass
class TaggedSentence:
    """One token list's tags and entity spans: (type, start, end exclusive, confidence), in
    token indices; per-token labels have no spans but one confidence per tag."""

    tags: list[str]
    spans: list[tuple[str, int, int, float]]
    confidences: list[float] = field(default_factory=list)


def whitespace_tokens(line: str) -> list[Token]:
    """Pre-tokenized input: whitespace-separated tokens with their offsets into `line`."""
    return [Token(m.group(), m.start(), m.end()) for m in _WHITESPACE_TOKEN.finditer(line)]


def joined_tokens(tokens: Sequence[str], sentence: int = 0) -> tuple[str, list[Token]]:
    """Pre-tokenized input as a text: `tokens` joined by single spaces, each kept exactly (a
    no-break or inner space stays inside its token), with its offsets into that text.
    sentence: the sentence's index, for error messages."""
    text, result, start = [], [], 0
    for position, token in enumerate(tokens):
        if not isinstance(token, str):
            raise TypeError(
                f"sentence {sentence}, token {position} is a {type(token).__name__}, not a string"
            )
        if not token or token.isspace():
            raise ValueError(
                f"sentence {sentence}, token {position} ({token!r}) is empty or whitespace only; "
                "every token needs a visible character"
            )
        result.append(Token(token, start, start + len(token)))
        text.append(token)
        start += len(token) + 1
    return " ".join(text), result


def save_tagger(
    directory: str | Path,
    model: TaggerModel,
    encoder: Encoder,
    bilm: BiLMFiles | None,
    *,
    corpus_scheme: str | None = None,
    config: dict[str, Any] | None = None,
    compact: bool = False,
    pretrained_source: str | None = None,
    **options: Any,
) -> Path:
    """Write a trained tagger as the model directory `Tagger.load` reads: the weights, the
    encoder's vocabularies (``vocabularies/encoder.json``: words, chars, tags;
    ``pretrained_words.json``: the words whose frozen float16 vectors follow the trained rows),
    the biLM files and the corpus's tag scheme. config: the run's resolved configuration, kept for
    the record with its biLM paths made portable (`ner.model.shipped.portable_config`, relative
    to the folder that holds `directory`, the run's); options: for
    `ner.model.archive.save_archive` (e.g. ``embed_bilm_max_bytes``).

    compact: write a compact folder instead: float16 weights, a shipped biLM by reference, and
    pretrained words left out, to be rebuilt on load from `pretrained_source`, the named table
    they came from (e.g. ``glove.6B.50d``; checked here first: the rebuilt words must be exactly
    the stored ones)."""
    vocabularies = {"encoder": encoder.to_json()}
    rebuilt = {}
    if compact:
        options.update(weights_dtype="float16", refer_to_package=True)
        if encoder.pretrained is not None:
            rebuilt["pretrained_words"] = _extension_reference(model, encoder, pretrained_source)
    elif encoder.pretrained is not None:
        vocabularies["pretrained_words"] = encoder.pretrained.to_json()
    return save_archive(
        directory,
        model=model,
        model_config=model.config,
        vocabularies=vocabularies,
        bilm=bilm,
        config=portable_config(config, Path(directory).resolve().parent),
        metadata={"corpus_scheme": corpus_scheme, "encoder": "ner.tagger.dataset.Encoder"},
        rebuilt=rebuilt,
        **options,
    )


def _extension_reference(
    model: TaggerModel, encoder: Encoder, source: str | None
) -> dict[str, Any]:
    """The manifest entry that lets a loader rebuild the model's pretrained words from `source`;
    ArchiveError if the rebuilt words or vectors would differ from the model's."""
    assert model.pretrained_words is not None and encoder.pretrained is not None
    if source not in REBUILDABLE["pretrained_words"]:
        raise ArchiveError(
            f"a compact folder rebuilds pretrained words only from "
            f"{', '.join(REBUILDABLE['pretrained_words'])}, not from {source}: save it in full"
        )
    stored = extension_digest(encoder.pretrained, model.pretrained_words)
    words, vectors = rebuild_extension(source, encoder.words)
    if extension_digest(words, vectors) != stored:
        raise ArchiveError(
            f"the model's pretrained words are not those of {source} for its vocabulary, so a "
            "compact folder could not rebuild them: export it without compacting"
        )
    return {"source": source, "count": len(words), "sha256": stored}


def _rebuilt_extension(
    entry: dict[str, Any], encoder: Encoder, directory: Path
) -> tuple[PackedWords, torch.Tensor]:
    """A compact folder's pretrained words and (E, dim) float16 vectors, rebuilt from their
    pinned table (fetched on first use), checked against the manifest's digest and kept in the
    data folder for the next load."""
    try:
        return cached_extension(entry["source"], encoder.words, entry["count"], entry["sha256"])
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


def check_vocabularies(model: TaggerModel, encoder: Encoder) -> None:
    """Every id the encoder can give has a row in the model (ValueError otherwise): a vocabulary
    longer than its embedding would make each sentence with one of its last words fail, and with
    it every request tagged in the same batch."""
    sizes = []
    if model.word_embedding is not None:
        rows = model.pretrained_words.shape[0] if model.pretrained_words is not None else 0
        sizes.append(("words", len(encoder.words), model.word_embedding.num_embeddings))
        if encoder.pretrained is not None:
            sizes.append(("pretrained words", len(encoder.pretrained), rows))
    if model.char_encoder is not None:
        sizes.append(
            ("characters", len(encoder.chars), model.char_encoder.embedding.num_embeddings)
        )
    for what, entries, rows in sizes:
        if entries != rows:
            raise ValueError(
                f"the vocabulary of {what} has {entries} entries, but the model's embedding "
                f"has {rows} rows: the vocabularies and the weights do not belong together"
            )


def pretrained_words_of(
    archive: LoadedArchive, encoder: Encoder
) -> tuple[PackedWords | None, torch.Tensor | None]:
    """The words of a model folder's frozen pretrained rows (None without any): stored in the
    folder, or rebuilt from the pinned table of a compact folder, which also gives their
    (E, dim) float16 vectors, left out of its weights (else None)."""
    if "pretrained_words" in archive.rebuilt:
        return _rebuilt_extension(archive.rebuilt["pretrained_words"], encoder, archive.directory)
    words = archive.vocabularies.get("pretrained_words")
    if words is None:
        return None, None
    try:  # packed: a dict of ~400k words would take 4 times the memory
        return PackedWords.from_json(words), None
    except ValueError as error:
        raise ArchiveError(
            f"model {archive.directory}: vocabularies/pretrained_words.json: {error}"
        ) from None


class TaggingStopped(Exception):
    """Tagging was stopped by its caller's `stop` callback (e.g. the client went away)."""


class Tagger:
    """A `TaggerModel` with its vocabularies and frozen biLM, for tagging new text.

    model: the trained tagger; encoder: its word/char/tag vocabularies; bilm: the biLM files it
    reads (None when it uses no ELMo); device: where to run; max_length: longer sentences are
    tagged in pieces of at most this many tokens; corpus_scheme: the tag scheme of the training
    corpus; tag_scheme: the scheme of the output tags (default: the corpus's, else the model's);
    tokenizer: how `predict` splits raw text, ``news`` (CoNLL-style, the default) or ``social``
    (keeps @mentions, #hashtags, URLs, e-mail addresses and emoticons whole); precision: of the
    LSTMs' matrix products, ``float32`` (exact, the default) or ``bfloat16`` (faster on CPUs with
    bfloat16 instructions; confidences move slightly, see `ner.common.precision`).
    """

    def __init__(
        self,
        model: TaggerModel,
        encoder: Encoder,
        bilm: BiLMFiles | None = None,
        *,
        device: str | torch.device = "cpu",
        max_length: int = 256,
        corpus_scheme: str | None = None,
        tag_scheme: str | None = None,
        tokenizer: str = "news",
        precision: str = "float32",
    ) -> None:
        if max_length < 1:
            raise InputError(f"max_length must be positive, got {max_length}")
        if model.elmo_mix is not None and bilm is None:
            raise ValueError("this model reads ELMo layers: give the biLM files it was trained on")
        check_vocabularies(model, encoder)
        # A per-token model's corpus has the scheme `TOKENS`; tags can be converted only to chunk
        # schemes.
        if corpus_scheme is not None and corpus_scheme not in (*SCHEMES, TOKENS):
            raise InputError(
                f"corpus_scheme must be one of {', '.join((*SCHEMES, TOKENS))}, got "
                f"{corpus_scheme!r}"
            )
        self.device = torch.device(device)
        self.model = model.to(self.device).eval()
        self.encoder = encoder
        self.bilm_files = bilm
        self.max_length = max_length
        self.model_scheme: str = model.config["tag_scheme"]
        self.corpus_scheme = corpus_scheme
        self.labels = TOKENS if self.model_scheme == TOKENS else SPANS
        self.tag_scheme: str = corpus_scheme or self.model_scheme
        self.use_tag_scheme(tag_scheme)
        self.tokenizer = check_tokenizer(tokenizer)
        self.model.encoder.product_dtype = product_dtype(precision)  # checks the name
        self.precision = precision
        warn_if_slow(precision, self.device)
        if self.labels == SPANS:
            self._tag_types = np.array([split_tag(tag)[1] for tag in model.tags])  # (K,)
            self._continues = continuation_mask(model.tags)  # (K, K)
        self._token_vectors: dict[str, torch.Tensor] = {}  # the biLM char-CNN's, per token string
        self.config: dict[str, Any] = {}  # the training run's configuration, when loaded

    def use_tag_scheme(self, scheme: str | None) -> None:
        """Write the output tags in `scheme` from now on (``iob1``, ``iob2`` or ``bioes``); None:
        the training corpus's scheme, else the model's. A per-token model has no chunk scheme."""
        if scheme is not None and scheme not in SCHEMES:
            raise InputError(f"tag_scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
        if self.labels == TOKENS and scheme not in (None, TOKENS):
            raise InputError(
                f"tag_scheme={scheme}: this model predicts per-token labels, which have no "
                "chunk scheme"
            )
        self.tag_scheme = scheme or self.corpus_scheme or self.model_scheme

    @functools.cached_property
    def bilm(self) -> BiLM | None:
        """The frozen biLM, loaded on first use (None for a model without ELMo)."""
        if self.bilm_files is None or self.model.elmo_mix is None:
            return None
        files = self.bilm_files
        bilm = BiLM.from_files(files.options, files.weights, state=files.state)
        wanted = (self.model.config["elmo_layers"], self.model.config["elmo_dim"])
        if (bilm.num_layers, bilm.output_dim) != wanted:
            raise ArchiveError(
                f"the biLM {files.options} gives {bilm.num_layers} layers of {bilm.output_dim} "
                f"values, but the model mixes {wanted[0]} layers of {wanted[1]}: the biLM is not "
                "the one the model was trained with"
            )
        bilm.lstm.product_dtype = self.model.encoder.product_dtype
        return bilm.to(self.device).eval()

    @classmethod
    def load(
        cls, directory: str | Path, *, allow_download: bool = False, **options: Any
    ) -> "Tagger":
        """Load a model directory (see `ner.model.archive`) or a shipped tagger by name
        (``"conll2003"``, see `ner.model.shipped`); allow_download: fetch a biLM that the
        folder gives as a URL (off by default: the folder chooses the address); `options` go
        to the constructor."""
        directory = resolve_model(directory)
        archive = load_archive(directory, allow_download=allow_download)
        encoder = Encoder.from_json(archive.vocabularies["encoder"])
        words, vectors = pretrained_words_of(archive, encoder)
        if vectors is not None:  # a compact folder's, rebuilt from the pinned table
            archive.state_dict["pretrained_words"] = vectors
        tagger = cls.restore(
            directory,
            archive.model_config,
            archive.state_dict,  # float16 weights are widened to float32
            encoder,
            words,
            archive.bilm,
            corpus_scheme=archive.manifest["metadata"].get("corpus_scheme"),
            **options,
        )
        tagger.config = archive.config
        # The parsed vocabulary files (400k GloVe words as Python strings) are freed now; hand
        # the heap space they took back, or it stays in the process for good.
        del archive, words, vectors
        release_free_memory()
        return tagger

    @classmethod
    def restore(
        cls,
        source: Path,
        model_config: dict[str, Any],
        state_dict: dict[str, torch.Tensor],
        encoder: Encoder,
        pretrained: Vocabulary | PackedWords | None,
        bilm: BiLMFiles | None,
        **options: Any,
    ) -> "Tagger":
        """A tagger from saved parts: the `TaggerModel` config and weights, the encoder, the
        words of the frozen pretrained rows (re-attached to the encoder: they are saved apart
        from it) and the biLM files; the one way a model folder (`load`) and a training
        checkpoint (`ner-evaluate`) become a `Tagger`. source: the folder or file they came
        from, for error messages; `options` go to the constructor. Raises `ArchiveError` when
        the sizes of the config, weights and vocabularies do not fit together."""
        check_sizes(model_config, state_dict, source)
        with SkipFills():  # as large as the weights (checked above), which replace every value
            model = TaggerModel(**model_config)
        own = model.state_dict()
        # The weights become the model's tensors (no second copy in memory), in its dtypes:
        # float16 weights are widened to float32, the frozen pretrained rows stay float16.
        weights = {k: v.to(own[k].dtype) if k in own else v for k, v in state_dict.items()}
        model.load_state_dict(weights, assign=True)
        encoder.pretrained = pretrained
        try:
            check_vocabularies(model, encoder)
        except ValueError as error:
            raise ArchiveError(f"model {source}: {error}") from None
        tagger = cls(model, encoder, bilm, **options)
        _ = tagger.bilm  # load it now: errors surface here, and load time is honest
        return tagger

    def save(
        self, directory: str | Path, *, config: dict[str, Any] | None = None, **options: Any
    ) -> Path:
        """Write this tagger as a self-contained model directory (see `save_tagger`)."""
        return save_tagger(
            directory,
            self.model,
            self.encoder,
            self.bilm_files,
            corpus_scheme=self.corpus_scheme,
            config=config,
            **options,
        )

    @collector_paused()  # no cyclic collections amid its many small objects (ner.common.memory)
    def predict(self, texts: str | Sequence[str], *, batch_size: int = 64) -> list[TaggedText]:
        """Tag raw texts (each split into sentences); one `TaggedText` per text."""
        texts = [texts] if isinstance(texts, str) else list(texts)
        sentences = [tokenize_sentences(t, self.tokenizer) for t in texts]
        return self.tag_tokenized(texts, sentences, batch_size)

    @collector_paused()  # no cyclic collections amid its many small objects (ner.common.memory)
    def predict_tokens(
        self,
        sentences: Sequence[Sequence[str]],
        *,
        batch_size: int = 64,
        tag_scheme: str | None = None,
    ) -> list[TaggedText]:
        """Tag pre-tokenized sentences, keeping every token exactly as given (one tag each).

        A result's text is its tokens joined by single spaces, with each token's offsets into it.
        An empty list gives an empty result; an empty or whitespace-only token is a ValueError.
        tag_scheme: of the tags, for this call (default: the tagger's `tag_scheme`).
        """
        joined = [joined_tokens(tokens, index) for index, tokens in enumerate(sentences)]
        texts = [text for text, _ in joined]
        return self.tag_tokenized(
            texts, [[s] if s else [] for _, s in joined], batch_size, tag_scheme=tag_scheme
        )

    def evaluate(
        self,
        sentences: Sequence[Sequence[str]],
        gold: Sequence[Sequence[str]],
        *,
        scheme: str | None = None,
        tag_scheme: str | None = None,
        batch_size: int = 64,
    ) -> "Evaluation":
        """Tag gold-tagged token sentences and score the tags; see
        `ner.model.evaluation.evaluate_tagger`."""
        from ner.model.evaluation import evaluate_tagger

        return evaluate_tagger(
            self, sentences, gold, scheme=scheme, tag_scheme=tag_scheme, batch_size=batch_size
        )

    @collector_paused()  # no cyclic collections amid its many small objects (ner.common.memory)
    def tag_tokenized(
        self,
        texts: Sequence[str],
        sentences: Sequence[Sequence[Sequence[Token]]],
        batch_size: int,
        *,
        tag_scheme: str | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> list[TaggedText]:
        """Tag texts already split into sentences of tokens (offsets into each text); `stop`
        as in `tag_sentences`."""
        flat = [[t.text for t in sentence] for document in sentences for sentence in document]
        tagged = iter(
            self.tag_sentences(flat, batch_size=batch_size, tag_scheme=tag_scheme, stop=stop)
        )
        results = []
        for text, document in zip(texts, sentences, strict=True):
            tokens, tags, bounds, entities, confidences = [], [], [], [], []
            for sentence in document:
                result, offset = next(tagged), len(tokens)
                bounds.append((offset, offset + len(sentence)))
                for kind, start, end, confidence in result.spans:
                    first, last = sentence[start], sentence[end - 1]
                    entities.append(
                        Entity(
                            text[first.start : last.end],
                            kind,
                            first.start,
                            last.end,
                            offset + start,
                            offset + end,
                            confidence,
                        )
                    )
                tokens.extend(sentence)
                tags.extend(result.tags)
                confidences.extend(result.confidences)
            per_token = confidences if self.labels == TOKENS else None
            results.append(TaggedText(text, tokens, tags, bounds, entities, per_token))
        return results

    @collector_paused()  # no cyclic collections amid its many small objects (ner.common.memory)
    def tag_sentences(
        self,
        sentences: Sequence[Sequence[str]],
        *,
        batch_size: int = 64,
        tag_scheme: str | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> list[TaggedSentence]:
        """Tags and scored spans of token lists; long ones go in pieces. The tags are in
        `tag_scheme` (default: the tagger's), rebuilt from the spans, so that they always form a
        valid sequence that encodes exactly the spans (an unconstrained model's Viterbi path
        may not). `stop`, asked before each batch of `batch_size` sentences, ends the tagging
        with `TaggingStopped` once it answers True."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        scheme = self.tag_scheme if tag_scheme is None else tag_scheme
        if self.labels == SPANS and scheme not in SCHEMES:
            raise ValueError(f"tag_scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
        if self.labels == TOKENS and scheme != TOKENS:
            raise ValueError(
                f"tag_scheme={scheme}: this model predicts per-token labels, which have no "
                "chunk scheme"
            )
        pieces: list[list[str]] = []
        owners: list[int] = []
        for index, sentence in enumerate(sentences):
            if not sentence:
                raise ValueError(f"sentence {index} has no tokens")
            for start in range(0, len(sentence), self.max_length):
                pieces.append(list(sentence[start : start + self.max_length]))
                owners.append(index)
        tagged = self._tag_pieces(pieces, batch_size, stop)
        merged = [TaggedSentence([], []) for _ in sentences]
        for owner, piece in zip(owners, tagged, strict=True):
            target, offset = merged[owner], len(merged[owner].tags)
            target.spans.extend((k, s + offset, e + offset, c) for k, s, e, c in piece.spans)
            target.tags.extend(piece.tags)
            target.confidences.extend(piece.confidences)
        if self.labels == SPANS:
            for result in merged:
                spans = [Span(kind, start, end) for kind, start, end, _ in result.spans]
                result.tags = spans_to_tags(spans, len(result.tags), scheme)
        return merged

    @torch.inference_mode()
    def _tag_pieces(
        self, pieces: list[list[str]], batch_size: int, stop: Callable[[], bool] | None = None
    ) -> list[TaggedSentence]:
        """Decode sentences of at most `max_length` tokens, batched longest first."""
        results: list[TaggedSentence | None] = [None] * len(pieces)
        for rows in length_batches([len(piece) for piece in pieces], batch_size=batch_size):
            if stop is not None and stop():
                raise TaggingStopped("tagging was stopped before it ended")
            tokens = [pieces[i] for i in rows]
            examples = [self.encoder.encode(r, sentence, None) for r, sentence in enumerate(tokens)]
            layers = None
            if self.bilm is not None:
                if len(self._token_vectors) > TOKEN_CACHE_SIZE:
                    self._token_vectors.clear()
                layers, _ = self.bilm.embed_batch(tokens, self._token_vectors)  # (B, L, T, D)
            batch = collate(examples).to(self.device)
            batch.elmo = layers
            emissions = self.model.emissions(batch)  # (B, T, K)
            lengths = [len(t) for t in tokens]
            if self.model.crf is None:  # per-token labels with a softmax: argmax and its share
                probabilities = emissions.double().softmax(-1)
                best, paths = probabilities.max(-1)  # (B, T) each
                decoded = self._token_labels(paths.cpu().numpy(), best.cpu().numpy(), lengths)
            else:
                paths, _ = self.model.crf.viterbi(emissions, batch.mask)
                posterior = CrfPosterior(
                    emissions.double(),
                    batch.mask,
                    *(s.double() for s in self.model.crf.constrained_scores()),
                )
                if self.labels == TOKENS:  # each decoded label's marginal probability
                    chosen = posterior.token_marginals().gather(2, paths.unsqueeze(2))[:, :, 0]
                    decoded = self._token_labels(paths.cpu().numpy(), chosen.cpu().numpy(), lengths)
                else:
                    decoded = self._decode(posterior, paths.cpu().numpy(), lengths)
            for index, tagged in zip(rows, decoded, strict=True):
                results[index] = tagged
        return results  # type: ignore[return-value]

    def _token_labels(
        self, paths: np.ndarray, confidences: np.ndarray, lengths: list[int]
    ) -> list[TaggedSentence]:
        """Per-token labels of a decoded batch: paths (B, T) label ids, confidences (B, T)."""
        return [
            TaggedSentence(
                [self.model.tags[i] for i in paths[row, :length]],
                [],
                [float(c) for c in confidences[row, :length]],
            )
            for row, length in enumerate(lengths)
        ]

    def _decode(
        self, posterior: CrfPosterior, paths: np.ndarray, lengths: list[int]
    ) -> list[TaggedSentence]:
        """Tags, spans and span confidences of a decoded batch; paths: (B, T) tag ids."""
        tagged, spans = [], []
        for row, length in enumerate(lengths):
            tags = [self.model.tags[i] for i in paths[row, :length]]
            tagged.append(TaggedSentence(tags, []))
            spans += [
                (row, k, s, e) for k, s, e in tags_to_spans(tags, self.model_scheme, lenient=True)
            ]
        if not spans:
            return tagged
        bounds = np.array([(row, start, end) for row, _, start, end in spans])
        members = np.stack([self._tag_types == kind for _, kind, _, _ in spans])  # (N, K)
        confidences = posterior.chunk_probabilities(bounds, members, self._continues)
        for (row, kind, start, end), confidence in zip(spans, confidences.tolist(), strict=True):
            tagged[row].spans.append((kind, start, end, confidence))
        return tagged
