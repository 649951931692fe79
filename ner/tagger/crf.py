"""pytorch-crf's linear-chain CRF with hard tag-scheme constraints at decoding time."""

import torch
from torchcrf import CRF

from ner.tagger.constraints import TransitionMasks


class ConstrainedCRF(CRF):
    """A batch-first `torchcrf.CRF` whose Viterbi decoding never leaves the allowed transitions.

    Training (`forward`, the log-likelihood) is pytorch-crf's own and unconstrained, like
    AllenNLP's CRF: gold paths are valid, and the constraints only matter for the argmax.
    Disallowed start/transition/end scores are set to -inf in `decode`, so an invalid sequence
    can never win. `decode` is a vectorised Viterbi (backtracking with `gather`) returning the
    best paths and their scores.
    """

    def __init__(self, num_tags: int, masks: TransitionMasks | None = None) -> None:
        super().__init__(num_tags, batch_first=True)
        allowed = masks or TransitionMasks(
            start=torch.ones(num_tags, dtype=torch.bool),
            transitions=torch.ones(num_tags, num_tags, dtype=torch.bool),
            end=torch.ones(num_tags, dtype=torch.bool),
        )
        if allowed.transitions.shape != (num_tags, num_tags):
            raise ValueError(
                f"transition mask {tuple(allowed.transitions.shape)} does not fit {num_tags} tags"
            )
        self.register_buffer("allowed_start", allowed.start.clone(), persistent=False)
        self.register_buffer("allowed_transitions", allowed.transitions.clone(), persistent=False)
        self.register_buffer("allowed_end", allowed.end.clone(), persistent=False)

    def constrained_scores(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(start (K,), transitions (K, K), end (K,)) with disallowed entries at -inf."""
        minus_inf = float("-inf")
        return (
            self.start_transitions.masked_fill(~self.allowed_start, minus_inf),
            self.transitions.masked_fill(~self.allowed_transitions, minus_inf),
            self.end_transitions.masked_fill(~self.allowed_end, minus_inf),
        )

    def _check_shapes(self, emissions: torch.Tensor, mask: torch.Tensor) -> None:
        """ValueError unless emissions are (B, T, K) and the mask (B, T) with every row's first
        token on: the checks, and the messages, of pytorch-crf's own decoding."""
        if emissions.dim() != 3:
            raise ValueError(f"emissions must have dimension of 3, got {emissions.dim()}")
        if emissions.size(2) != self.num_tags:
            raise ValueError(
                f"expected last dimension of emissions is {self.num_tags}, got {emissions.size(2)}"
            )
        if emissions.shape[:2] != mask.shape:
            raise ValueError(
                "the first two dimensions of emissions and mask must match, "
                f"got {tuple(emissions.shape[:2])} and {tuple(mask.shape)}"
            )
        if not mask[:, 0].all():
            raise ValueError("mask of the first timestep must all be on")

    @torch.no_grad()
    def viterbi(
        self, emissions: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Best tag ids (B, T) (0 at padding) and their path scores (B,).

        emissions: (B, T, K); mask: (B, T) bool, right-padded, every row at least one token.
        """
        self._check_shapes(emissions, mask)
        start, transitions, end = self.constrained_scores()
        mask = mask.bool()
        batch_size, length, _ = emissions.shape
        # score: (B, K) best score of a path ending in each tag
        score = start + emissions[:, 0]
        backpointers = []
        for t in range(1, length):
            # (B, K_prev, 1) + (K_prev, K) + (B, 1, K) → max over K_prev → (B, K)
            best, previous = (score.unsqueeze(2) + transitions + emissions[:, t].unsqueeze(1)).max(
                1
            )
            step = mask[:, t].unsqueeze(1)
            score = torch.where(step, best, score)
            # Padding steps point each tag to itself so that the backtrack passes through them.
            identity = torch.arange(self.num_tags, device=emissions.device).expand_as(previous)
            backpointers.append(torch.where(step, previous, identity))
        best_score, last = (score + end).max(1)
        # tags: (B, T), filled from the end; padded steps copy the final tag and are zeroed below.
        tags = emissions.new_zeros((batch_size, length), dtype=torch.long)
        tags[:, -1] = last
        for t in range(length - 2, -1, -1):
            last = backpointers[t].gather(1, last.unsqueeze(1)).squeeze(1)
            tags[:, t] = last
        return tags.masked_fill(~mask, 0), best_score

    def decode(self, emissions: torch.Tensor, mask: torch.Tensor | None = None) -> list[list[int]]:
        """Constrained Viterbi paths as lists of tag ids (one list per unpadded sentence)."""
        if mask is None:
            mask = emissions.new_ones(emissions.shape[:2], dtype=torch.bool)
        tags, _ = self.viterbi(emissions, mask)
        lengths = mask.long().sum(1).tolist()
        return [row[:n] for row, n in zip(tags.tolist(), lengths, strict=True)]
