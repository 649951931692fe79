"""The tensors of one padded batch of sentences, as the tagger model consumes them."""

from dataclasses import dataclass, fields, replace

import torch

from ner.common.batching import length_batches


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

    def select(self, rows: torch.Tensor, length: int) -> "TaggerBatch":
        """The sentences at `rows` (1-D indices), padded to `length` tokens."""
        picked = {
            f.name: value.index_select(0, rows)
            for f in fields(self)
            if (value := getattr(self, f.name)) is not None
        }
        # Time is dim 1 of every tensor except elmo (B, L, T, D).
        trimmed = {
            name: value[:, :, :length] if name == "elmo" else value[:, :length]
            for name, value in picked.items()
        }
        return TaggerBatch(**trimmed)

    def split(self, max_tokens: int) -> list["TaggerBatch"]:
        """The batch as row chunks of at most `max_tokens` padded positions each (rows × the
        chunk's longest sentence; a longer sentence gets a chunk of its own), or [self] when it
        fits. Rows go longest first, so each chunk is cut to its first row's length and holds
        as many rows as fit: training memory grows with the padded size of what one pass sees.
        """
        lengths = self.mask.sum(dim=1)  # (B,)
        if lengths.numel() * int(lengths.max()) <= max_tokens:
            return [self]
        counts = lengths.tolist()
        return [
            self.select(torch.tensor(rows, device=lengths.device), max(counts[rows[0]], 1))
            for rows in length_batches(counts, max_tokens=max_tokens)
        ]
