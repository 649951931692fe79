"""The BiLSTM-CRF tagger: [GloVe ⊕ char-CNN ⊕ ELMo scalar mix] → dropout → BiLSTM → linear → CRF.

With ``crf=False`` (per-token labels only) the last step is a softmax per token instead: the loss
is the summed cross-entropy and decoding takes each token's most likely label.

Defaults follow AllenNLP's CoNLL-2003 NER-with-ELMo model (docs/training.md, "The main job").
Each input family is optional: ``num_words=0`` drops the word embedding, ``num_chars=0`` the
char CNN and ``elmo_dim=0`` the ELMo mix. The biLM itself is not part of this module: the model
receives its frozen layers (from the feature cache or a live biLM), so only the mix weights and
γ train.
The constructor takes plain values only, so ``TaggerModel(**model.config)`` rebuilds it.
"""

from typing import Any

import torch
from torch import nn
from torch.nn import functional

from ner.bilm.scalar_mix import ScalarMix
from ner.data.labels import TOKENS
from ner.tagger.batch import TaggerBatch
from ner.tagger.bilstm import BiLSTM
from ner.tagger.char_encoder import CharCnnEncoder
from ner.tagger.constraints import allowed_transitions
from ner.tagger.crf import ConstrainedCRF

# How the word rows initialised from pretrained vectors train (``embeddings.glove.tuning``).
WORD_TUNINGS = ("fine_tune", "frozen", "anchored", "projected")


