"""The tensors of one padded batch of sentences, as the tagger model consumes them."""

from dataclasses import dataclass, fields, replace

import torch


@dataclass
class TaggerBatch:
    """Right-padded inputs of B sentences of at most T tokens.

    mask: (B, T) bool; words: (B, T) word ids or None; chars: (B, T, C) char ids or None;
    elmo: (B, L, T, D) frozen biLM layers or None; tags: (B, T) gold tag ids or None.
    """

    mask: torch.Tensor
    words: torch.Tensor | None = None
    chars: torch.Tensor | None = None
    elmo: torch.Tensor | None = None
    tags: torch.Tensor | None = None

    def to(self, device: torch.device | str) -> "TaggerBatch":
        """The same batch with every tensor on `device`."""
        moved = {
            f.name: value.to(device)
            for f in fields(self)
            if (value := getattr(self, f.name)) is not None
        }
        return replace(self, **moved)

    @property
    def num_tokens(self) -> int:
        """Real (unpadded) tokens in the batch."""
        return int(self.mask.sum())
