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
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ner.bilm.bilm import BiLM
from ner.bilm.source import BiLMSource
from ner.common.batching import length_batches
from ner.common.errors import InputError
from ner.common.memory import collector_paused, release_free_memory
from ner.common.packed_words import PackedWords
from ner.common.precision import warn_if_slow
from ner.common.vocabulary import Vocabulary
from ner.data.labels import SPANS, TOKENS
from ner.data.tag_schemes import (
    OUTSIDE,
    SCHEMES,
    Span,
    spans_to_tags,
    split_tag,
    tags_to_spans,
)
from ner.data.tokenize import check_tokenizer
from ner.model.archive import ArchiveError, load_archive, model_version
from ner.model.evaluation import Evaluation, evaluation_schemes, score_tagged
from ner.model.inputs import PreparedText, prepared_texts, prepared_tokens
from ner.model.results import Entity, TaggedSentence, TaggedText
from ner.model.saving import (
    VOCABULARIES,
    check_vocabularies,
    pretrained_words_of,
    restored_model,
    save_tagger,
)
from ner.model.shipped import resolve_model
from ner.tagger.constraints import continuation_mask
from ner.tagger.dataset import Vocabularies, collate
from ner.tagger.marginals import CrfPosterior
from ner.tagger.model import TaggerModel

# Distinct token strings whose biLM char-CNN vectors a Tagger keeps (emptied when it holds more):
# frequent words are encoded once per process, and memory stays bounded (25 MB at 128 floats).
TOKEN_CACHE_SIZE = 50_000


