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

    def span_probabilities(
        self,
        paths: np.ndarray,
        spans: np.ndarray,
        previous_allowed: np.ndarray,
        next_allowed: np.ndarray,
    ) -> np.ndarray:
        """For each span (row b, tokens s..e-1): P(y_s..y_e-1 = paths[b, s:e], y_s-1 ∈
        previous_allowed, y_e ∈ next_allowed | x), the exact probability that the CRF gives
        these tags to the span with neighbours that do not extend the chunk.

        paths: (B, T) tag ids (only the spans' positions are read); spans: (N, 3) int rows
        (b, s, e), e exclusive; previous_allowed, next_allowed: (N, K) bool neighbour masks.
        Returns (N,) probabilities. All spans are scored at once in NumPy.
        """
        start_scores, transitions, end_scores, emissions, alpha, beta = self._arrays
        lengths = self.lengths.cpu().numpy()
        rows, starts, ends = spans.T if len(spans) else np.zeros((3, 0), dtype=np.int64)
        if np.any(starts < 0) or np.any(ends > lengths[rows]) or np.any(starts >= ends):
            raise ValueError(f"spans {spans.tolist()} do not fit sentences of {lengths.tolist()}")
        # step[b, t]: transition into y_t plus emission of y_t along the path
        emitted = np.take_along_axis(emissions, paths[..., None], axis=2)[..., 0]  # (B, T)
        step = emitted.copy()
        step[:, 1:] += transitions[paths[:, :-1], paths[:, 1:]]
        # inner: steps s+1 .. e-1 of each span (not a cumsum: -inf outside spans must not leak)
        positions = np.arange(paths.shape[1])
        inside = (positions > starts[:, None]) & (positions < ends[:, None])  # (N, T)
        inner = np.where(inside, step[rows], 0.0).sum(axis=1)
        first, last = paths[rows, starts], paths[rows, ends - 1]  # (N,)
        # left: start score, or every allowed previous tag's forward score into y_s
        before = alpha[rows, np.maximum(starts - 1, 0)] + transitions[:, first].T  # (N, K)
        before = np.logaddexp.reduce(np.where(previous_allowed, before, -np.inf), axis=1)
        left = np.where(starts == 0, start_scores[first], before) + emitted[rows, starts]
        # right: end score, or every allowed next tag's score and backward score
        following = np.minimum(ends, paths.shape[1] - 1)
        after = transitions[last] + emissions[rows, following] + beta[rows, following]  # (N, K)
        after = np.logaddexp.reduce(np.where(next_allowed, after, -np.inf), axis=1)
        right = np.where(ends == lengths[rows], end_scores[last], after)
        return np.exp(left + inner + right - self._log_partition[rows])
