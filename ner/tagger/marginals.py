"""Forward-backward over a linear-chain CRF: token marginals and exact span probabilities.

pytorch-crf computes the partition function but exposes no posteriors, and an entity's confidence
should be the probability the CRF itself gives it, not a softmax over emissions. `CrfPosterior` runs
the forward and backward recursions in log space over (possibly constrained, -inf) start,
transition and end scores, so disallowed paths get probability 0 exactly as in Viterbi decoding.
"""

import numpy as np
import torch


class CrfPosterior:
    """Forward (alpha) and backward (beta) log-scores of a batch of right-padded sentences.

    ``alpha[b, t, k]``: log-sum of the scores of all prefixes ``y_0..y_t`` with ``y_t = k``,
    emission ``t`` included. ``beta[b, t, k]``: log-sum over all suffixes after ``y_t = k``
    (emission ``t`` excluded, end score included). ``log_partition[b]``: log Z.
    """

    def __init__(
        self,
        emissions: torch.Tensor,
        mask: torch.Tensor,
        start: torch.Tensor,
        transitions: torch.Tensor,
        end: torch.Tensor,
    ) -> None:
        """emissions: (B, T, K); mask: (B, T) bool, right-padded, each row >= 1 token;
        start, end: (K,); transitions: (K, K) from → to."""
        if emissions.dim() != 3 or mask.shape != emissions.shape[:2]:
            raise ValueError(
                f"expected emissions (B, T, K) and mask (B, T), got {tuple(emissions.shape)} "
                f"and {tuple(mask.shape)}"
            )
        if not bool(mask[:, 0].all()):
            raise ValueError("every sentence needs at least one token (mask[:, 0] must be true)")
        mask = mask.bool()
        self.emissions, self.mask = emissions, mask
        self.start, self.transitions, self.end = start, transitions, end
        self.lengths = mask.long().sum(1)  # (B,)
        length = emissions.shape[1]
        # alpha: forward recursion; padded steps carry the last real column forward.
        alphas = [start + emissions[:, 0]]  # each (B, K)
        for t in range(1, length):
            # (B, K_prev, 1) + (K_prev, K) → logsumexp over K_prev → (B, K), plus emission t
            step = torch.logsumexp(alphas[-1].unsqueeze(2) + transitions, dim=1) + emissions[:, t]
            alphas.append(torch.where(mask[:, t].unsqueeze(1), step, alphas[-1]))
        # beta: backward recursion; the last real step (and padding) holds the end scores.
        betas = [end.expand_as(emissions[:, 0])]
        for t in range(length - 2, -1, -1):
            # (K, K_next) + (B, 1, K_next) → logsumexp over K_next → (B, K)
            following = emissions[:, t + 1] + betas[-1]
            step = torch.logsumexp(transitions + following.unsqueeze(1), dim=2)
            betas.append(torch.where(mask[:, t + 1].unsqueeze(1), step, end.expand_as(step)))
        self.alpha = torch.stack(alphas, dim=1)  # (B, T, K)
        self.beta = torch.stack(betas[::-1], dim=1)  # (B, T, K)
        last = (self.lengths - 1).view(-1, 1, 1).expand(-1, 1, emissions.shape[2])
        self.log_partition = torch.logsumexp(
            self.alpha.gather(1, last).squeeze(1) + end, dim=1
        )  # (B,)
        self._arrays = tuple(
            x.detach().cpu().double().numpy()
            for x in (start, transitions, end, emissions, self.alpha, self.beta)
        )
        self._log_partition = self.log_partition.detach().cpu().double().numpy()

    def token_marginals(self) -> torch.Tensor:
        """P(y_t = k | x) as (B, T, K); rows at padding are meaningless."""
        return (self.alpha + self.beta - self.log_partition.view(-1, 1, 1)).exp()

    def span_probability(
        self,
        sentence: int,
        start: int,
        tags: list[int],
        previous_allowed: np.ndarray | None = None,
        next_allowed: np.ndarray | None = None,
    ) -> float:
        """P(y_start .. y_start+len(tags)-1 = tags, y_start-1 ∈ previous_allowed,
        y_end ∈ next_allowed | x) for one sentence: the exact probability that the CRF labels this
        token span with these tags and with neighbours that do not extend the chunk.

        previous_allowed, next_allowed: (K,) bool masks of neighbour tags (None = any tag).
        """
        length = int(self.lengths[sentence])
        stop = start + len(tags) - 1  # inclusive
        if not tags or start < 0 or stop >= length:
            raise ValueError(f"span {start}..{stop} is outside sentence {sentence} of {length}")
        # NumPy on (K,) vectors: per-span torch calls would cost more than the arithmetic.
        start_scores, transitions, end_scores, emissions, alpha, beta = self._arrays
        emissions, ids = emissions[sentence], np.asarray(tags)
        if start == 0:
            left = start_scores[ids[0]]
        else:
            incoming = alpha[sentence, start - 1] + transitions[:, ids[0]]  # (K,)
            if previous_allowed is not None:
                incoming = np.where(previous_allowed, incoming, -np.inf)
            left = np.logaddexp.reduce(incoming)
        inner = (
            emissions[np.arange(start, stop + 1), ids].sum() + transitions[ids[:-1], ids[1:]].sum()
        )
        if stop == length - 1:
            right = end_scores[ids[-1]]
        else:
            outgoing = transitions[ids[-1]] + emissions[stop + 1] + beta[sentence, stop + 1]  # (K,)
            if next_allowed is not None:
                outgoing = np.where(next_allowed, outgoing, -np.inf)
            right = np.logaddexp.reduce(outgoing)
        return float(np.exp(left + inner + right - self._log_partition[sentence]))
