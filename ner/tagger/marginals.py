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

    def chunk_probabilities(
        self, chunks: np.ndarray, members: np.ndarray, continues: np.ndarray
    ) -> np.ndarray:
        """For each chunk (row b, tokens s..e-1): the probability that tokens s..e-1 form exactly
        one chunk of its type, summed over every tag sequence that decodes to it, e.g. both
        ``I-X I-X`` and ``B-X I-X`` in IOB1, or an unconstrained ``I-X E-X`` in BIOES.

        chunks: (N, 3) int rows (b, s, e), e exclusive; members: (N, K) bool, the tags of the
        chunk's type; continues: (K, K) bool, ``continues[i, j]``: tag j after tag i extends
        i's chunk (see `ner.tagger.constraints.continuation_mask`). A chunk is present when y_s
        is a member that does not continue y_s-1, every later tag continues its predecessor,
        and y_e (if any) does not. Returns (N,) probabilities; spans are scored at once in NumPy.
        """
        start_scores, transitions, end_scores, emissions, alpha, beta = self._arrays
        lengths = self.lengths.cpu().numpy()
        rows, starts, ends = chunks.T if len(chunks) else np.zeros((3, 0), dtype=np.int64)
        if np.any(starts < 0) or np.any(ends > lengths[rows]) or np.any(starts >= ends):
            raise ValueError(f"spans {chunks.tolist()} do not fit sentences of {lengths.tolist()}")
        # A chunk's score is -inf outside its type's tags, so the recursion runs over those M
        # tags only (M = 4 of K = 17 for CoNLL BIOES): the same finite terms, far fewer -inf ones.
        # tags (N, M): each chunk's member tag ids, ascending, padded; real (N, M): not padding.
        counts = members.sum(axis=1)
        tags = np.argsort(~members, axis=1, kind="stable")[:, : max(int(counts.max(initial=1)), 1)]
        real = np.arange(tags.shape[1]) < counts[:, None]
        opening = np.where(continues, -np.inf, transitions)  # (K, K) moves that open a chunk
        inside = np.where(continues, transitions, -np.inf)  # (K, K) moves that extend one
        # (N, M, M) moves that extend a chunk, from member to member
        inside = np.where(
            real[:, :, None] & real[:, None, :], inside[tags[:, :, None], tags[:, None, :]], -np.inf
        )
        emitted = emissions[rows[:, None], :, tags]  # (N, M, T): the member tags' emissions
        # score (N, M): prefixes up to y_s = k with k opening the chunk, emission s included
        before = alpha[rows, np.maximum(starts - 1, 0)]  # (N, K)
        entered = _log_matmul(before, opening[:, tags].transpose(1, 0, 2), batched=True)
        score = np.where(starts[:, None] == 0, start_scores[tags], entered)
        score = np.where(real, score + _at(emitted, starts), -np.inf)
        for offset in range(1, int((ends - starts).max(initial=1))):
            position = starts + offset
            grows = position < ends
            at = np.minimum(position, emissions.shape[1] - 1)
            extended = _log_matmul(score, inside, batched=True) + _at(emitted, at)
            score = np.where(grows[:, None], extended, score)
        # right: the end score, or a next tag that does not extend the chunk (and what follows)
        following = np.minimum(ends, emissions.shape[1] - 1)
        onward = emissions[rows, following] + beta[rows, following]  # (N, K)
        after = _log_matmul(score, opening[tags] + onward[:, None, :], batched=True)  # (N, K)
        closing = _logsumexp(score + end_scores[tags], axis=1)
        right = np.where(ends == lengths[rows], closing, _logsumexp(after, axis=1))
        return np.exp(right - self._log_partition[rows])


def _at(emitted: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Each chunk's member emissions (N, M, T) at its own position (N,) → (N, M)."""
    return np.take_along_axis(emitted, positions[:, None, None], axis=2)[:, :, 0]


def _logsumexp(values: np.ndarray, axis: int) -> np.ndarray:
    """log Σ exp over `axis`, -inf where every term is -inf."""
    peak = np.max(values, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    with np.errstate(divide="ignore"):
        total = np.log(np.exp(values - peak).sum(axis=axis, keepdims=True)) + peak
    return np.squeeze(total, axis=axis)


def _log_matmul(vectors: np.ndarray, matrix: np.ndarray, batched: bool = False) -> np.ndarray:
    """Log-space vector-matrix products: (N, K) with (K, J) → (N, J), or with (N, K, J) when
    `batched`: out[n, j] = log Σ_k exp(vectors[n, k] + matrix[(n,) k, j])."""
    terms = vectors[:, :, None] + (matrix if batched else matrix[None])
    return _logsumexp(terms, axis=1)
