"""The biLM of an ELMoForManyLangs model: our `BiLM` reading its characters (and words).

Its char-CNN, highway, projection and LSTM are ours with converted weights (`ner.bilm.efml`); what
differs is how a token becomes ids (the model's own character dictionary, 48 characters at most,
its boundary characters) and, in word+char models, a learnt per-word vector added to the char-CNN's.
Tokens are embedded from their strings (`embed_sentences`, `embed_batch`), never from bilm-tf
character ids, so `forward(char_ids)` is refused.
"""

from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn

from ner.bilm.bilm import DEFAULT_STATE, BiLM
from ner.bilm.efml import BOUNDARIES, EfmlModel, EfmlVocabulary


class EfmlBiLM(BiLM):
    """A frozen ELMoForManyLangs biLM; all L + 1 layers, boundaries removed, as `BiLM` returns."""

    boundary_tokens = BOUNDARIES

    def __init__(self, model: EfmlModel, state: str = DEFAULT_STATE) -> None:
        super().__init__(model.options, state=state)
        self.vocabulary: EfmlVocabulary = model.vocabulary
        self.word_vectors: nn.Embedding | None = None
        if model.word_vectors is not None:
            self.word_vectors = nn.Embedding.from_pretrained(torch.from_numpy(model.word_vectors))
        self.load_tf_arrays(model.arrays)

    @classmethod
    def from_folder(cls, folder: str | Path, state: str = DEFAULT_STATE) -> "EfmlBiLM":
        """Load a model folder (config.json, char.dic, word.dic, token_embedder.pkl, encoder.pkl).

        # Parameters
        folder: the unpacked model, as the package's `Embedder(folder)` reads it.
        state: the LSTM state mode (`ner.bilm.bilm`); `stateless` reproduces the package's
            `Embedder` on its first batch.
        """
        return cls(EfmlModel.read(folder), state=state)

    def forward(self, char_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Refused: this model's tokens are not bilm-tf character ids (use `embed_sentences`)."""
        raise TypeError(
            f"{self.options.source}: an ELMoForManyLangs biLM embeds token strings "
            "(embed_sentences / embed_batch), not bilm-tf character ids"
        )

    def token_char_ids(self, token: str) -> tuple[int, ...]:
        """The token's 50 ids in the model's character dictionary (shifted +1)."""
        return self.vocabulary.char_ids(token)

    def _token_vectors(self, tokens: Sequence[str]) -> torch.Tensor:
        """Char-CNN vectors (N, P) plus, in word+char models, each token's word vector."""
        vectors = super()._token_vectors(tokens)
        if self.word_vectors is None:
            return vectors
        return vectors + self._word_part([self.vocabulary.word_id(t) for t in tokens], vectors)

    def _word_part(self, word_ids: list[int], like: torch.Tensor) -> torch.Tensor:
        """The projected word vectors (N, P) of word ids (a word+char model)."""
        assert self.word_vectors is not None
        return self.word_vectors(torch.tensor(word_ids, device=like.device)).to(like.dtype)

    def _read_warmup_line(self, tokens: list[str]) -> None:
        """Run one line of WARMUP_TEXT from its token strings."""
        self.embed_batch([tokens], {})
