"""The biLM output layer: sampled softmax for training, full softmax for held-out perplexity.

Shared by both directions as in bilm-tf: W (V, P) ~ N(0, 1/√P), b = 0. Training draws one set of
negative candidates per batch from a log-uniform (Zipf) distribution over the frequency-sorted
vocabulary, P(k) = log((k + 2) / (k + 1)) / log(V + 1), and corrects every logit by the log of its
expected count (`tf.nn.sampled_softmax_loss` with accidental hits removed).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


class LogUniformSampler:
    """Draws candidate ids from the Zipf distribution over `vocab_size` frequency-sorted ids."""

    def __init__(self, vocab_size: int) -> None:
        self.vocab_size = vocab_size
        self.log_range = math.log(vocab_size + 1)

    def sample(self, num: int, generator: torch.Generator) -> torch.Tensor:
        """`num` ids with replacement by inverse CDF: floor(exp(u·log(V+1))) − 1. Shape (num,)."""
        uniform = torch.rand(num, generator=generator, dtype=torch.float64)
        ids = torch.exp(uniform * self.log_range).floor().long() - 1
        return ids.clamp_(0, self.vocab_size - 1)

    def log_probability(self, ids: torch.Tensor) -> torch.Tensor:
        """log P(id) under the sampler, same shape as `ids` (float32)."""
        ids = ids.double()
        return (torch.log1p(1.0 / (ids + 1.0)) / self.log_range).log().float()


def accidental_hits(
    targets: torch.Tensor, negatives: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """(row, column) of every negative equal to its row's target: targets (N,), negatives (S,).

    Hits are rare (a few per row at most), so they are found by binary search in the sorted
    negatives instead of comparing all N × S pairs.
    """
    ordered, order = torch.sort(negatives)  # (S,)
    first = torch.searchsorted(ordered, targets)  # (N,)
    counts = torch.searchsorted(ordered, targets, right=True) - first  # (N,) hits per row
    rows = torch.repeat_interleave(torch.arange(len(targets), device=targets.device), counts)
    starts = torch.repeat_interleave(first - (torch.cumsum(counts, 0) - counts), counts)
    return rows, order[starts + torch.arange(len(rows), device=targets.device)]


class SoftmaxOutput(nn.Module):
    """Output embeddings and bias of the shared softmax over `vocab_size` targets of width `dim`."""

    def __init__(self, vocab_size: int, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(vocab_size, dim) / math.sqrt(dim))  # (V, P)
        self.bias = nn.Parameter(torch.zeros(vocab_size))  # (V,)
        self.sampler = LogUniformSampler(vocab_size)

    @property
    def vocab_size(self) -> int:
        return self.weight.shape[0]

    def sampled_loss(
        self, hidden: torch.Tensor, targets: torch.Tensor, negatives: torch.Tensor
    ) -> torch.Tensor:
        """Per-position sampled-softmax loss (N,) of hidden (N, P), targets (N,), negatives (S,)."""
        rows = torch.cat([targets, negatives])  # one gather: one dense gradient buffer for W
        weight, bias = self.weight[rows], self.bias[rows]  # (N + S, P), (N + S,)
        log_expected = self.sampler.log_probability(rows) + math.log(len(negatives))  # (N + S,)
        count = len(targets)
        true_logit = (hidden * weight[:count]).sum(-1) + bias[:count] - log_expected[:count]  # (N,)
        sampled = torch.addmm(bias[count:] - log_expected[count:], hidden, weight[count:].T)
        sampled = sampled.float()  # under autocast a bfloat16 product: the loss is float32
        rows, columns = accidental_hits(targets, negatives)
        with torch.no_grad():  # in place, unrecorded: no copy of the (N, S) logits either way
            # The matmul's backward does not read its output, and logsumexp's backward,
            # exp(logit − result), is 0 at a −inf logit: exactly the gradient of the masked loss.
            sampled[rows, columns] = float("-inf")  # (N, S)
        # −log softmax([true, sampled])[0], without materialising the (N, 1 + S) logits.
        return torch.logaddexp(true_logit, torch.logsumexp(sampled, dim=1)) - true_logit

    def full_nll(self, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Summed NLL of targets (N,) under the full softmax of hidden (N, P)."""
        logits = F.linear(hidden, self.weight, self.bias)  # (N, V)
        return F.cross_entropy(logits, targets, reduction="sum")