def checked_scheme(scheme: str | None, labels: str) -> str | None:
    """`scheme` if output tags can be written in it (None stays None); `InputError` otherwise:
    a chunk scheme for a model of spans, none but ``tokens`` for one of per-token labels."""
    if labels == TOKENS and scheme not in (None, TOKENS):
        raise InputError(
            f"tag_scheme={scheme}: this model predicts per-token labels, which have no chunk scheme"
        )
    if labels == SPANS and scheme is not None and scheme not in SCHEMES:
        raise InputError(f"tag_scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
    return scheme


class TaggingStopped(Exception):
    """Tagging was stopped by its caller's `stop` callback (e.g. the client went away)."""


class Tagger:
    """A `TaggerModel` with its vocabularies and frozen biLM, for tagging new text. Usually
    made by `load`; tags with `predict` (raw text) or `predict_tokens` (token lists) and scores
    gold-tagged sentences with `evaluate`.

    # Parameters
    model: the trained tagger.
    vocabularies: its word, character and tag vocabularies.
    bilm: the biLM files it reads (None when it uses no ELMo).
    device: where to run (``"cpu"``, ``"cuda"``, ...).
    max_length: longer sentences are tagged in pieces of at most this many tokens.
    corpus_scheme: the tag scheme of the training corpus (``iob1``, ``iob2``, ``bioes``, or
        ``tokens`` for per-token labels).
    tag_scheme: the scheme of the output tags (default: the corpus's, else the model's).
    tokenizer: how `predict` splits raw text, ``news`` (CoNLL-style, the default) or ``social``
        (keeps @mentions, #hashtags, URLs, e-mail addresses and emoticons whole).
    precision: of the LSTMs' matrix products, ``float32`` (exact, the default) or ``bfloat16``
        (faster on CPUs with bfloat16 instructions; confidences move slightly, see
        `ner.common.precision`).
    """

    def __init__(
        self,
        model: TaggerModel,
        vocabularies: Vocabularies,
        bilm: BiLMSource | None = None,
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
        check_vocabularies(model, vocabularies)
        # A per-token model's corpus has the scheme `TOKENS`; tags can be converted only to chunk
        # schemes.
        if corpus_scheme is not None and corpus_scheme not in (*SCHEMES, TOKENS):
            raise InputError(
                f"corpus_scheme must be one of {', '.join((*SCHEMES, TOKENS))}, got "
                f"{corpus_scheme!r}"
            )
        self.device = torch.device(device)
        self.model = model.to(self.device).eval()
        self.vocabularies = vocabularies
        self.bilm_files = bilm
        self.max_length = max_length
        self.model_scheme: str = model.config["tag_scheme"]
        self.corpus_scheme = corpus_scheme
        self.labels = TOKENS if self.model_scheme == TOKENS else SPANS
        self.tag_scheme: str = corpus_scheme or self.model_scheme
        self.use_tag_scheme(tag_scheme)
        self.tokenizer = check_tokenizer(tokenizer)
        self.model.set_precision(precision)  # checks the name
        self.precision = precision
        warn_if_slow(precision, self.device)
        if self.labels == SPANS:
            self._tag_types = np.array([split_tag(tag)[1] for tag in model.tags])  # (K,)
            self._continues = continuation_mask(model.tags)  # (K, K)
        self._token_vectors: dict[str, torch.Tensor] = {}  # the biLM char-CNN's, per token string
        self.config: dict[str, Any] = {}  # the training run's configuration, when loaded
        # the training run's dev and test scores, from the folder it was loaded from
        self.scores: dict[str, Any] | None = None
        # the folder's `ner.model.archive.model_version`, when loaded from one
        self.version: str | None = None

    def use_tag_scheme(self, scheme: str | None) -> None:
        """Write the output tags in another scheme from now on.

        # Parameters
        scheme: ``iob1``, ``iob2`` or ``bioes``; None: the training corpus's scheme, else the
            model's. A per-token model has no chunk scheme (`InputError`).
        """
        scheme = checked_scheme(scheme, self.labels)
        self.tag_scheme = scheme or self.corpus_scheme or self.model_scheme

    @functools.cached_property
    def bilm(self) -> BiLM | None:
        """The frozen biLM, loaded on first use (None for a model without ELMo)."""
        if self.bilm_files is None or self.model.elmo_mix is None:
            return None
        files = self.bilm_files
        bilm = files.load()
        wanted = (self.model.config["elmo_layers"], self.model.config["elmo_dim"])
        if (bilm.num_layers, bilm.output_dim) != wanted:
            raise ArchiveError(
                f"the biLM {files.location} gives {bilm.num_layers} layers of {bilm.output_dim} "
                f"values, but the model mixes {wanted[0]} layers of {wanted[1]}: the biLM is not "
                "the one the model was trained with"
            )
        bilm.set_precision(self.precision)
        return bilm.to(self.device).eval()

    @classmethod
    def load(
        cls, directory: str | Path, *, allow_download: bool = False, **options: Any
    ) -> "Tagger":
        """Load a model directory (see `ner.model.archive`) or a shipped tagger by name
        (``"conll2003"``, see `ner.model.shipped`).

        # Parameters
        directory: the model folder, or a shipped tagger's name.
        allow_download: fetch a biLM that the folder gives as a URL (off by default: the folder
            chooses the address).
        options: for the constructor (``device``, ``tag_scheme``, ``tokenizer``, ...).
        """
        directory = resolve_model(directory)
        archive = load_archive(directory, allow_download=allow_download)
        vocabularies = Vocabularies.from_saved(archive.vocabularies, VOCABULARIES)
        words, vectors = pretrained_words_of(archive, vocabularies)
        if vectors is not None:  # a compact folder's, rebuilt from the pinned table
            archive.state_dict["pretrained_words"] = vectors
        metadata = archive.manifest["metadata"]
        tagger = cls.restore(
            directory,
            archive.model_config,
            archive.state_dict,  # float16 weights are widened to float32
            vocabularies,
            words,
            archive.bilm,
            corpus_scheme=metadata.get("corpus_scheme"),
            **options,
        )
        tagger.config = archive.config
        tagger.scores = metadata.get("scores")
        tagger.version = model_version(directory)
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
        vocabularies: Vocabularies,
        pretrained: Vocabulary | PackedWords | None,
        bilm: BiLMSource | None,
        **options: Any,
    ) -> "Tagger":
        """A tagger from saved parts (`ner.model.saving.restored_model`) and the biLM files; the
        one way a model folder (`load`) and a training checkpoint (`ner-evaluate`) become a
        `Tagger`. Raises `ArchiveError` when the parts do not fit together.

        # Parameters
        source: the folder or file the parts came from, for error messages.
        model_config: the `TaggerModel` constructor arguments.
        state_dict: its weights.
        vocabularies: its vocabularies, without their pretrained words.
        pretrained: the words of the frozen pretrained rows (None without any).
        bilm: the biLM files (None for a model without ELMo).
        options: for the constructor (``device``, ``tag_scheme``, ...).
        """
        model = restored_model(source, model_config, state_dict, vocabularies, pretrained)
        tagger = cls(model, vocabularies, bilm, **options)
        _ = tagger.bilm  # load it now: errors surface here, and load time is honest
        return tagger

    def save(
        self, directory: str | Path, *, config: dict[str, Any] | None = None, **options: Any
    ) -> Path:
        """Write this tagger as a self-contained model directory (see
        `ner.model.saving.save_tagger`), with the scores it was loaded with; returns its path.

        # Parameters
        directory: the folder to write (filled under a temporary name, then renamed into place).
        config: the training run's configuration, kept for the record.
        options: for `ner.model.saving.save_tagger` (``compact``, ``pretrained_source``, ...).
        """
        options.setdefault("scores", self.scores)
        return save_tagger(
            directory,
            self.model,
            self.vocabularies,
            self.bilm_files,
            corpus_scheme=self.corpus_scheme,
            config=config,
            **options,
        )

    def prepare(
        self, texts: Sequence[str], *, tokenizer: str | None = None, max_tokens: int | None = None
    ) -> list[PreparedText]:
        """Raw texts split into sentences of tokens, as `predict` tags them.

        # Parameters
        texts: the raw texts.
        tokenizer: ``news`` or ``social`` (default: the tagger's).
        max_tokens: raise `ner.model.inputs.TooManyTokens` as soon as the texts so far hold
            more tokens than this (None: no limit).
        """
        return prepared_texts(texts, check_tokenizer(tokenizer or self.tokenizer), max_tokens)

    @collector_paused()  # no cyclic collections amid its many small objects (ner.common.memory)
    def predict(
        self,
        texts: str | Sequence[str | PreparedText],
        *,
        batch_size: int = 64,
        tag_scheme: str | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> list[TaggedText]:
        """Tag raw texts, each split into sentences; one `TaggedText` per text.

        # Parameters
        texts: one text or several; a `PreparedText` (`prepare`, `ner.model.inputs`) is tagged
            as it was split.
        batch_size: sentences per forward pass.
        tag_scheme: of the output tags, for this call (default: the tagger's `tag_scheme`).
        stop: asked before each batch; once it answers True the tagging ends with
            `TaggingStopped`.
        """
        texts = [texts] if isinstance(texts, str) else list(texts)
        raw = [text for text in texts if not isinstance(text, PreparedText)]
        split = iter(self.prepare(raw))
        prepared = [t if isinstance(t, PreparedText) else next(split) for t in texts]
        return self._tag_prepared(prepared, batch_size, tag_scheme, stop)

    def forget_token_vectors(self) -> None:
        """Drop the biLM char-CNN vectors kept across calls. A token's vector comes from the
        char-CNN batch of the tokens first seen with it, and its last bits depend on that batch's
        size, so a confidence can differ in the sixth decimal with what was tagged before; after
        this call, output depends only on what is tagged from here on. ``ner-predict`` calls it
        at each chunk, so that its files are byte-identical whatever the split into processes."""
        self._token_vectors.clear()

    @collector_paused()  # no cyclic collections amid its many small objects (ner.common.memory)
    def predict_tokens(
        self,
        sentences: Sequence[Sequence[str]],
        *,
        batch_size: int = 64,
        tag_scheme: str | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> list[TaggedText]:
        """Tag pre-tokenized sentences, keeping every token exactly as given (one tag each).

        A result's text is its tokens joined by single spaces, with each token's offsets into it.
        An empty list gives an empty result; an empty or whitespace-only token is a ValueError.

        # Parameters
        sentences: token lists, one `TaggedText` each.
        batch_size: sentences per forward pass.
        tag_scheme: of the output tags, for this call (default: the tagger's `tag_scheme`).
        stop: asked before each batch; once it answers True the tagging ends with
            `TaggingStopped`.
        """
        return self._tag_prepared(prepared_tokens(sentences), batch_size, tag_scheme, stop)

    def evaluate(
        self,
        sentences: Sequence[Sequence[str]],
        gold: Sequence[Sequence[str]],
        *,
        scheme: str | None = None,
        tag_scheme: str | None = None,
        batch_size: int = 64,
    ) -> Evaluation:
        """Tag gold-tagged token sentences as `predict_tokens` does and score the tags
        (`ner.model.evaluation.score_tagged`).

        # Parameters
        sentences: token lists.
        gold: one gold tag per token.
        scheme: the gold's chunk scheme (detected when None).
        tag_scheme: of the predictions (default: the gold's, which adds the strict scores).
        batch_size: sentences per forward pass.
        """
        if len(sentences) != len(gold):
            raise ValueError(f"{len(sentences)} sentences but {len(gold)} gold tag sequences")
        scheme, tag_scheme, warnings = evaluation_schemes(
            gold, self.labels, self.model.tags, scheme, tag_scheme
        )
        started = time.perf_counter()
        tagged = self.predict_tokens(
            sentences, batch_size=batch_size, tag_scheme=None if scheme == TOKENS else tag_scheme
        )
        seconds = time.perf_counter() - started
        return score_tagged(tagged, gold, scheme, tag_scheme, seconds, warnings)

    def _tag_prepared(
        self,
        texts: Sequence[PreparedText],
        batch_size: int,
        tag_scheme: str | None,
        stop: Callable[[], bool] | None,
    ) -> list[TaggedText]:
        """Tag texts already split into sentences of tokens (offsets into each text)."""
        flat = [[t.text for t in sentence] for text in texts for sentence in text.sentences]
        tagged = iter(self._tag_sentences(flat, batch_size, tag_scheme, stop))
        results = []
        for prepared in texts:
            text = prepared.text
            tokens, tags, bounds, entities, confidences = [], [], [], [], []
            outside = 1.0
            for sentence in prepared.sentences:
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
                outside = min(outside, result.outside)
            per_token = confidences if self.labels == TOKENS else None
            results.append(TaggedText(text, tokens, tags, bounds, entities, per_token, outside))
        return results

    def _tag_sentences(
        self,
        sentences: Sequence[Sequence[str]],
        batch_size: int,
        tag_scheme: str | None,
        stop: Callable[[], bool] | None,
    ) -> list[TaggedSentence]:
        """Tags and scored spans of token lists; long ones go in pieces. The tags are in
        `tag_scheme` (default: the tagger's), rebuilt from the spans, so that they always form a
        valid sequence that encodes exactly the spans (an unconstrained model's Viterbi path
        may not). `stop` as in `predict`."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        scheme = self.tag_scheme if tag_scheme is None else checked_scheme(tag_scheme, self.labels)
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
            target.outside = min(target.outside, piece.outside)
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
            examples = [
                self.vocabularies.encode(r, sentence, None) for r, sentence in enumerate(tokens)
            ]
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

    def _outside_confidences(
        self, posterior: CrfPosterior, paths: np.ndarray, lengths: list[int]
    ) -> list[float]:
        """Per sentence of a decoded batch, the lowest marginal P(y_t = O) of its tokens decoded
        O (1.0 when it has none): how sure the CRF is that no entity was missed there."""
        if OUTSIDE not in self.model.tags:
            return [1.0] * len(lengths)
        index = self.model.tags.index(OUTSIDE)
        chances = posterior.token_marginals()[:, :, index].cpu().numpy()  # (B, T)
        real = np.arange(paths.shape[1]) < np.array(lengths)[:, None]
        decoded_outside = (paths == index) & real
        return np.where(decoded_outside, chances, 1.0).min(axis=1).tolist()

    def _decode(
        self, posterior: CrfPosterior, paths: np.ndarray, lengths: list[int]
    ) -> list[TaggedSentence]:
        """Tags, spans and span confidences of a decoded batch, and each sentence's lowest
        P(O) among the tokens decoded O (`TaggedSentence.outside`); paths: (B, T) tag ids."""
        tagged, spans = [], []
        outside = self._outside_confidences(posterior, paths, lengths)
        for row, length in enumerate(lengths):
            tags = [self.model.tags[i] for i in paths[row, :length]]
            tagged.append(TaggedSentence(tags, [], outside=outside[row]))
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
