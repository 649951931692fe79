"""Log-uniform sampler and the sampled / full softmax."""

import math

import torch
from torch.nn import functional as F

from ner.pretrain.softmax import LogUniformSampler, SoftmaxOutput, accidental_hits


def test_log_uniform_probabilities_sum_to_one_and_match_samples() -> None:
    sampler = LogUniformSampler(1000)
    probability = sampler.log_probability(torch.arange(1000)).double().exp()
    assert math.isclose(probability.sum().item(), 1.0, rel_tol=1e-5)
    samples = sampler.sample(200_000, torch.Generator().manual_seed(0))
    assert samples.min() >= 0 and samples.max() < 1000
    observed = torch.bincount(samples, minlength=1000).double() / len(samples)
    assert torch.allclose(observed[:5], probability[:5], rtol=0.03)


def test_sampled_loss_is_the_corrected_softmax_over_true_and_sampled() -> None:
    torch.manual_seed(0)
    output = SoftmaxOutput(50, 6)
    hidden, targets = torch.randn(4, 6), torch.tensor([3, 7, 3, 40])
    negatives = torch.tensor([0, 3, 9, 9, 21])
    loss = output.sampled_loss(hidden, targets, negatives)
    log_q = output.sampler.log_probability(torch.arange(50)) + math.log(5)
    logits = hidden @ output.weight.T + output.bias - log_q  # (4, 50)
    for row, target in enumerate(targets.tolist()):
        candidates = [target] + [n for n in negatives.tolist() if n != target]
        expected = -F.log_softmax(logits[row, candidates], dim=0)[0]
        assert torch.allclose(loss[row], expected, atol=1e-5)


def test_full_nll_is_summed_cross_entropy() -> None:
    torch.manual_seed(1)
    output = SoftmaxOutput(30, 5)
    hidden, targets = torch.randn(7, 5), torch.randint(0, 30, (7,))
    manual = -F.log_softmax(hidden @ output.weight.T + output.bias, dim=1)[torch.arange(7), targets]
    assert torch.allclose(output.full_nll(hidden, targets), manual.sum(), atol=1e-5)


def test_accidental_hits_are_every_negative_equal_to_the_target() -> None:
    generator = torch.Generator().manual_seed(0)
    for _ in range(20):
        targets = torch.randint(0, 20, (30,), generator=generator)
        negatives = torch.randint(0, 20, (15,), generator=generator)  # with repeats
        rows, columns = accidental_hits(targets, negatives)
        expected = (targets[:, None] == negatives[None, :]).nonzero().tolist()
        assert sorted(zip(rows.tolist(), columns.tolist(), strict=True)) == sorted(
            map(tuple, expected)
        )


def test_sampled_loss_gradients_equal_those_of_explicitly_masked_logits() -> None:
    torch.manual_seed(0)
    output = SoftmaxOutput(50, 8)
    hidden = torch.randn(40, 8, requires_grad=True)
    targets, negatives = torch.randint(0, 50, (40,)), torch.randint(0, 50, (30,))
    assert (targets[:, None] == negatives[None, :]).sum() > 10  # many accidental hits
    output.sampled_loss(hidden, targets, negatives).sum().backward()
    fast = [hidden.grad.clone(), output.weight.grad.clone(), output.bias.grad.clone()]
    hidden.grad = output.weight.grad = output.bias.grad = None
    rows = torch.cat([targets, negatives])
    weight, bias = output.weight[rows], output.bias[rows]
    log_expected = output.sampler.log_probability(rows) + math.log(len(negatives))
    true = (hidden * weight[:40]).sum(-1) + bias[:40] - log_expected[:40]
    sampled = hidden @ weight[40:].T + (bias[40:] - log_expected[40:])
    sampled = sampled.masked_fill(targets[:, None] == negatives[None, :], float("-inf"))
    (-F.log_softmax(torch.cat([true[:, None], sampled], 1), 1)[:, 0]).sum().backward()
    for got, expected in zip(
        fast, [hidden.grad, output.weight.grad, output.bias.grad], strict=True
    ):
        assert torch.allclose(got, expected, atol=1e-5)
