"""The ELMo bidirectional language model: char-CNN token vectors + a 2-direction projected LSTM.

Three state modes decide the LSTM state a sentence starts from (docs/bilm.md, "State modes"):

* ``stateful`` — AllenNLP/bilm-tf: row r of a batch starts from the final state of row r of the
  previous batch (zeros at first). Needed to reproduce their outputs; depends on batch history.
* ``stateless`` — every sentence starts from zeros.
* ``warm`` (default) — every sentence starts from one fixed state: the final state after reading
  `WARMUP_TEXT` once from zeros. Deterministic like ``stateless`` (a sentence's vectors depend on
  nothing else), but the biLM was trained with states carried across sentences, never from zeros,
  so a state that has read real text is the in-distribution starting point.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from ner.bilm.char_cnn import CharCNN
from ner.bilm.char_ids import (
    BOS_CHAR_IDS,
    BOS_TOKEN,
    EOS_CHAR_IDS,
    EOS_TOKEN,
    token_to_char_ids,
)
from ner.bilm.lstm import BACKWARD, FORWARD, LSTMState, ProjectedBiLSTM, reverse_padded
from ner.bilm.options import BiLMOptions, OptionsError
from ner.bilm.weights import count_parameters, read_weights, resolve, write_weights
from ner.common.batching import length_batches

STATE_MODES = ("warm", "stateless", "stateful")
DEFAULT_STATE = "warm"  # of the biLM, of training (elmo.state) and of a saved model
MAX_TOKENS = 8192  # default padded-token budget of a sorted (warm/stateless) batch

# Fixed forever: changing it changes every `warm` output. Plain news-style English, one sentence per
# line, in the style of the 1B Word Benchmark the published models were trained on.
WARMUP_TEXT = """\
The company said on Tuesday that its profit rose 12 percent in the third quarter .
Officials in Washington declined to comment on the report , which was published late on Monday .
" We are very pleased with the results , " the chairman told reporters after the meeting .
Shares of the bank closed at $ 45.20 , up 1.3 percent , in New York Stock Exchange trading .
The team won the match 3-1 and will play in the final next week in London ."""


class BiLM(nn.Module):
    """Frozen-or-trainable ELMo biLM returning all L + 1 layers with boundaries removed. Usually
    made by `from_files`; `embed_sentences` gives the layers of token lists.

    # Parameters
    options: its shape (options.json).
    state: the LSTM state a sentence starts from: ``warm`` (the default), ``stateless`` or
        ``stateful`` (`STATE_MODES`; see the module's docstring).
    """

    boundary_tokens: tuple[str, str] = (BOS_TOKEN, EOS_TOKEN)  # the sentence start and end

    def __init__(self, options: BiLMOptions, state: str = DEFAULT_STATE) -> None:
        super().__init__()
        self.options = options
        self.char_cnn = CharCNN(options)
        self.lstm = ProjectedBiLSTM(
            options.projection_dim,
            options.lstm_dim,
            options.projection_dim,
            options.n_layers,
            options.cell_clip,
            options.proj_clip,
        )
        self.state = state  # validated by the setter below
        self._carried: LSTMState | None = None  # stateful mode: per-row state of the last batch
        self._warm: LSTMState | None = None  # warm mode: the state after WARMUP_TEXT (1 row)

    @property
    def state(self) -> str:
        """The state mode (`STATE_MODES`); setting another name is a ValueError."""
        return self._state

    @state.setter
    def state(self, mode: str) -> None:
        if mode not in STATE_MODES:
            raise ValueError(f"unknown biLM state mode {mode!r}; expected one of {STATE_MODES}")
        self._state = mode

    def set_precision(self, precision: str) -> None:
        """Run the LSTM's matrix products in another precision while no gradient is taken.

        # Parameters
        precision: ``float32`` or ``bfloat16`` (see `ner.common.precision`).
        """
        self.lstm.set_precision(precision)

    @property
    def output_dim(self) -> int:
        """2P: width of every returned layer."""
        return self.options.output_dim

    @property
    def num_layers(self) -> int:
        """L + 1: the token layer and one per LSTM layer."""
        return self.options.num_layers

    @classmethod
    def from_files(
        cls,
        options_file: str | Path,
        weight_file: str | Path,
        state: str = DEFAULT_STATE,
        expected: Mapping[str, Any] | None = None,
    ) -> "BiLM":
        """Load options.json + weights.hdf5 (local paths or http(s) URLs, downloaded once).

        # Parameters
        options_file: options.json.
        weight_file: weights.hdf5.
        state: the state mode, as for the constructor.
        expected: checked against the options so that a wrong file fails early with a clear
            message (e.g. a preset's `expected` block: output_dim, lstm_dim, ...). When it names
            the `options_file` it describes and that is not the file given (the user overrode a
            preset's files, e.g. `elmo.options_file=...`), the shapes are not checked.
        """
        options = BiLMOptions.from_file(resolve(options_file, desc="ELMo options"))
        expected = dict(expected or {})
        if expected.pop("options_file", str(options_file)) != str(options_file):
            expected = {}
        for key, value in expected.items():
            if key == "parameters":
                actual = count_parameters(options)
            elif hasattr(options, key):
                actual = getattr(options, key)
            else:
                raise OptionsError(f"{options_file}: unknown expected key {key!r}")
            if actual != value:
                raise OptionsError(f"{options_file}: {key} = {actual}, the preset expects {value}")
        # The weights are read (and checked against the options) before the model is built: a
        # crafted options file (a million layers) fails there instead of allocating them.
        arrays = read_weights(resolve(weight_file, desc="ELMo weights"), options)
        model = cls(options, state=state)
        model.load_tf_arrays(arrays)
        return model

    def load_tf_arrays(self, arrays: Mapping[str, np.ndarray]) -> None:
        """Load weights and forget the states derived from the old ones.

        # Parameters
        arrays: weights.hdf5's datasets by name (`ner.bilm.weights.read_weights`).
        """
        self.char_cnn.load_tf_arrays(arrays)
        self.lstm.load_tf_arrays(arrays)
        self.reset_states()
        self._warm = None

    def tf_arrays(self) -> dict[str, np.ndarray]:
        """All parameters as weights.hdf5 datasets."""
        return {**self.char_cnn.tf_arrays(), **self.lstm.tf_arrays()}

    def save(self, options_file: str | Path, weight_file: str | Path) -> None:
        """Write options.json and weights.hdf5 (the layout AllenNLP and bilm-tf read).

        # Parameters
        options_file: where options.json goes.
        weight_file: where weights.hdf5 goes.
        """
        self.options.save(options_file)
        write_weights(weight_file, self.tf_arrays())

    def _moved(self, state: LSTMState) -> bool:
        """Whether the module was moved or cast since `state` was made: its weights are on
        another device or of another dtype."""
        weights = self.lstm.layers[0].w_proj
        return (state.h.device, state.h.dtype) != (weights.device, weights.dtype)

    def reset_states(self) -> None:
        """Forget the carried state of `stateful` mode (the next batch starts from zeros)."""
        self._carried = None

    def forward(self, char_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """All layers (B, L+1, T, 2P) of a batch and its mask (B, T); the layers are exactly
        zero at padded positions.

        # Parameters
        char_ids: (B, T, 50) character ids (`ner.bilm.char_ids.batch_to_ids`), right-padded,
            without the sentence boundaries.
        """
        mask = (char_ids > 0).any(dim=-1)  # (B, T)
        real = char_ids[mask]  # (N, 50)
        boundaries = torch.tensor([BOS_CHAR_IDS, EOS_CHAR_IDS], device=char_ids.device)
        unique, inverse = torch.unique(torch.cat([boundaries, real]), dim=0, return_inverse=True)
        vectors = self.char_cnn(unique)[inverse]  # (2 + N, P)
        tokens = vectors.new_zeros(*mask.shape, vectors.shape[-1])  # (B, T, P)
        tokens = tokens.masked_scatter(mask.unsqueeze(-1), vectors[2:])
        return self.contextualize(tokens, mask, vectors[0], vectors[1]), mask

    def contextualize(
        self, tokens: torch.Tensor, mask: torch.Tensor, bos: torch.Tensor, eos: torch.Tensor
    ) -> torch.Tensor:
        """The LSTM over token vectors framed by the sentence boundaries: layers (B, L+1, T, 2P).

        # Parameters
        tokens: (B, T, P) token vectors (the char-CNN's), right-padded.
        mask: (B, T) bool, which positions hold a token.
        bos: (P,) the sentence start's vector.
        eos: (P,) the sentence end's vector.
        """
        batch, steps, dim = tokens.shape
        lengths = mask.sum(dim=1)  # (B,)
        rows = torch.arange(batch, device=tokens.device)
        padded = torch.cat([bos.expand(batch, 1, dim), tokens, tokens.new_zeros(batch, 1, dim)], 1)
        padded = padded.index_put((rows, lengths + 1), eos.expand(batch, dim))  # (B, T+2, P)
        total = lengths + 2
        inputs = torch.stack([padded, reverse_padded(padded, total)])  # (2, B, T+2, P)
        outputs, final = self.lstm(inputs, total, self._initial_state(batch))
        if self.state == "stateful":
            self._carry(final)
        layers = [torch.cat([padded, padded], dim=-1)]
        for output in outputs:  # (2, B, T+2, P)
            backward = reverse_padded(output[BACKWARD], total)
            layers.append(torch.cat([output[FORWARD], backward], dim=-1))
        stacked = torch.stack(layers, dim=1)[:, :, 1 : steps + 1]  # (B, L+1, T, 2P)
        return stacked * mask[:, None, :, None].to(stacked.dtype)

    def _initial_state(self, batch: int) -> LSTMState | None:
        """The LSTM state the rows of a batch of `batch` sentences start from."""
        if self.state == "stateless":
            return None
        if self.state == "warm":
            warm = self.warm_state()
            return LSTMState(*(s.expand(-1, -1, batch, -1) for s in warm))
        if self._carried is None:
            return None
        if self._moved(self._carried):  # the carried state follows the module
            weights = self.lstm.layers[0].w_proj
            self._carried = LSTMState(self._carried.h.to(weights), self._carried.c.to(weights))
        if self._carried.h.is_inference() and not torch.is_inference_mode_enabled():
            self._carried = LSTMState(self._carried.h.clone(), self._carried.c.clone())
        carried = self.lstm.zero_state(batch)
        rows = min(batch, self._carried.h.shape[2])
        h = torch.cat([self._carried.h[:, :, :rows], carried.h[:, :, rows:]], dim=2)
        c = torch.cat([self._carried.c[:, :, :rows], carried.c[:, :, rows:]], dim=2)
        return LSTMState(h, c)

    def _carry(self, final: LSTMState) -> None:
        """Stateful mode: rows of this batch keep their final state; rows beyond it keep theirs."""
        final = LSTMState(final.h.detach(), final.c.detach())
        if self._carried is not None and self._carried.h.shape[2] > final.h.shape[2]:
            rows = final.h.shape[2]
            final = LSTMState(
                torch.cat([final.h, self._carried.h[:, :, rows:]], dim=2),
                torch.cat([final.c, self._carried.c[:, :, rows:]], dim=2),
            )
        self._carried = final

    def warm_state(self) -> LSTMState:
        """The fixed `warm` starting state (1 row): the final state after reading WARMUP_TEXT.

        Computed on first use and kept; `load_tf_arrays`, or moving or casting the module,
        makes the next use compute it again.
        """
        if self._warm is None or self._moved(self._warm):
            mode = self.state
            carried = self._carried
            self._state, self._carried = "stateful", None
            try:  # plain tensors even when called under inference_mode: training may use them
                with torch.inference_mode(False), torch.no_grad():
                    for line in WARMUP_TEXT.splitlines():
                        self._read_warmup_line(line.split())
                assert self._carried is not None
                self._warm = self._carried
            finally:
                self._state, self._carried = mode, carried
        return self._warm

    def _read_warmup_line(self, tokens: list[str]) -> None:
        """Run one line of WARMUP_TEXT (stateful mode: the state is carried)."""
        ids = torch.tensor([[token_to_char_ids(t) for t in tokens]])
        self(ids.to(self.char_cnn.char_embed.weight.device))

    def embed_sentences(
        self,
        sentences: Sequence[Sequence[str]],
        batch_size: int = 64,
        max_tokens: int = MAX_TOKENS,
        token_cache: dict[str, torch.Tensor] | None = None,
    ) -> list[torch.Tensor]:
        """All layers of each tokenized sentence: a list of (L+1, T_i, 2P) float tensors, in
        input order. The char-CNN runs once per distinct token string.

        # Parameters
        sentences: token lists.
        batch_size: in `stateful` mode, a batch's sentences: consecutive ones, in the given
            order.
        max_tokens: in `warm` and `stateless` mode, a batch's budget of padded tokens (BOS/EOS
            included); sentences are sorted by length.
        token_cache: token string → char-CNN vector, kept across calls (filled here).
        """
        cache: dict[str, torch.Tensor] = {} if token_cache is None else token_cache
        with torch.inference_mode():
            self._fill_token_cache(cache, {t for sentence in sentences for t in sentence})
            results: list[torch.Tensor | None] = [None] * len(sentences)
            for batch in self._batches(sentences, batch_size, max_tokens):
                layers, _ = self.embed_batch([sentences[i] for i in batch], cache)
                for row, index in enumerate(batch):
                    results[index] = layers[row, :, : len(sentences[index])].clone()
        return results  # type: ignore[return-value]

    def embed_batch(
        self, sentences: Sequence[Sequence[str]], token_cache: dict[str, torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """`forward` on token strings: layers (B, L+1, T, 2P) and mask (B, T) of one batch.

        # Parameters
        sentences: the batch's token lists.
        token_cache: token string → char-CNN vector; the char-CNN runs only for the strings
            missing from it (which it gains), so a word repeated across batches and calls is
            encoded once.
        """
        self._fill_token_cache(token_cache, {t for sentence in sentences for t in sentence})
        bos, eos = self._boundary_vectors()
        longest = max((len(sentence) for sentence in sentences), default=0)
        mask = torch.zeros(len(sentences), longest, dtype=torch.bool)
        for row, sentence in enumerate(sentences):
            mask[row, : len(sentence)] = True
        flat = [token_cache[t] for sentence in sentences for t in sentence]
        tokens = bos.new_zeros(len(sentences), longest, bos.shape[-1])  # (B, T, P)
        if flat:
            tokens[mask.to(tokens.device)] = torch.stack(flat)
        mask = mask.to(tokens.device)
        return self.contextualize(tokens, mask, bos, eos), mask

    def _batches(
        self, sentences: Sequence[Sequence[str]], batch_size: int, max_tokens: int
    ) -> list[list[int]]:
        """Sentence indices per batch (see `embed_sentences`)."""
        if batch_size < 1 or max_tokens < 1:
            raise ValueError(
                f"batch_size and max_tokens must be >= 1, got {batch_size}, {max_tokens}"
            )
        if self.state == "stateful":  # row r of each batch continues row r of the last one
            return length_batches([len(s) for s in sentences], batch_size=batch_size, order="given")
        padded = [len(sentence) + 2 for sentence in sentences]  # with BOS/EOS
        return length_batches(padded, max_tokens=max_tokens)

    def token_char_ids(self, token: str) -> tuple[int, ...]:
        """The 50 shifted character ids the char-CNN reads for a token.

        # Parameters
        token: the token string.
        """
        return token_to_char_ids(token)

    def _boundary_vectors(self) -> torch.Tensor:
        """Token vectors (2, P) of the sentence start and end."""
        return self._token_vectors(self.boundary_tokens)

    def _token_vectors(self, tokens: Sequence[str]) -> torch.Tensor:
        """Char-CNN vectors (N, P) of token strings, computed in length-sorted chunks."""
        weight = self.char_cnn.char_embed.weight
        device = weight.device
        widths = [len(token.encode("utf-8", "ignore")) for token in tokens]
        vectors = weight.new_empty(len(tokens), self.options.projection_dim)
        for part in length_batches(widths, batch_size=1024, order="shortest"):
            ids = torch.tensor([self.token_char_ids(tokens[i]) for i in part], device=device)
            vectors[torch.tensor(part, device=device)] = self.char_cnn(ids)
        return vectors

    def _fill_token_cache(self, cache: dict[str, torch.Tensor], tokens: set[str]) -> None:
        """Add the vectors of `tokens` missing from `cache`."""
        missing = sorted(t for t in tokens if t not in cache)
        if missing:
            cache.update(zip(missing, self._token_vectors(missing), strict=True))