class TaggerModel(nn.Module):
    """A CRF sequence tagger over concatenated word, character and ELMo features.

    # Parameters
    tags: the tag strings in id order (in `tag_scheme`).
    tag_scheme: ``iob1``, ``iob2`` or ``bioes``, or ``tokens`` for plain per-token labels.
    constrain_decoding: mask the CRF so that Viterbi only yields sequences valid in `tag_scheme`
        (nothing to mask for per-token labels).
    crf: a CRF over the sequence, or (per-token labels only) an independent softmax per token.
    num_words: rows of the trained word embedding (0: no word embedding); the caller
        initialises them (from GloVe).
    pretrained_words: how many more word ids map to frozen float16 pretrained vectors (words
        outside the training data).
    word_dim: the word vectors' width.
    word_trainable: whether the word embedding trains at all.
    word_tuning: how its rows initialised from pretrained vectors train (`WORD_TUNINGS`:
        ``fine_tune``, ``frozen``, ``anchored``, ``projected``; see `set_pretrained_rows`).
    num_chars: the character vocabulary's size (0: no char CNN).
    char_dim: the character embedding's width.
    char_filters: the char CNN's filters (its output width).
    char_width: the char CNN's window, in characters.
    elmo_dim: the width of the frozen biLM's layers (0: no ELMo).
    elmo_layers: how many layers the biLM gives.
    elmo_mix_layers: the subset of them mixed, e.g. [0, 1] (None: all).
    elmo_layer_norm: normalise each layer, sentence by sentence, before mixing.
    elmo_fixed_weights: fixed mix weights, one per mixed layer (None: learned, with γ).
    elmo_dropout: dropout on the mix's output.
    dropout: dropout on the concatenated input and on the BiLSTM's output.
    hidden_size: the BiLSTM's hidden units per direction.
    num_layers: its layers.
    lstm_dropout: dropout between its layers.
    """

    def __init__(
        self,
        *,
        tags: list[str],
        tag_scheme: str = "bioes",
        constrain_decoding: bool = True,
        crf: bool = True,
        num_words: int = 0,
        pretrained_words: int = 0,
        word_dim: int = 50,
        word_trainable: bool = True,
        word_tuning: str = "fine_tune",
        num_chars: int = 0,
        char_dim: int = 16,
        char_filters: int = 128,
        char_width: int = 3,
        elmo_dim: int = 0,
        elmo_layers: int = 3,
        elmo_mix_layers: list[int] | None = None,
        elmo_layer_norm: bool = False,
        elmo_fixed_weights: list[float] | None = None,
        elmo_dropout: float = 0.0,
        dropout: float = 0.5,
        hidden_size: int = 200,
        num_layers: int = 2,
        lstm_dropout: float = 0.5,
    ) -> None:
        super().__init__()
        self.config: dict[str, Any] = {
            name: value for name, value in locals().items() if name not in {"self", "__class__"}
        }
        self.tags = list(tags)
        if word_tuning not in WORD_TUNINGS:
            raise ValueError(f"word_tuning={word_tuning!r}: expected one of {WORD_TUNINGS}")
        self.word_tuning = word_tuning
        input_dim = 0
        self.word_embedding: nn.Embedding | None = None
        self.word_projection: nn.Linear | None = None
        # (E, word_dim) frozen float16 vectors of the words after the trained ones (saved with
        # the weights; `ner.embeddings.pretrained` fills them)
        self.register_buffer("pretrained_words", None)
        # Training only, not saved (`set_pretrained_rows`): (V,) which rows have a pretrained
        # value, and for word_tuning=anchored their (V, word_dim) pretrained values.
        self.register_buffer("word_pretrained_rows", None, persistent=False)
        self.register_buffer("word_anchor", None, persistent=False)
        if num_words:
            self._build_words(num_words, pretrained_words, word_dim, word_trainable)
            input_dim += word_dim
        self.char_encoder: CharCnnEncoder | None = None
        if num_chars:
            self.char_encoder = CharCnnEncoder(num_chars, char_dim, char_filters, char_width)
            input_dim += self.char_encoder.output_dim
        self.elmo_mix: ScalarMix | None = None
        if elmo_dim:
            self.elmo_mix = ScalarMix(
                elmo_layers,
                layers=elmo_mix_layers,
                fixed_weights=elmo_fixed_weights,
                layer_norm=elmo_layer_norm,
            )
            self.elmo_dropout = nn.Dropout(elmo_dropout)
            input_dim += elmo_dim
        if input_dim == 0:
            raise ValueError("the tagger needs at least one input: words, chars or ELMo")
        self.input_dim = input_dim
        self.dropout = nn.Dropout(dropout)
        self.encoder = BiLSTM(input_dim, hidden_size, num_layers, lstm_dropout)
        self.projection = nn.Linear(2 * hidden_size, len(self.tags))
        if not crf and tag_scheme != TOKENS:
            raise ValueError(
                f"crf=False (a softmax per token) is for per-token labels; chunk tags in "
                f"{tag_scheme} need the CRF"
            )
        constrained = constrain_decoding and tag_scheme != TOKENS
        masks = allowed_transitions(tag_scheme, self.tags) if constrained else None
        self.crf: ConstrainedCRF | None = ConstrainedCRF(len(self.tags), masks) if crf else None

    def set_precision(self, precision: str) -> None:
        """Run the BiLSTM's matrix products in another precision while no gradient is taken
        (prediction); training stays float32.

        # Parameters
        precision: ``float32`` or ``bfloat16`` (see `ner.common.precision`).
        """
        self.encoder.set_precision(precision)

    def _build_words(
        self, num_words: int, pretrained_words: int, word_dim: int, trainable: bool
    ) -> None:
        """The word embedding, the frozen extension's buffer and, for ``projected``, the map."""
        self.word_embedding = nn.Embedding(num_words, word_dim, padding_idx=0)
        self.word_embedding.weight.requires_grad = trainable
        if pretrained_words:  # filled by the caller: GloVe's vectors, or the saved ones
            self.pretrained_words = torch.empty(pretrained_words, word_dim, dtype=torch.half)
        if self.word_tuning == "projected":
            self.word_projection = nn.Linear(word_dim, word_dim, bias=False)
            nn.init.eye_(self.word_projection.weight)

    def set_pretrained_rows(
        self, initial: torch.Tensor, found: torch.Tensor, *, copy: bool = True
    ) -> None:
        """Prepare the word embedding's training from its pretrained init.

        With `word_tuning` ``frozen`` and ``projected`` the found rows get no gradient (the
        others, the unknown word's included, still train); with ``anchored`` `anchor_penalty`
        measures how far they moved. Nothing set here is saved: a loaded model needs none.

        # Parameters
        initial: (V, word_dim) the rows' initial values.
        found: (V,) bool, which rows hold a pretrained vector.
        copy: also write `initial` into the rows (False when resuming: the checkpoint holds the
            trained rows).
        """
        assert self.word_embedding is not None
        if copy:
            self.word_embedding.weight.data.copy_(initial)
        found = found.to(device=self.word_embedding.weight.device, dtype=torch.bool)
        if self.word_tuning in ("frozen", "projected", "anchored"):
            self.word_pretrained_rows = found
        if self.word_tuning == "anchored":
            self.word_anchor = initial.to(self.word_embedding.weight).clone()

    def anchor_penalty(self) -> torch.Tensor | None:
        """Summed squared distance of the pretrained rows from their pretrained values (None
        unless word_tuning=anchored and `set_pretrained_rows` was called)."""
        if self.word_anchor is None or self.word_embedding is None:
            return None
        moved = self.word_embedding.weight - self.word_anchor
        return moved.pow(2).masked_fill(~self.word_pretrained_rows.unsqueeze(1), 0.0).sum()

    def regularization(
        self, *, mix_l2: float = 0.0, anchor_weight: float = 0.0
    ) -> torch.Tensor | None:
        """What a training step adds to a batch's loss (once per batch): `mix_l2` × the summed
        squares of the ELMo mix's scalar weights (before their softmax) plus `anchor_weight` ×
        `anchor_penalty`; None when neither applies (a weight of 0, no ELMo mix, no anchor).

        # Parameters
        mix_l2: the weight of the mix penalty (``elmo.mix.l2``).
        anchor_weight: the weight of the word anchor penalty (``embeddings.glove.anchor_weight``
            with ``tuning=anchored``).
        """
        terms = []
        if mix_l2 and self.elmo_mix is not None:
            terms.append(mix_l2 * self.elmo_mix.scalar_parameters.pow(2).sum())
        anchor = self.anchor_penalty() if anchor_weight else None
        if anchor is not None:
            terms.append(anchor_weight * anchor)
        return sum(terms[1:], terms[0]) if terms else None

    def _word_table(self) -> torch.Tensor:
        """The trained rows as the lookup sees them: the pretrained ones cut off from the
        gradient with word_tuning frozen or projected."""
        assert self.word_embedding is not None
        weight = self.word_embedding.weight
        frozen = self.word_tuning in ("frozen", "projected")
        if frozen and self.word_pretrained_rows is not None and weight.requires_grad:
            weight = torch.where(self.word_pretrained_rows.unsqueeze(1), weight.detach(), weight)
        return weight

    def embed_words(self, words: torch.Tensor) -> torch.Tensor:
        """Word vectors (B, T, word_dim): trained rows, then pretrained ones, through
        `word_projection` when there is one.

        # Parameters
        words: (B, T) word ids.
        """
        assert self.word_embedding is not None
        table = self._word_table()
        if self.pretrained_words is None:
            embedded = functional.embedding(words, table, padding_idx=0)
        else:
            trained = self.word_embedding.num_embeddings
            extra = words >= trained  # (B, T)
            embedded = functional.embedding(words.masked_fill(extra, 0), table, padding_idx=0)
            if bool(extra.any()):
                looked_up = self.pretrained_words[(words - trained).clamp(min=0)]
                embedded = torch.where(extra.unsqueeze(2), looked_up.to(embedded.dtype), embedded)
        if self.word_projection is not None:
            embedded = self.word_projection(embedded)
        return embedded

    def features(self, batch: TaggerBatch) -> torch.Tensor:
        """The concatenated, dropped-out input features (B, T, input_dim).

        # Parameters
        batch: the padded sentences (with ELMo layers for a model that mixes them).
        """
        parts = []
        if self.word_embedding is not None:
            parts.append(self.embed_words(batch.words))
        if self.char_encoder is not None:
            parts.append(self.char_encoder(batch.chars))
        if self.elmo_mix is not None:
            if batch.elmo is None:
                raise ValueError("this model uses ELMo but the batch carries no ELMo layers")
            # (B, L, T, D) → (B, T, D)
            parts.append(self.elmo_dropout(self.elmo_mix(batch.elmo.float(), batch.mask)))
        return self.dropout(torch.cat(parts, dim=-1))

    def emissions(self, batch: TaggerBatch) -> torch.Tensor:
        """Per-token tag scores (B, T, K) before the CRF.

        # Parameters
        batch: the padded sentences.
        """
        # encoded: (B, T, 2H), zeros at padding
        encoded = self.encoder(self.features(batch), batch.mask)
        return self.projection(self.dropout(encoded))

    def forward(self, batch: TaggerBatch) -> dict[str, torch.Tensor]:
        """``emissions`` (B, T, K), ``mask``, and with gold tags ``loss``: the summed negative
        log-likelihood (or cross-entropy without a CRF), without `regularization`.

        # Parameters
        batch: the padded sentences, with their gold tags for a loss.
        """
        emissions = self.emissions(batch)
        output = {"emissions": emissions, "mask": batch.mask}
        if batch.tags is not None and self.crf is None:
            gold = batch.tags.masked_fill(~batch.mask.bool(), -100)  # padding: ignored
            output["loss"] = functional.cross_entropy(
                emissions.flatten(0, 1), gold.flatten(), ignore_index=-100, reduction="sum"
            )
        elif batch.tags is not None:
            output["loss"] = -self.crf(emissions, batch.tags, batch.mask, reduction="sum")
        return output

    @torch.no_grad()
    def decode(self, batch: TaggerBatch) -> list[list[int]]:
        """Best (constrained) tag ids per sentence, unpadded: the CRF's Viterbi path, or
        without a CRF each token's most likely label.

        # Parameters
        batch: the padded sentences.
        """
        emissions = self.emissions(batch)
        if self.crf is not None:
            return self.crf.decode(emissions, batch.mask)
        lengths = batch.mask.long().sum(1).tolist()
        best = emissions.argmax(-1).tolist()
        return [row[:n] for row, n in zip(best, lengths, strict=True)]

    def mix_summary(self) -> dict[str, Any]:
        """The ELMo layers mixed, their weights (softmax) and γ, for logs and results.json."""
        if self.elmo_mix is None:
            return {}
        return {
            "layers": list(self.elmo_mix.layers),
            "weights": [float(w) for w in self.elmo_mix.normalized_weights().detach()],
            "gamma": float(self.elmo_mix.gamma.detach()),
        }
